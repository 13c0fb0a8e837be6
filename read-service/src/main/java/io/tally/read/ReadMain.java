package io.tally.read;

import com.azure.cosmos.CosmosAsyncClient;
import io.tally.config.ConfigException;
import io.tally.config.Help;
import io.tally.cosmos.CosmosClients;
import io.tally.rules.GradeRules;
import io.tally.rules.state.RulesStateStore;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Hooks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * Starts the read API and keeps it up until the process is stopped. Only wires: settings, grades,
 * Cosmos client (warmed up before the port opens), routes, metrics, HTTP server. The blocking calls
 * here (container creation, warm-up, {@code bindNow}) run on the starting thread, never an event loop.
 */
public final class ReadMain implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReadMain.class);

    private final ReadSettings settings;
    private CosmosAsyncClient cosmos;
    private DisposableServer server;
    private BucketRoutes routes;
    private RulesWatch rules;

    static final String USAGE = """
            Usage: ./tally serve [--key=value ...]      (or: java -jar read-service.jar [--key=value ...])

            Runs read-service until stopped: GET /v1/buckets/{pk}/{id}, /v1/buckets/{pk}?grade&unit&from[&to],
            /v1/rollups/{pk}?grade&unit&last=N, /v1/features/{pk}, /v1/rules, /health/live, /health/ready, /metrics
            and /openapi.json (docs/read-api.md). Exit status 2 for invalid settings.
            """;

    public ReadMain(ReadSettings settings) {
        this.settings = settings;
    }

    public static void main(String[] args) {
        if (Help.requested(args)) {
            System.out.print(Help.text(USAGE, ReadSettings.all()));
            return;
        }
        ReadSettings settings;
        try {
            settings = ReadSettings.load(args, System.getenv());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.err.println("(./tally serve --help lists every setting)");
            System.exit(2);
            return;
        }
        // A Cosmos call cancelled by the request timeout may still fail inside the SDK afterwards; Reactor would log
        // that at ERROR with the full diagnostics. The request was already answered (504): keep it at DEBUG.
        Hooks.onErrorDropped(e -> log.debug("error after cancellation: {}", e.getClass().getSimpleName()));
        ReadMain app = new ReadMain(settings);
        Runtime.getRuntime().addShutdownHook(new Thread(app::shutdown, "read-shutdown"));
        app.start();
        app.server.onDispose().block();
    }

    public ReadMain start() {
        // Loaded even when a record will be found: a bad setting fails the start, not a later fallback.
        GradeRules file = GradeRules.load(settings.rulesLocation());
        cosmos = ReadCosmos.build(settings.cosmos(), settings.reads());
        var container = CosmosClients.container(cosmos, settings.cosmos());
        CosmosClients.warmUp(container, settings.cosmos()); // cosmos.warm-up: connections and caches, as ingest-app does
        BucketStore store = new BucketStore(container);
        ReadCosmos.warmUp(store, settings.reads());
        RulesStateStore record = new RulesStateStore(container);
        Clock clock = Clock.systemUTC();
        rules = new RulesWatch(() -> record.read().map(RulesStateStore.Stored::state), RulesView.ofFile(file, settings.rulesLocation()),
                settings.rulesRefresh(), clock);
        rules.refresh(); // before the port opens; on failure the file is answered and readiness waits for the record
        rules.start();
        ApiKeyAuth auth = new ApiKeyAuth(settings.auth());
        routes = new BucketRoutes(store, new Requests(settings.api(), clock), rules, auth,
                new ReadMetrics(), settings.api(), settings.reads().readyTimeout(), OpenApi.load(), clock);
        server = HttpServer.create().host(settings.host()).port(settings.port())
                // Room for a continuation token (up to 4 KB) plus the other parameters in the request line.
                .httpRequestDecoder(spec -> spec.maxInitialLineLength(16 * 1024))
                .idleTimeout(Duration.ofSeconds(120))
                .route(routes::register)
                .bindNow();
        log.info("read-service listening on http://{}:{} (rules from the {}, API keys {}, {})", settings.host(), server.port(),
                rules.current().source(), auth.enabled() ? "required" : "off", settings.cosmos());
        return this;
    }

    /**
     * A new Cosmos client configured exactly as the service's own (pool, end-to-end policy, retries, diagnostics);
     * the caller closes it. For measuring the raw SDK call next to the API (ReadServiceBench).
     */
    public static CosmosAsyncClient cosmosClient(ReadSettings settings) {
        return ReadCosmos.build(settings.cosmos(), settings.reads());
    }

    public int port() {
        return server.port();
    }

    /**
     * A stop signal: readiness turns 503 at once, requests keep being answered for read.shutdown.drain.ms (load
     * balancers see the 503 and route elsewhere), then the port closes and requests in flight finish.
     */
    public void shutdown() {
        beginShutdown();
        long drainMs = settings.shutdownDrain().toMillis();
        if (drainMs > 0) {
            log.info("read-service stopping: /health/ready is 503; closing the port in {} ms", drainMs);
            try {
                Thread.sleep(drainMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        close();
    }

    /** Readiness answers 503 from now on; everything else is still served. */
    public void beginShutdown() {
        if (routes != null) routes.stopping();
    }

    @Override
    public void close() {
        if (server != null) server.disposeNow();
        if (rules != null) rules.close();
        if (cosmos != null) cosmos.close();
    }
}
