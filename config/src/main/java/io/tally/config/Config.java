package io.tally.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Settings loaded in layers, later layers winning: declared defaults &lt; properties file &lt;
 * {@code TALLY_*} environment &lt; command-line flags ({@code --key=value} or {@code --key value}).
 *
 * <p>The file comes from {@code --config FILE} or {@code TALLY_CONFIG}. Keys under a pass-through
 * prefix ({@code kafka.}, {@code cosmos.client.}) that no setting declares are kept as raw strings
 * for the client libraries ({@link #withPrefix}). Any other unknown key is an error: a typo must
 * not silently fall back to a default. All problems are collected and thrown together.
 */
public final class Config {
    public static final String CONFIG_FILE_ENV = "TALLY_CONFIG";

    private final Map<String, Object> values;
    private final Map<String, String> raw;

    private Config(Map<String, Object> values, Map<String, String> raw) {
        this.values = values;
        this.raw = raw;
    }

    public static Config load(Collection<Setting<?>> declared, Collection<String> passThroughPrefixes,
                              String[] args, Map<String, String> env) {
        List<String> problems = new ArrayList<>();
        Map<String, String> flags = parseFlags(args, problems);
        Map<String, String> raw = new LinkedHashMap<>();
        Map<String, String> origin = new LinkedHashMap<>();

        String file = flags.containsKey("config") ? flags.remove("config") : env.get(CONFIG_FILE_ENV);
        if (file != null && !file.isBlank()) {
            readFile(Path.of(file), problems).forEach((k, v) -> { raw.put(k, v); origin.put(k, "file " + file); });
        }
        for (Setting<?> s : declared) {
            String v = env.get(s.envName());
            if (v != null) { raw.put(s.key(), v); origin.put(s.key(), "env " + s.envName()); }
        }
        flags.forEach((k, v) -> { raw.put(k, v); origin.put(k, "flag --" + k); });

        Map<String, Setting<?>> byKey = new LinkedHashMap<>();
        declared.forEach(s -> byKey.put(s.key(), s));
        for (String key : raw.keySet()) {
            if (!byKey.containsKey(key) && passThroughPrefixes.stream().noneMatch(key::startsWith)) {
                problems.add(key + " (from " + origin.get(key) + "): unknown setting");
            }
        }

        Map<String, Object> values = new LinkedHashMap<>();
        for (Setting<?> s : declared) {
            String v = raw.get(s.key());
            String from = origin.getOrDefault(s.key(), "default");
            if (v == null) v = s.defaultValue().orElse(null);
            if (v == null) {
                problems.add(s.key() + ": required (set --" + s.key() + " or " + s.envName() + "): " + s.doc());
                continue;
            }
            try {
                values.put(s.key(), s.parse(v, from));
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        if (!problems.isEmpty()) throw new ConfigException(problems);
        return new Config(values, raw);
    }

    public static Config load(Collection<Setting<?>> declared, String[] args) {
        return load(declared, List.of(), args, System.getenv());
    }

    @SuppressWarnings("unchecked")
    public <T> T get(Setting<T> setting) {
        if (!values.containsKey(setting.key())) {
            throw new IllegalArgumentException("setting not declared for this application: " + setting.key());
        }
        return (T) values.get(setting.key());
    }

    /** Raw values under a prefix, with the prefix removed: {@code kafka.linger.ms=5} gives {@code linger.ms=5}. */
    public Map<String, String> withPrefix(String prefix) {
        Map<String, String> out = new TreeMap<>();
        raw.forEach((k, v) -> { if (k.startsWith(prefix)) out.put(k.substring(prefix.length()), v); });
        return out;
    }

    /**
     * Raw values for one client of a library whose settings pass through under a shared prefix with one
     * sub-prefix per client, prefixes removed. With shared {@code kafka.} and clients {@code streams},
     * {@code consumer} and {@code producer}: {@code kafka.linger.ms} reaches every client,
     * {@code kafka.producer.linger.ms} only the producer, where it wins over the shared key. A key under another
     * client's sub-prefix is that client's alone, never shared.
     */
    public Map<String, String> layered(String sharedPrefix, String client, Collection<String> clients) {
        Map<String, String> out = shared(sharedPrefix, clients);
        out.putAll(withPrefix(sharedPrefix + client + "."));
        return out;
    }

    /** The keys under {@code sharedPrefix} that no client's sub-prefix claims (see {@link #layered}), prefix removed. */
    public Map<String, String> shared(String sharedPrefix, Collection<String> clients) {
        Map<String, String> out = new TreeMap<>();
        withPrefix(sharedPrefix).forEach((k, v) -> {
            if (clients.stream().noneMatch(c -> k.startsWith(c + "."))) out.put(k, v);
        });
        return out;
    }

    private static Map<String, String> parseFlags(String[] args, List<String> problems) {
        Map<String, String> flags = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || a.length() == 2) {
                problems.add("unexpected argument '" + a + "' (flags look like --key=value)");
                continue;
            }
            int eq = a.indexOf('=');
            if (eq > 0) {
                flags.put(a.substring(2, eq), a.substring(eq + 1));
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                flags.put(a.substring(2), args[++i]);
            } else {
                flags.put(a.substring(2), "true"); // a bare boolean flag
            }
        }
        return flags;
    }

    private static Map<String, String> readFile(Path file, List<String> problems) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (IOException e) {
            problems.add("config file " + file + ": cannot read (" + e.getMessage() + ")");
        }
        Map<String, String> out = new LinkedHashMap<>();
        p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k)));
        return out;
    }

    /** A Markdown table of the settings, for the README: key, environment name, default, description. */
    public static String markdownTable(Collection<Setting<?>> declared) {
        StringBuilder sb = new StringBuilder("| setting | environment | default | description |\n|---|---|---|---|\n");
        for (Setting<?> s : declared) {
            String def = s.defaultValue().map(d -> s.isSecret() ? "(secret)" : d.isEmpty() ? "(empty)" : "`" + d + "`").orElse("required");
            sb.append("| `").append(s.key()).append("` | `").append(s.envName()).append("` | ").append(def)
              .append(" | ").append(s.doc().replace("|", "\\|")).append(" |\n");
        }
        return sb.toString();
    }
}
