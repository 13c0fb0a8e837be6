package io.tally.rules.source;

import io.tally.rules.GradeRule;
import io.tally.rules.GradeRules;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The field names the rules use (entity, qualifier, filter), each given a slot: an event carries one string per slot,
 * read through its source's mapping, and the fan-out reads slots by index whatever schema the event came in.
 */
public final class RuleFields {
    private final List<String> names;
    private final Map<String, Integer> slots;
    private final Map<String, List<String>> uses;
    private final boolean[] key;

    private RuleFields(Map<String, List<String>> uses, Map<String, Boolean> keys) {
        this.names = List.copyOf(uses.keySet());
        this.slots = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) slots.put(names.get(i), i);
        this.uses = Map.copyOf(uses);
        this.key = new boolean[names.size()];
        for (int i = 0; i < names.size(); i++) key[i] = keys.getOrDefault(names.get(i), false);
    }

    public static RuleFields of(GradeRules rules) {
        Map<String, List<String>> uses = new LinkedHashMap<>();
        Map<String, Boolean> keys = new LinkedHashMap<>();
        for (GradeRule r : rules.rules()) {
            use(uses, r.entityField(), "entity of rule " + r.name());
            keys.put(r.entityField(), true);
            r.qualifierField().ifPresent(q -> {
                use(uses, q, "qualifier of rule " + r.name());
                keys.put(q, true);
            });
            r.filter().ifPresent(f -> use(uses, f.field(), "filter of rule " + r.name()));
        }
        return new RuleFields(uses, keys);
    }

    private static void use(Map<String, List<String>> uses, String name, String use) {
        uses.computeIfAbsent(name, n -> new ArrayList<>()).add(use);
    }

    /** The names, in slot order. */
    public List<String> names() {
        return names;
    }

    public int slot(String name) {
        Integer s = slots.get(name);
        if (s == null) throw new IllegalArgumentException("no rule uses a field named " + name);
        return s;
    }

    /** Whether the slot's value becomes part of a key (partition key or document content), so its length is bounded. */
    public boolean isKey(int slot) {
        return key[slot];
    }

    /** Which rules use the name and how, for messages: "entity of rule spend-per-customer, qualifier of rule x". */
    public String usesOf(String name) {
        return String.join(", ", uses.getOrDefault(name, List.of()));
    }
}
