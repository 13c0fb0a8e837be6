package io.tally.rules.source;

import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;

/**
 * Resolves a {@link FieldPath} against a writer schema, once per schema: a segment names a record field (or one of
 * its aliases, so a field renamed with {@code "aliases": ["oldName"]} is still found), a map key, or a union branch by
 * type name; a union with a single non-null branch (an optional value) is passed through. What the path ends on is
 * returned with it; whether that type suits its use is the caller's question ({@link Leaves}).
 */
final class SchemaPaths {
    /** A resolved path: its accessor and the schema of the value it ends on (optional unions unwrapped). */
    record Resolved(Accessor accessor, Schema leaf) {}

    /** Why a path does not resolve, naming the segment and the schema where it failed. */
    static final class Unresolved extends Exception {
        Unresolved(String message) {
            super(message, null, false, false);
        }
    }

    private SchemaPaths() {}

    static Resolved resolve(Schema root, FieldPath path) throws Unresolved {
        List<Accessor.Step> steps = new ArrayList<>();
        Schema cur = root;
        List<String> segs = path.segments();
        StringBuilder at = new StringBuilder();
        for (int i = 0; i < segs.size(); i++) {
            String seg = segs.get(i);
            cur = passOptional(cur);
            if (cur.getType() == Schema.Type.UNION) {
                Schema branch = namedBranch(cur, seg);
                if (branch == null) {
                    throw new Unresolved("'" + at + "' is a union of " + names(cur) + "; name the branch to follow (for example "
                            + (at.isEmpty() ? "" : at + ".") + names(cur).get(0) + ")");
                }
                steps.add(Accessor.branch(branch.getFullName()));
                cur = branch;
                append(at, seg);
                continue;
            }
            switch (cur.getType()) {
                case RECORD -> {
                    Schema.Field f = field(cur, seg);
                    if (f == null) {
                        throw new Unresolved("record " + cur.getFullName() + (at.isEmpty() ? "" : " at '" + at + "'")
                                + " has no field '" + seg + "' (fields: " + cur.getFields().stream().map(Schema.Field::name).toList() + ")");
                    }
                    steps.add(Accessor.field(f.pos()));
                    cur = f.schema();
                }
                case MAP -> {
                    steps.add(Accessor.key(seg));
                    cur = cur.getValueType();
                }
                case ARRAY -> throw new Unresolved("'" + at + "' is an array; a path must lead to one value per event");
                default -> throw new Unresolved("'" + at + "' is a " + cur.getType().getName() + ", which has no '" + seg + "' inside");
            }
            append(at, seg);
        }
        return new Resolved(new Accessor(steps.toArray(Accessor.Step[]::new)), passOptional(cur));
    }

    /** A field by name, else the field that lists the name among its aliases (the name it had before a rename). */
    private static Schema.Field field(Schema record, String name) {
        Schema.Field f = record.getField(name);
        if (f != null) return f;
        for (Schema.Field candidate : record.getFields()) {
            if (candidate.aliases().contains(name)) return candidate;
        }
        return null;
    }

    /** {@code ["null", T]} (either order) reads as T: null is "absent", which every reader handles. */
    static Schema passOptional(Schema s) {
        if (s.getType() != Schema.Type.UNION) return s;
        List<Schema> nonNull = s.getTypes().stream().filter(t -> t.getType() != Schema.Type.NULL).toList();
        return nonNull.size() == 1 ? nonNull.get(0) : s;
    }

    private static Schema namedBranch(Schema union, String name) {
        for (Schema t : union.getTypes()) {
            if (t.getType() == Schema.Type.RECORD || t.getType() == Schema.Type.ENUM || t.getType() == Schema.Type.FIXED) {
                if (t.getName().equals(name) || t.getFullName().equals(name)) return t;
            }
        }
        return null;
    }

    private static List<String> names(Schema union) {
        return union.getTypes().stream().filter(t -> t.getType() != Schema.Type.NULL)
                .map(t -> t.getType() == Schema.Type.RECORD || t.getType() == Schema.Type.ENUM || t.getType() == Schema.Type.FIXED
                        ? t.getName() : t.getType().getName()).toList();
    }

    private static void append(StringBuilder at, String seg) {
        if (!at.isEmpty()) at.append('.');
        at.append(seg);
    }
}
