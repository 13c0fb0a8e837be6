package io.tally.rules;

import io.tally.model.TimeUnit;
import io.tally.rules.source.FieldPath;
import io.tally.rules.source.SourceMapping;
import io.tally.rules.source.Sources;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * The version of a grade: the first {@value #LENGTH} hex digits of the SHA-256 of its {@linkplain #canonical canonical
 * form}, which holds everything that decides the grade's values and nothing else. The form is written out field by
 * field (never a {@code toString} or a Java hash code), every set sorted, every string length-prefixed, so the same
 * definition has the same version in every JVM, in every release and whatever the order of the YAML; changing the form
 * changes every version, so it starts with a tag ({@value #FORM}) that a deliberate change of it bumps.
 *
 * <p>A version is per grade, one rule in one unit: adding a unit to a rule adds a grade and leaves the rule's other
 * units' versions alone (docs/DESIGN.md, "Rule versions"). The name is not part of it (a rename is a removal and an
 * addition), and neither are settings outside the rules and sources files (the dedupe horizon, {@code topics.prefix}).
 */
public final class RuleVersions {
    public static final int LENGTH = 12;
    static final String FORM = "tally-grade-version/1";

    private RuleVersions() {}

    /** Every grade of {@code rules} read from {@code sources}: rules in file order, each rule's units in its order. */
    public static List<GradeVersion> of(GradeRules rules, Sources sources) {
        List<GradeVersion> out = new ArrayList<>();
        for (GradeRule r : rules.rules()) {
            for (TimeUnit u : r.units()) out.add(new GradeVersion(r.name(), u, version(r, u, sources)));
        }
        return List.copyOf(out);
    }

    public static String version(GradeRule rule, TimeUnit unit, Sources sources) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest(canonical(rule, unit, sources).getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        return HexFormat.of().formatHex(digest).substring(0, LENGTH);
    }

    /**
     * The text the version hashes. Rule fields appear only as the paths each source resolves them to: a rule that
     * renames {@code customerId} to the path it was mapped to reads the same values. Every source's event-wide
     * mapping (topics, transaction id, event time, domain, amount, currency, required) is in every grade, since it
     * decides which events reach any rule at all (dedupe, bucket, partition, or the DLQ); the subject strategy and
     * record name only say where the start-up check finds a schema, and stay out.
     */
    static String canonical(GradeRule rule, TimeUnit unit, Sources sources) {
        Form f = new Form();
        f.line("form", FORM);
        f.line("unit", unit.code());
        f.line("value", rule.value().name().toLowerCase(Locale.ROOT));
        f.line("aggregations", sorted(rule.aggregations().stream().map(a -> a.name().toLowerCase(Locale.ROOT)).toList()));
        Duration ret = rule.retention();
        f.line("retention", ret.getSeconds() + "s" + ret.getNano() + "n");
        f.line("qualified", Boolean.toString(rule.qualified()));
        f.line("filter", rule.filter().map(x -> "in " + sorted(x.in())).orElse("none"));
        List<SourceMapping> bySource = new ArrayList<>(sources.sources());
        bySource.sort((a, b) -> a.name().compareTo(b.name()));
        for (SourceMapping s : bySource) {
            f.line("source", Form.str(s.name()));
            f.line(" topics", s.topicPattern().map(p -> "pattern " + Form.str(p.pattern())).orElseGet(() -> sorted(s.topics())));
            f.line(" transaction-id", Form.path(s.transactionId()));
            f.line(" event-time", Form.path(s.eventTime()));
            f.line(" domain", s.domain().map(Form::path).orElseGet(() -> "constant " + Form.str(s.domainConstant().orElseThrow())));
            f.line(" amount", s.amount().map(a -> Form.path(a.path()) + " scale " + (a.scale() == null ? "none" : a.scale())
                    + " double " + a.allowDouble()).orElse("none"));
            f.line(" currency", s.currency().map(Form::path).orElse("none"));
            f.line(" required", sortedForms(s.required().stream().map(n -> resolved(s, n)).toList()));
            f.line(" entity", resolved(s, rule.entityField()));
            f.line(" qualifier", rule.qualifierField().map(q -> resolved(s, q)).orElse("none"));
            f.line(" filter", rule.filter().map(x -> resolved(s, x.field())).orElse("none"));
        }
        return f.toString();
    }

    /** Where the source reads a name a rule uses, or {@code absent} when it maps it to nothing. */
    private static String resolved(SourceMapping s, String name) {
        return s.pathOf(name).map(Form::path).orElse("absent");
    }

    /** Each string length-prefixed, in {@link String#compareTo} order (UTF-16 code units: the same in every JVM). */
    private static String sorted(Collection<String> values) {
        return "[" + String.join(",", values.stream().sorted().map(Form::str).toList()) + "]";
    }

    /** Forms that delimit themselves (paths, {@code absent}), in {@link String#compareTo} order. */
    private static String sortedForms(Collection<String> forms) {
        return "[" + String.join(",", forms.stream().sorted().toList()) + "]";
    }

    /** One {@code key value} line each; values built only from length-prefixed strings and fixed words. */
    private static final class Form {
        private final StringBuilder text = new StringBuilder();

        void line(String key, String value) {
            text.append(key).append(' ').append(value).append('\n');
        }

        static String str(String s) {
            return s.length() + ":" + s;
        }

        /** By segments, so {@code a[b]} and {@code a.b}, one path to a parser, are one path here. */
        static String path(FieldPath p) {
            return "path(" + String.join(",", p.segments().stream().map(Form::str).toList()) + ")";
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }
}
