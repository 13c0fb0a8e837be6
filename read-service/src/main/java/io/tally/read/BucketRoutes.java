package io.tally.read;

import com.azure.cosmos.CosmosException;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.model.Aggregate;
import io.tally.model.BucketDocument;
import io.tally.model.BucketId;
import io.tally.model.EntityBucket;
import io.tally.model.GradeId;
import io.tally.model.TimeUnit;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The HTTP routes. Non-blocking end to end: each handler validates on the event loop (pure CPU), then
 * returns the Cosmos Mono; results are mapped and serialized on the thread that delivers them and written
 * back through Netty, which hops to the channel's event loop itself. Nothing here blocks or sleeps.
 * Every /v1 request is bounded by {@code read.request-timeout.ms} (default 1 s; 504 beyond it).
 *
 * <p>A grade's bucket is answered while the grade's own rule retains it ({@link GradeRetention}), whatever the ttl of
 * the entity bucket that holds it (the longest retention of its grades).
 *
 * <p>Grades, units and what stored values count come from the deployment's rules record when the container holds one
 * ({@link RulesWatch}): each request takes one snapshot ({@link RulesView}) and answers from it alone. Values of a
 * grade's older version read as absent; a bucket of a grade whose history is still being counted in, and that starts
 * before live counting did, is answered with {@code "complete": false} (a roll-up over one, and the feature vector's
 * grades, likewise). A complete bucket carries no such field.
 *
 * <p>{pk} and {id} are percent-encoded path segments ({@code demo-shop%7Ccust-1}), matched still encoded and
 * decoded afterwards ({@link PercentDecoder}), so an encoded {@code /} in a qualifier value or entity key stays inside
 * its segment. Errors are RFC 9457 problem documents ({@code application/problem+json}); see {@link Problem} for the
 * status of each failure.
 *
 * <ul>
 *   <li>{@code GET /v1/rules} — the rules answered with: the record's generation and each grade's version and
 *       completeness, or the rules file's grades: 200, 400.</li>
 *   <li>{@code GET /v1/buckets/{pk}/{id}} — one bucket by point read: 200 document, 400, 404.</li>
 *   <li>{@code GET /v1/buckets/{pk}?grade&unit&from[&to][&qualifier][&limit][&continuation]} — the buckets of one
 *       grade and unit whose start lies in [from, to), oldest first, one ordered in-partition query (two at once for
 *       an unqualified minute grade, see {@link BucketStore}); pages of
 *       {@code limit} (default and maximum read.max-range-buckets) with an opaque {@code continuation}: 200, 400.</li>
 *   <li>{@code GET /v1/rollups/{pk}?grade&unit&(last=N | from[&to])[&qualifier]} — sum, count, min and max over the
 *       last N units (the current one included) or a time range: 200 (zeros when nothing was recorded), 400.</li>
 *   <li>{@code GET /v1/features/{pk}[?at]} — the current bucket of every grade and unit of the entity (qualifier grades
 *       included, except those of a rule that spilled in that bucket, named under {@code spilled}), one point read per
 *       unit: 200, 400.</li>
 *   <li>{@code GET /health/live} (200 while the process runs), {@code GET /health/ready} (200 when Cosmos answers a
 *       probe read within read.ready.timeout.ms, else 503), {@code GET /metrics} (Prometheus),
 *       {@code GET /openapi.json}, {@code GET /openapi.yaml}; once shutdown has begun /health/ready is 503.</li>
 * </ul>
 * Another method than GET on one of these paths is 405 with {@code Allow: GET}; any other path is 404.
 * All /v1 routes may answer 401 (API key on), 503 with Retry-After (Cosmos throttling or unavailable, or more than
 * read.max-in-flight-requests requests in flight) and 504.
 */
