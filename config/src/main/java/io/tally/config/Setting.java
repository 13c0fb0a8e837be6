package io.tally.config;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One setting, declared once with its key, type, default and documentation.
 *
 * <p>The key is dotted ({@code kafka.bootstrap.servers}); its environment name is derived from it
 * ({@code TALLY_KAFKA_BOOTSTRAP_SERVERS}) so the two can never drift apart. A setting without a
 * default is required: loading fails, naming it, when no layer provides a value.
 *
 * @param <T> the parsed type
 */
public final class Setting<T> {
    private final String key;
    private final String doc;
    private final String defaultValue;
    private final Function<String, T> parser;
    private final Predicate<T> validator;
    private final String constraint;
    private final boolean secret;

    private Setting(String key, String doc, String defaultValue, Function<String, T> parser,
                    Predicate<T> validator, String constraint, boolean secret) {
        this.key = Objects.requireNonNull(key, "key");
        this.doc = Objects.requireNonNull(doc, "doc");
        this.defaultValue = defaultValue;
        this.parser = parser;
        this.validator = validator;
        this.constraint = constraint;
        this.secret = secret;
    }

    public static Setting<String> string(String key, String defaultValue, String doc) {
        return new Setting<>(key, doc, defaultValue, s -> s, v -> !v.isBlank(), "must not be blank", false);
    }

    /** A string that may be empty (a prefix, an optional suffix). */
    public static Setting<String> optionalString(String key, String defaultValue, String doc) {
        return new Setting<>(key, doc, defaultValue, s -> s, v -> true, null, false);
    }

    public static Setting<Integer> integer(String key, int defaultValue, String doc) {
        return new Setting<>(key, doc, Integer.toString(defaultValue), Integer::parseInt, v -> true, null, false);
    }

    public static Setting<Long> longValue(String key, long defaultValue, String doc) {
        return new Setting<>(key, doc, Long.toString(defaultValue), Long::parseLong, v -> true, null, false);
    }

    public static Setting<Boolean> bool(String key, boolean defaultValue, String doc) {
        return new Setting<>(key, doc, Boolean.toString(defaultValue), Setting::parseBoolean, v -> true, null, false);
    }

    /** A duration in milliseconds; the key should end in {@code .ms} so the unit is visible where it is set. */
    public static Setting<Duration> millis(String key, long defaultMs, String doc) {
        return new Setting<>(key, doc, Long.toString(defaultMs), s -> Duration.ofMillis(Long.parseLong(s)),
                d -> !d.isNegative(), "must be >= 0", false);
    }

    /** Returns a copy that is required: no default, loading fails when it is missing. */
    public Setting<T> required() {
        return new Setting<>(key, doc, null, parser, validator, constraint, secret);
    }

    /** Returns a copy whose value is never printed (API keys, Cosmos master keys). */
    public Setting<T> secret() {
        return new Setting<>(key, doc, defaultValue, parser, validator, constraint, true);
    }

    public Setting<T> validate(Predicate<T> check, String description) {
        return new Setting<>(key, doc, defaultValue, parser, validator.and(check), description, secret);
    }

    public Setting<T> atLeast(long min) {
        return validate(v -> ((Number) v).longValue() >= min, "must be >= " + min);
    }

    public String key() { return key; }

    public String doc() { return doc; }

    public Optional<String> defaultValue() { return Optional.ofNullable(defaultValue); }

    public boolean isSecret() { return secret; }

    /** {@code kafka.bootstrap.servers} becomes {@code TALLY_KAFKA_BOOTSTRAP_SERVERS}. */
    public String envName() {
        return envNameOf(key);
    }

    static String envNameOf(String key) {
        return "TALLY_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /** Parses and validates a raw value; the message names the key and the offending value. */
    T parse(String raw, String origin) {
        T value;
        try {
            value = parser.apply(raw.trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(key + " (from " + origin + "): cannot parse '" + shown(raw) + "'"
                    + (secret ? "" : ": " + e.getMessage())); // parser messages may quote the value
        }
        if (!validator.test(value)) {
            throw new IllegalArgumentException(key + " (from " + origin + "): '" + shown(raw) + "' "
                    + (constraint == null ? "is not valid" : constraint));
        }
        return value;
    }

    String shown(String raw) {
        return secret ? "****" : raw;
    }

    private static boolean parseBoolean(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "true", "yes", "1", "on" -> true;
            case "false", "no", "0", "off" -> false;
            default -> throw new IllegalArgumentException("expected true or false");
        };
    }

    @Override
    public String toString() {
        return key;
    }
}
