package io.tally.read;

import io.tally.config.Config;
import io.tally.config.Setting;
import io.tally.cosmos.CosmosSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Everything read-service reads, parsed once. */
public record ReadSettings(String host, int port, CosmosSettings cosmos) {
    public static final Setting<String> HOST = Setting.string("read.http.host", "127.0.0.1", "Address the HTTP API binds to.");
    public static final Setting<Integer> PORT = Setting.integer("read.http.port", 8080,
            "Port of the HTTP API (0 picks a free one).").atLeast(0);

    public static List<Setting<?>> all() {
        List<Setting<?>> all = new ArrayList<>(List.of(HOST, PORT));
        all.addAll(CosmosSettings.ALL);
        return all;
    }

    public static ReadSettings load(String[] args, Map<String, String> env) {
        Config c = Config.load(all(), List.of(), args, env);
        return new ReadSettings(c.get(HOST), c.get(PORT), CosmosSettings.from(c));
    }
}