final class BucketRoutes {
    static final String JSON_TYPE = "application/json";
    static final String PROBLEM_TYPE = "application/problem+json";
    /**
     * Decimals are written in plain notation with the scale they have (50.00, never 5E+1): exponent notation is valid
     * JSON, but a client reading amounts as text or decimals should get an amount back as it reads in a ledger. Turning
     * a document into a tree strips trailing zeros by default, which is what made 5E+1 out of 50.00.
     */
    static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
            .configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false);

    private final BucketStore store;
    private final Requests requests;
    private final RulesWatch rules;
    private final ApiKeyAuth auth;
    private final ReadMetrics metrics;
    private final ReadSettings.Api limits;
    private final Duration readyTimeout;
    private final OpenApi openApi;
    private final Clock clock;
    private final KnownPaths paths = new KnownPaths();
    /** Set when shutdown begins: readiness answers 503 from then on, whatever Cosmos says. */
    private volatile boolean stopping;
    /** /v1 requests between admission and their answer; bounded by read.max-in-flight-requests. */
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();

    BucketRoutes(BucketStore store, Requests requests, RulesWatch rules, ApiKeyAuth auth, ReadMetrics metrics,
                 ReadSettings.Api limits, Duration readyTimeout, OpenApi openApi, Clock clock) {
        this.store = store;
        this.requests = requests;
        this.rules = rules;
        this.auth = auth;
        this.metrics = metrics;
        this.limits = limits;
        this.readyTimeout = readyTimeout;
        this.openApi = openApi;
        this.clock = clock;
        metrics.inFlight(inFlight::get);
        metrics.rulesGeneration(() -> rules.current().record().map(r -> (Number) r.generation()).orElse(-1));
    }

    void register(HttpServerRoutes routes) {
        routes.get(paths.add("/v1/rules"), api("rules", this::rules))
              .get(paths.add("/v1/buckets/{pk}/{id}"), api("point-read", this::pointRead))
              .get(paths.add("/v1/buckets/{pk}"), api("range", this::range))
              .get(paths.add("/v1/rollups/{pk}"), api("rollup", this::rollup))
              .get(paths.add("/v1/features/{pk}"), api("features", this::features))
              .get(paths.add("/health/live"), open("live", req -> Mono.just(Answer.json(200, JSON.createObjectNode().put("status", "UP")))))
              .get(paths.add("/health/ready"), open("ready", req -> ready()))
              .get(paths.add("/metrics"), open("metrics", req -> Mono.fromCallable(() -> new Answer(200, metrics.contentType(),
                      metrics.scrape().getBytes(StandardCharsets.UTF_8), Map.of()))))
              .get(paths.add("/openapi.json"), open("openapi", req -> Mono.just(new Answer(200, JSON_TYPE, openApi.json(), Map.of()))))
              .get(paths.add("/openapi.yaml"), open("openapi", req -> Mono.just(new Answer(200, "application/yaml", openApi.yaml(), Map.of()))))
              // Every route above is GET only: another method on one of their paths is 405, on any other path 404.
              .route(req -> true, open("unknown", req -> Mono.just(Answer.problem(paths.matches(req.uri())
                      ? Problem.methodNotAllowed(req.method().name(), KnownPaths.ALLOW)
                      : Problem.notFound("No such route.")))));
    }

    /**
     * Shutdown has begun: readiness answers 503 from now on, so load balancers stop sending requests while the
     * ones already routed here are still answered.
     */
    void stopping() {
        stopping = true;
    }

    // --- handlers: validate, then one Cosmos call, then shape the answer ---

    private Mono<Answer> rules(HttpServerRequest req) {
        requests.rules(req.uri());
        return Mono.just(Answer.json(200, rules.current().describe()));
    }

    private Mono<Answer> pointRead(HttpServerRequest req) {
        RulesView view = rules.current();
        Requests.Point p = requests.point(view, req.param("pk"), req.param("id"));
        GradeRetention retention = view.retention();
        return timed("read", store.read(p.pk(), p.id(), p.status()))
                .map(doc -> doc.filter(d -> !retention.expired(d, clock.instant()))
                        .map(d -> {
                            BucketDocument b = retention.withTtl(d);
                            // a complete bucket is written as it always was, not through a tree
                            return Answer.json(200, p.status().incomplete(b.bucket()) ? incomplete(b) : b);
                        })
                        .orElseGet(() -> Answer.problem(missing(p))));
    }

    /** A point read that found nothing: not found, or not counted yet for a bucket whose history is still being filled. */
    private static Problem missing(Requests.Point p) {
        io.tally.model.BucketId id = io.tally.model.BucketId.parse(p.id());
        java.time.Instant start = id.unit().bucketStart(id.bucketIndex());
        if (!p.status().incomplete(start)) return Problem.notFound("No bucket with this id in this partition.");
        return Problem.notCountedYet("No bucket with this id in this partition yet: this grade's history before " + p.status().recorded().countingFrom()
                + " is still being counted in (GET /v1/rules), and may add it.");
    }

    private Mono<Answer> range(HttpServerRequest req) {
        RulesView view = rules.current();
        Requests.RangePage p = requests.rangePage(view, req.param("pk"), req.uri());
        Requests.Range r = p.range();
        GradeRetention retention = view.retention();
        return timed("range", store.rangePage(r, p.limit(), p.continuation()))
                .map(page -> {
                    ObjectNode body = rangeHeader(r);
                    ArrayNode items = body.putArray("buckets");
                    Instant now = clock.instant();
                    page.items().stream().filter(d -> !retention.expired(d, now)).forEach(d -> items.add(bucket(retention.withTtl(d), r.status())));
                    page.continuation().ifPresent(c -> body.put("continuation", Requests.token(r, c)));
                    return Answer.json(200, body);
                });
    }

    private Mono<Answer> rollup(HttpServerRequest req) {
        RulesView view = rules.current();
        Requests.Range r = requests.rollup(view, req.param("pk"), req.uri());
        GradeRetention retention = view.retention();
        return timed("rollup", store.range(r)).map(docs -> {
            Instant now = clock.instant();
            return Answer.json(200, rollupBody(r, docs.stream().filter(d -> !retention.expired(d, now)).toList()));
        });
    }

    /** A bucket as answered, with {@code "complete": false} when it may still lack history; complete ones carry nothing. */
    static ObjectNode bucket(BucketDocument d, GradeStatus status) {
        return status.incomplete(d.bucket()) ? incomplete(d) : JSON.valueToTree(d);
    }

    private static ObjectNode incomplete(BucketDocument d) {
        ObjectNode node = JSON.valueToTree(d);
        return node.put("complete", false);
    }

    /**
     * One point read per unit (every grade of the entity in that unit's current bucket is one document), in parallel.
     * Values of a qualified rule that spilled in a bucket live in its spill pages: they are not read here (that would be
     * up to one more read per page); the answer names such rules under {@code spilled}, and the point read or range of
     * one qualifier value finds them.
     *
     * <p>The current hour is read whenever minutes are kept, even with no rule kept in hours: it holds the current
     * minute's unqualified grades while it nests its minutes. It holds the hour's other minutes too, so only the views
     * of each unit's current bucket are answered. The current minute's document holds the qualified minute grades, and
     * the unqualified ones of an hour past the bound or written before minutes nested.
     *
     * <p>A value is answered when its document holds the grade's current version (an hour's nested minutes by the
     * hour's {@code ver}); with a rules record, grades it does not count are left out. {@code incomplete} names every
     * grade whose current bucket may still lack history, answered or not: a grade without a bucket may be one whose
     * events of that bucket are not counted in yet.
     */
    private Mono<Answer> features(HttpServerRequest req) {
        Requests.Features f = requests.features(req.param("pk"), req.uri());
        RulesView view = rules.current();
        GradeRetention retention = view.retention();
        int max = limits.maxFeatureBuckets();
        Set<TimeUnit> read = EnumSet.noneOf(TimeUnit.class);
        read.addAll(view.rules().units());
        if (read.contains(TimeUnit.MINUTE)) read.add(TimeUnit.HOUR);
        return timed("features", Flux.fromIterable(read)
                .flatMap(u -> store.entityBucket(f.pk(), u, u.bucketIndex(f.at())))
                .collectList())
                .map(docs -> {
                    ObjectNode body = JSON.createObjectNode().put("pk", f.pk()).put("at", f.at().toString());
                    Map<String, Map<String, ObjectNode>> byGrade = new TreeMap<>();
                    Map<String, Set<String>> spilled = new TreeMap<>();
                    int found = 0;
                    for (Optional<EntityBucket> doc : docs) {
                        if (doc.isEmpty()) continue;
                        EntityBucket d = doc.get();
                        TimeUnit docUnit = TimeUnit.fromCode(d.unit());
                        d.spilled().keySet().stream().filter(rule -> view.status(rule, docUnit).filter(s -> s.holds(d.ver())).isPresent())
                                .forEach(rule -> spilled.computeIfAbsent(rule, r -> new TreeSet<>()).add(d.unit()));
                        for (BucketDocument bucket : d.views()) {
                            TimeUnit unit = TimeUnit.fromCode(bucket.unit());
                            if (BucketId.parse(bucket.id()).bucketIndex() != unit.bucketIndex(f.at())) continue;
                            Optional<GradeStatus> status = view.status(GradeId.parse(bucket.grade()).rule(), unit);
                            if (status.isEmpty() || !status.get().holds(d.ver())) continue;
                            if (retention.expired(bucket, clock.instant())) continue;
                            if (++found > max) continue;
                            byGrade.computeIfAbsent(bucket.grade(), g -> new LinkedHashMap<>())
                                    .put(bucket.unit(), bucket(retention.withTtl(bucket), status.get()));
                        }
                    }
                    ObjectNode out = body.putObject("grades");
                    byGrade.forEach((grade, units) -> {
                        ObjectNode g = out.putObject(grade);
                        units.forEach(g::set);
                    });
                    if (!spilled.isEmpty()) body.set("spilled", JSON.valueToTree(spilled));
                    Map<String, Set<String>> incomplete = view.incompleteAt(f.at());
                    if (!incomplete.isEmpty()) body.set("incomplete", JSON.valueToTree(incomplete));
                    body.put("truncated", found > max);
                    return Answer.json(200, body);
                });
    }

    /**
     * Ready when Cosmos answers and the rules are the deployment's: while the first read of the rules record has not
     * succeeded the service answers with the rules file, which may count other grades than the record.
     */
    private Mono<Answer> ready() {
        if (stopping) {
            ObjectNode b = JSON.createObjectNode().put("status", "DOWN");
            b.putObject("checks").put("shutdown", "in progress");
            return Mono.just(Answer.json(503, b));
        }
        if (!rules.known()) {
            ObjectNode b = JSON.createObjectNode().put("status", "DOWN");
            b.putObject("checks").put("rules", "rules record not read yet");
            return Mono.just(Answer.json(503, b));
        }
        return store.probe().timeout(readyTimeout)
                .thenReturn(Answer.json(200, health("UP")))
                .onErrorResume(e -> Mono.just(Answer.json(503, health("DOWN"))));
    }

    private static ObjectNode health(String cosmos) {
        ObjectNode b = JSON.createObjectNode().put("status", cosmos);
        b.putObject("checks").put("cosmos", cosmos);
        return b;
    }

    /**
     * The buckets combined as stage 5 combines deltas ({@link Aggregate}), in decimal arithmetic. The sum starts at 0,
     * so units without a bucket, or a rule that keeps no sum, add nothing; min and max stay null when no bucket has one.
     */
    static ObjectNode rollupBody(Requests.Range r, List<BucketDocument> docs) {
        Aggregate total = new Aggregate(BigDecimal.ZERO, 0, null, null);
        for (BucketDocument d : docs) total = total.plus(Aggregate.of(d));
        ObjectNode body = rangeHeader(r);
        body.put("units", r.buckets()).put("bucketsFound", docs.size()).put("sum", total.sum()).put("count", total.count());
        if (total.min() == null) body.putNull("min"); else body.put("min", total.min());
        if (total.max() == null) body.putNull("max"); else body.put("max", total.max());
        // a missing bucket may be one whose history is not counted in yet: the window decides, not the buckets found
        if (r.incomplete()) body.put("complete", false);
        return body;
    }

    private static ObjectNode rangeHeader(Requests.Range r) {
        return JSON.createObjectNode().put("pk", r.pk()).put("grade", r.gradeId()).put("unit", r.unit().code())
                .put("from", r.fromIso()).put("to", r.toIso());
    }

    /** Times the Cosmos call for the overhead metric: status is 200, or the Cosmos status code of a failure. */
    private <T> Mono<T> timed(String operation, Mono<T> call) {
        return Mono.defer(() -> {
            long start = System.nanoTime();
            return call.doOnSuccess(v -> metrics.cosmos(operation, 200, System.nanoTime() - start))
                    .doOnError(e -> metrics.cosmos(operation,
                            e instanceof CosmosException ce ? ce.getStatusCode() : 0, System.nanoTime() - start));
        });
    }

    // --- plumbing: auth, timeout, error mapping, metrics, writing ---

    /** A /v1 route: API key (when on), request timeout, problem mapping, metrics. */
    private Handler api(String endpoint, Function<HttpServerRequest, Mono<Answer>> handler) {
        return (req, res) -> {
            long start = System.nanoTime();
            if (!auth.allows(req)) return write(endpoint, Mono.just(Answer.problem(Problem.unauthorized())), res, start);
            if (inFlight.incrementAndGet() > limits.maxInFlight()) { // shed load rather than queue it
                inFlight.decrementAndGet();
                return write(endpoint, Mono.just(Answer.problem(Problem.overloaded())), res, start);
            }
            // The slot is freed when the answer is known, before it is written: a client that has read the answer
            // and asks again must find the slot free. doFinally alone runs only after the write has been started,
            // on whichever thread produced the answer, which a loaded machine can delay past the client's next call.
            var held = new java.util.concurrent.atomic.AtomicBoolean(true);
            Runnable release = () -> { if (held.compareAndSet(true, false)) inFlight.decrementAndGet(); };
            Mono<Answer> answer = Mono.defer(() -> handler.apply(req)).timeout(limits.requestTimeout())
                    .onErrorResume(t -> Mono.just(Answer.problem(Problem.from(t, endpoint))))
                    .doOnNext(a -> release.run())
                    .doFinally(s -> release.run());
            return write(endpoint, answer, res, start);
        };
    }

    /** An unauthenticated route (health, metrics, OpenAPI). */
    private Handler open(String endpoint, Function<HttpServerRequest, Mono<Answer>> handler) {
        return (req, res) -> write(endpoint, Mono.defer(() -> handler.apply(req))
                .onErrorResume(t -> Mono.just(Answer.problem(Problem.from(t, endpoint)))), res, System.nanoTime());
    }

    private Mono<Void> write(String endpoint, Mono<Answer> answer, HttpServerResponse res, long start) {
        int[] status = {499}; // client went away before an answer
        return answer.flatMap(a -> {
            status[0] = a.status();
            res.status(a.status()).header("Content-Type", a.contentType());
            a.headers().forEach(res::header);
            return res.sendByteArray(Mono.just(a.body())).then();
        }).doFinally(s -> metrics.request(endpoint, status[0], System.nanoTime() - start));
    }

    interface Handler extends java.util.function.BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> {}

    /** A complete answer: serialized before any byte is written, so a failure can still become a problem. */
    record Answer(int status, String contentType, byte[] body, Map<String, String> headers) {
        static Answer json(int status, Object body) {
            try {
                return new Answer(status, JSON_TYPE, JSON.writeValueAsBytes(body), Map.of());
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("cannot serialize an answer", e);
            }
        }

        static Answer problem(Problem p) {
            try {
                return new Answer(p.status, PROBLEM_TYPE, JSON.writeValueAsBytes(p.body(null)), p.headers());
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("cannot serialize a problem", e);
            }
        }
    }
}
