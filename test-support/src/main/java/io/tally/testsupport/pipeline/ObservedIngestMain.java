package io.tally.testsupport.pipeline;

import com.sun.net.httpserver.HttpServer;
import io.tally.ingest.Main;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * ingest-app ({@link Main}, its jar's entry class) plus a per-process view of the Kafka consumers' fetch counters, so a test can see
 * which instance consumed how much of each topic, monotonic across the consumers Streams replaces.
 * {@code GET /consumed} answers lines {@code <topic> <records consumed>}, summed over this JVM's consumers, from the
 * clients' own JMX metrics. The port comes from {@code -Dtally.observe.port}.
 */
public final class ObservedIngestMain {
    /** Kafka writes topic tags with '.' replaced by '_'. */
    private static final String FETCH_METRICS = "kafka.consumer:type=consumer-fetch-manager-metrics,client-id=*,topic=*";
    /**
     * Last value seen per consumer and topic. The clients drop a topic's fetch metrics at times (between
     * assignments, when Streams replaces a consumer), so a sum of what JMX holds right now can go down or
     * vanish; remembering each counter's last value keeps the answer monotonic within this process.
     */
    private static final Map<String, Double> SEEN = new java.util.concurrent.ConcurrentHashMap<>();

    private ObservedIngestMain() {}

    public static void main(String[] args) throws Exception {
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.getInteger("tally.observe.port")), 0);
        http.createContext("/consumed", exchange -> {
            byte[] body = render(consumedByTopic()).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (var out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        http.start();
        try {
            Main.main(args);
        } finally {
            http.stop(0);
        }
    }

    static synchronized Map<String, Double> consumedByTopic() throws IOException {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            for (ObjectName name : server.queryNames(new ObjectName(FETCH_METRICS), null)) {
                Object v;
                try {
                    v = server.getAttribute(name, "records-consumed-total");
                } catch (javax.management.InstanceNotFoundException gone) {
                    continue; // removed between the query and the read
                }
                if (v instanceof Number n) {
                    SEEN.merge(name.getKeyProperty("client-id") + " " + name.getKeyProperty("topic"), n.doubleValue(), Math::max);
                }
            }
        } catch (javax.management.JMException e) {
            throw new IOException(e);
        }
        Map<String, Double> out = new TreeMap<>();
        SEEN.forEach((key, n) -> out.merge(key.substring(key.indexOf(' ') + 1), n, Double::sum));
        return out;
    }

    private static String render(Map<String, Double> counts) {
        StringBuilder b = new StringBuilder();
        counts.forEach((topic, n) -> b.append(topic).append(' ').append(n.longValue()).append('\n'));
        return b.toString();
    }
}
