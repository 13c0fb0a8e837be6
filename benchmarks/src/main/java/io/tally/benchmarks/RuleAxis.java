package io.tally.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rule count as a benchmark axis: rules files of the shape a fraud platform's feature set has, at sizes chosen by
 * the number of filters, value kinds and pair rules. Velocity counters per minute beside hour, day and month buckets,
 * one rule per entity field, filter and value kind, and pair rules (an entity field qualified by another: customer by
 * merchant, e-mail by customer, ...) per hour and day.
 *
 * <p>The files under {@code rules/} that the benchmarks run are written by {@link #main} and checked against it by a
 * test, so a file and its generator never drift apart:
 * <pre>java -cp benchmarks/target/classes io.tally.benchmarks.RuleAxis</pre>
 * writes {@code rules/velocity-rules.yaml} (51 rules) and {@code rules/velocity-200-rules.yaml} (201 rules).
 */
public final class RuleAxis {
    /** The five entity fields the default sources map, in the order rules name them. */
    static final List<String> ENTITIES = List.of("customerId", "email", "postalCode", "sku", "merchant");
    /** Filters in the order a size takes them: any status, each status, each channel, then two sets of values. */
    static final List<Filter> FILTERS = List.of(
            new Filter("any", null, null),
            new Filter("approved", "status", "APPROVED"),
            new Filter("declined", "status", "DECLINED"),
            new Filter("refunded", "status", "REFUNDED"),
            new Filter("web", "channel", "WEB"),
            new Filter("mobile", "channel", "MOBILE"),
            new Filter("store", "channel", "STORE"),
            new Filter("phone", "channel", "PHONE"),
            new Filter("declined-or-refunded", "status", "DECLINED, REFUNDED"),
            new Filter("remote", "channel", "MOBILE, PHONE"));

    /** A size of the axis: the counts that make it. */
    public record Shape(String file, int filters, boolean orders, int pairFilters, int pairs) {
        public int rules() {
            return ENTITIES.size() * filters * (orders ? 2 : 1) + pairFilters * pairs + 1;
        }
    }

    /** About 50 rules: 5 entity fields × 8 filters of spend per minute, hour, day and month; 5 pair rules × 2 filters. */
    public static final Shape VELOCITY = new Shape("rules/velocity-rules.yaml", 8, false, 2, 5);
    /** About 200 rules: spend and order counts, 10 filters, and every ordered pair of entity fields × 5 filters. */
    public static final Shape VELOCITY_200 = new Shape("rules/velocity-200-rules.yaml", 10, true, 5, 20);

    record Filter(String name, String field, String values) {}

    private RuleAxis() {}

    public static void main(String[] args) throws IOException {
        for (Shape s : List.of(VELOCITY, VELOCITY_200)) {
            Files.writeString(Path.of(s.file()), yaml(s), StandardCharsets.UTF_8);
            System.out.printf(Locale.ROOT, "wrote %s (%d rules)%n", s.file(), s.rules());
        }
    }

    /** The rules file of {@code shape}. */
    public static String yaml(Shape shape) {
        StringBuilder y = new StringBuilder();
        y.append("# Written by io.tally.benchmarks.RuleAxis (do not edit: a test compares this file with the generator's output).\n")
                .append(String.format(Locale.ROOT, "# %d rules of a fraud platform's shape, for the rule-count axis of ./tally bench end-to-end and%n",
                        shape.rules()))
                .append("# aggregation: per entity field and filter, spend")
                .append(shape.orders() ? " and order counts" : "")
                .append(" per minute, hour, day and month; pair rules (an entity field\n")
                .append("# kept per value of another) per hour and day; and the default rules' spend-per-customer, which the end-to-end\n")
                .append("# benchmark's freshness probe reads. Fields of a rule: see default-rules.yaml.\n")
                .append("rules:\n");
        rule(y, "spend-per-customer", "customerId", null, FILTERS.get(1), "amount", "[sum, count, min, max]", "[hour, day]");
        for (String entity : ENTITIES) {
            for (Filter f : FILTERS.subList(0, shape.filters())) {
                String e = shortName(entity);
                rule(y, "spend-" + f.name() + "-per-" + e, entity, null, f, "amount", "[sum, count, min, max]", "[minute, hour, day, month]");
                if (shape.orders()) rule(y, "orders-" + f.name() + "-per-" + e, entity, null, f, "one", "[count]", "[minute, hour, day, month]");
            }
        }
        for (String[] pair : pairs(shape.pairs())) {
            for (Filter f : FILTERS.subList(0, shape.pairFilters())) {
                rule(y, "spend-" + f.name() + "-per-" + shortName(pair[0]) + "-" + shortName(pair[1]), pair[0], pair[1], f, "amount",
                        "[sum, count]", "[hour, day]");
            }
        }
        return y.toString();
    }

    /** The first {@code n} ordered pairs of entity fields, the fraud platform's usual ones first. */
    static List<String[]> pairs(int n) {
        List<String[]> all = new ArrayList<>(List.of(
                new String[] {"customerId", "merchant"}, new String[] {"email", "customerId"}, new String[] {"customerId", "sku"},
                new String[] {"postalCode", "customerId"}, new String[] {"merchant", "postalCode"}));
        for (String a : ENTITIES) {
            for (String b : ENTITIES) {
                if (a.equals(b) || all.stream().anyMatch(p -> p[0].equals(a) && p[1].equals(b))) continue;
                all.add(new String[] {a, b});
            }
        }
        if (n > all.size()) throw new IllegalArgumentException("at most " + all.size() + " pairs of " + ENTITIES.size() + " fields");
        return all.subList(0, n);
    }

    private static String shortName(String field) {
        return switch (field) {
            case "customerId" -> "customer";
            case "postalCode" -> "postal-code";
            default -> field;
        };
    }

    private static void rule(StringBuilder y, String name, String entity, String qualifier, Filter f, String value, String aggregations,
                             String units) {
        y.append("\n  - name: ").append(name).append('\n')
                .append("    entity: ").append(entity).append('\n');
        if (qualifier != null) y.append("    qualifier: ").append(qualifier).append('\n');
        if (f.field() != null) y.append("    filter: {field: ").append(f.field()).append(", in: [").append(f.values()).append("]}\n");
        y.append("    value: ").append(value).append('\n')
                .append("    aggregations: ").append(aggregations).append('\n')
                .append("    units: ").append(units).append('\n')
                .append("    retention: P35D\n");
    }
}
