package io.tally.loadgen;

import io.tally.config.Config;
import io.tally.config.Setting;
import java.util.List;
import java.util.Map;

/** What loadgen produces and where. */
public record LoadgenSettings(String bootstrapServers, String schemaRegistryUrl, String topic, int events,
                              int customers, long seed, String domain, Map<String, String> kafkaOverrides) {
    public static final Setting<String> BOOTSTRAP = Setting.string("kafka.bootstrap.servers", "127.0.0.1:9092",
            "Kafka bootstrap servers.");
    public static final Setting<String> REGISTRY = Setting.string("schema.registry.url", "http://127.0.0.1:8085",
            "Confluent-API schema registry URL(s).");
    public static final Setting<String> TOPIC = Setting.string("loadgen.topic", "transactions", "Topic to produce to.");
    public static final Setting<Integer> EVENTS = Setting.integer("loadgen.events", 10, "How many events to produce.").atLeast(0);
    public static final Setting<Integer> CUSTOMERS = Setting.integer("loadgen.customers", 3,
            "How many distinct customers the events are spread over.").atLeast(1);
    public static final Setting<Long> SEED = Setting.longValue("loadgen.seed", 42, "Seed: the same seed gives the same events.");
    public static final Setting<String> DOMAIN = Setting.string("loadgen.domain", "demo-shop", "Domain (tenant) of the events.");

    public static final List<Setting<?>> ALL = List.of(BOOTSTRAP, REGISTRY, TOPIC, EVENTS, CUSTOMERS, SEED, DOMAIN);

    public static LoadgenSettings load(String[] args, Map<String, String> env) {
        Config c = Config.load(ALL, List.of("kafka."), args, env);
        Map<String, String> overrides = c.withPrefix("kafka.");
        overrides.remove("bootstrap.servers");
        return new LoadgenSettings(c.get(BOOTSTRAP), c.get(REGISTRY), c.get(TOPIC), c.get(EVENTS), c.get(CUSTOMERS),
                c.get(SEED), c.get(DOMAIN), overrides);
    }
}
