package io.tally.read;

import com.azure.cosmos.CosmosAsyncClient;
import io.tally.config.ConfigException;
import io.tally.cosmos.CosmosClients;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** Starts the read API and keeps it up until the process is stopped. */
public final class ReadMain implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReadMain.class);

    private final ReadSettings settings;
    private CosmosAsyncClient cosmos;
    private DisposableServer server;

    public ReadMain(ReadSettings settings) {
        this.settings = settings;
    }

    public static void main(String[] args) {
        ReadSettings settings;
        try {
            settings = ReadSettings.load(args, System.getenv());
        } catch (ConfigException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        ReadMain app = new ReadMain(settings);
        Runtime.getRuntime().addShutdownHook(new Thread(app::close, "read-shutdown"));
        app.start();
        app.server.onDispose().block();
    }

    public ReadMain start() {
        cosmos = CosmosClients.build(settings.cosmos());
        BucketRoutes routes = new BucketRoutes(CosmosClients.container(cosmos, settings.cosmos()));
        server = HttpServer.create().host(settings.host()).port(settings.port())
                .route(routes::register)
                .bindNow();
        log.info("read-service listening on http://{}:{}", settings.host(), server.port());
        return this;
    }

    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        if (server != null) server.disposeNow();
        if (cosmos != null) cosmos.close();
    }
}
