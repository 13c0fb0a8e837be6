package io.tally.rules.source;

import io.tally.schemas.DeadLetters;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;

/**
 * A source mapping and the rules' fields compiled against one writer schema: made once per (source, schema id),
 * then used for every event that schema wrote. A schema that lacks a path, or has it with a type that cannot serve,
 * gives a plan with {@link #problems()}: its events go to the DLQ as {@link DeadLetters.Reason#SCHEMA_MISMATCH}
 * with every problem named, and the same list refuses a start ({@code ./tally rules check}).
 */
public final class SourcePlan {
    /** An event read, or why it cannot be. */
    public record Read(SourceEvent event, DeadLetters.Reason reason, String message) {
        static Read ok(SourceEvent e) {
            return new Read(e, null, null);
        }

        static Read invalid(String message) {
            return new Read(null, DeadLetters.Reason.INVALID, message);
        }
    }

    /** A path and how its value is read, with the name messages use for it. */
    private record Text(String name, Accessor at, Leaves.Text leaf) {
        String read(IndexedRecord r) {
            Object raw = at.raw(r);
            if (raw == null) return null;
            String s = leaf.read(raw);
            return s.isBlank() ? null : s;
        }
    }

    private final SourceMapping mapping;
    private final int schemaId;
    private final List<String> problems = new ArrayList<>();
    private final Text transactionId;
    private final Text domain;
    private final String domainConstant;
    private final Accessor time;
    private final Leaves.Time timeLeaf;
    private final Accessor amount;
    private final Leaves.Amount amountLeaf;
    private final Text currency;
    private final Text[] required;
    private final Text[] slots;

    private SourcePlan(SourceMapping m, RuleFields fields, Schema writer, int schemaId) {
        this.mapping = m;
        this.schemaId = schemaId;
        this.transactionId = text(writer, "transaction-id", m.transactionId().toString(), m.transactionId());
        this.domain = m.domain().map(p -> text(writer, "domain", p.toString(), p)).orElse(null);
        this.domainConstant = m.domainConstant().orElse(null);
        SchemaPaths.Resolved t = resolve(writer, "event-time", m.eventTime());
        Leaves.Time tl = null;
        if (t != null) {
            try {
                tl = Leaves.time(t.leaf());
            } catch (SchemaPaths.Unresolved e) {
                problem("event-time", m.eventTime(), e.getMessage());
            }
        }
        this.time = t == null ? null : t.accessor();
        this.timeLeaf = tl;
        Accessor a = null;
        Leaves.Amount al = null;
        if (m.amount().isPresent()) {
            SourceMapping.Amount am = m.amount().get();
            SchemaPaths.Resolved r = resolve(writer, "amount", am.path());
            if (r != null) {
                try {
                    al = Leaves.amount(r.leaf(), am);
                    a = r.accessor();
                } catch (SchemaPaths.Unresolved e) {
                    problem("amount", am.path(), e.getMessage());
                }
            }
        }
        this.amount = a;
        this.amountLeaf = al;
        this.currency = m.currency().map(p -> text(writer, "currency", p.toString(), p)).orElse(null);
        this.required = new Text[m.required().size()];
        for (int i = 0; i < required.length; i++) {
            String name = m.required().get(i);
            FieldPath p = m.pathOf(name).orElse(null);
            if (p == null) problems.add("required '" + name + "' is mapped to nothing in fields");
            else required[i] = text(writer, "required '" + name + "'", name, p);
        }
        this.slots = new Text[fields.names().size()];
        for (int i = 0; i < slots.length; i++) {
            String name = fields.names().get(i);
            FieldPath p = m.pathOf(name).orElse(null);
            if (p != null) slots[i] = text(writer, "'" + name + "' (" + fields.usesOf(name) + ")", name, p);
        }
    }

    /** Compiles {@code mapping} and the rules' fields against the writer schema registered as {@code schemaId}. */
    public static SourcePlan compile(SourceMapping mapping, RuleFields fields, Schema writer, int schemaId) {
        return new SourcePlan(mapping, fields, writer, schemaId);
    }

    /** Every path of the mapping or the rules this schema cannot serve; empty when its events can be read. */
    public List<String> problems() {
        return List.copyOf(problems);
    }

    public Read read(IndexedRecord record) {
        if (!problems.isEmpty()) {
            return new Read(null, DeadLetters.Reason.SCHEMA_MISMATCH, "source " + mapping.name() + ": writer schema id " + schemaId
                    + " (" + record.getSchema().getFullName() + ") cannot serve the mapping and rules: " + String.join("; ", problems));
        }
        String tx = transactionId.read(record);
        if (tx == null) return Read.invalid(transactionId.name() + " is empty");
        String dom = domain == null ? domainConstant : domain.read(record);
        if (dom == null) return Read.invalid(domain.name() + " is empty");
        if (dom.indexOf('|') >= 0) return Read.invalid(domainName() + " contains '|', the partition-key separator");
        for (Text r : required) {
            if (r.read(record) == null) return Read.invalid(r.name() + " is empty");
        }
        Object rawTime = time.raw(record);
        if (rawTime == null) return Read.invalid(mapping.eventTime() + " is missing");
        long timeMs;
        try {
            timeMs = timeLeaf.millis(rawTime);
        } catch (IllegalArgumentException e) {
            return Read.invalid(mapping.eventTime() + ": " + e.getMessage());
        }
        BigDecimal amt = null;
        if (amount != null) {
            Object raw = amount.raw(record);
            String name = mapping.amount().orElseThrow().path().toString();
            if (raw == null) return Read.invalid(name + " is missing");
            try {
                amt = amountLeaf.read(raw);
            } catch (ArithmeticException | NumberFormatException e) {
                return Read.invalid(name + " " + (raw instanceof Number || raw instanceof CharSequence ? raw + " " : "")
                        + "is not an amount: " + e.getMessage());
            }
        }
        String cur = currency == null ? null : currency.read(record);
        String[] values = new String[slots.length];
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) values[i] = slots[i].read(record);
        }
        return Read.ok(new SourceEvent(mapping.name(), tx, timeMs, dom, amt, cur, values));
    }

    /** The name messages use for the domain. */
    public String domainName() {
        return domain == null ? "domain-constant" : domain.name();
    }

    /** The name messages use for the currency, or null when the source has none. */
    public String currencyName() {
        return currency == null ? null : currency.name();
    }

    /** The name messages use for the amount, or null when the source has none. */
    public String amountName() {
        return mapping.amount().map(a -> a.path().toString()).orElse(null);
    }

    public SourceMapping mapping() {
        return mapping;
    }

    /** The registry id of the writer schema this plan was compiled against. */
    public int schemaId() {
        return schemaId;
    }

    private Text text(Schema writer, String what, String name, FieldPath path) {
        SchemaPaths.Resolved r = resolve(writer, what, path);
        if (r == null) return null;
        try {
            return new Text(name, r.accessor(), Leaves.text(r.leaf()));
        } catch (SchemaPaths.Unresolved e) {
            problem(what, path, e.getMessage());
            return null;
        }
    }

    private SchemaPaths.Resolved resolve(Schema writer, String what, FieldPath path) {
        try {
            return SchemaPaths.resolve(writer, path);
        } catch (SchemaPaths.Unresolved e) {
            problem(what, path, e.getMessage());
            return null;
        }
    }

    private void problem(String what, FieldPath path, String why) {
        problems.add(what + " at '" + path + "': " + why);
    }
}
