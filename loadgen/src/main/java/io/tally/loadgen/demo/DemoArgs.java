package io.tally.loadgen.demo;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The arguments of the demo's main classes: {@code --key=value}, each key one the class knows. */
final class DemoArgs {
    private DemoArgs() {}

    /** @throws IllegalArgumentException for an argument without a value or with a key not in {@code keys} */
    static Map<String, String> parse(String[] args, List<String> keys) {
        Map<String, String> given = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            String key = eq < 0 ? arg : arg.substring(0, eq);
            if (eq < 0 || !keys.contains(key)) throw new IllegalArgumentException("unknown argument '" + arg + "'");
            given.put(key, arg.substring(eq + 1));
        }
        return given;
    }
}
