package io.tally.rules.source;

import java.util.Map;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.util.Utf8;

/**
 * A path compiled against one writer schema: field positions, map keys and union branches, walked with array
 * indexes and no lookups by name, so reading a value costs a few pointer hops per event. Absent along the way
 * (a null optional, a missing map key, another union branch) reads as null.
 */
final class Accessor {
    /** One hop from a container to the value inside it. */
    interface Step {
        Object next(Object container);
    }

    private final Step[] steps;

    Accessor(Step[] steps) {
        this.steps = steps;
    }

    /** The raw Avro value at the end of the path, or null when it is absent. */
    Object raw(IndexedRecord record) {
        Object cur = record;
        for (Step s : steps) {
            if (cur == null) return null;
            cur = s.next(cur);
        }
        return cur;
    }

    static Step field(int pos) {
        return c -> ((IndexedRecord) c).get(pos);
    }

    /**
     * A map key. Avro's generic reader gives {@link Utf8} keys unless the schema asks for Java strings, so both forms
     * are tried, each built once here.
     */
    static Step key(String key) {
        Utf8 utf8 = new Utf8(key);
        return c -> {
            Map<?, ?> m = (Map<?, ?>) c;
            Object v = m.get(utf8);
            return v != null ? v : m.get(key);
        };
    }

    /** The branch of a union holding several named types: the value when it is of that type, else absent. */
    static Step branch(String fullName) {
        return c -> c instanceof GenericContainer g && g.getSchema().getFullName().equals(fullName) ? c : null;
    }
}
