package io.tally.read;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.tally.model.TimeUnit;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The grades the API accepts, read from the same rules file ingest-app aggregates by. Only what the
 * read path needs: each rule's name, whether it is kept per qualifier value (grade id
 * {@code name:value}), its aggregations and its units. Immutable.
 */
final class Grades {
    private static final String BUNDLED = "/rules/default-rules.yaml";

    /** One rule as the read path sees it. */
    record Grade(String name, boolean qualified, Set<String> aggregations, Set<TimeUnit> units) {
        /** The grade id stored in documents: the name, or {@code name:qualifier} for qualified rules. */
        String id(String qualifier) {
            return qualified ? name + ":" + qualifier : name;
        }
    }

    private final Map<String, Grade> byName;

    Grades(Collection<Grade> grades) {
        Map<String, Grade> m = new LinkedHashMap<>();
        grades.forEach(g -> m.put(g.name(), g));
        this.byName = Map.copyOf(m);
    }

    Optional<Grade> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    Collection<Grade> all() {
        return byName.values();
    }

    /** Every unit some grade is kept in. */
    Set<TimeUnit> units() {
        Set<TimeUnit> units = EnumSet.noneOf(TimeUnit.class);
        byName.values().forEach(g -> units.addAll(g.units()));
        return units;
    }

    /** The rules file, or the copy of rules/default-rules.yaml in the jar when none is given. */
    static Grades load(Optional<Path> file) {
        try {
            if (file.isPresent()) {
                try (InputStream in = Files.newInputStream(file.get())) {
                    return parse(in, file.get().toString());
                }
            }
            try (InputStream in = Grades.class.getResourceAsStream(BUNDLED)) {
                if (in == null) throw new IllegalStateException("no rules file given and " + BUNDLED + " is not on the classpath");
                return parse(in, "classpath:" + BUNDLED);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the rules file " + file.map(Path::toString).orElse(BUNDLED), e);
        }
    }

    static Grades parse(InputStream in, String origin) throws IOException {
        JsonNode root = new ObjectMapper(new YAMLFactory()).readTree(in);
        List<Grade> grades = new ArrayList<>();
        for (JsonNode r : root.path("rules")) {
            String name = r.path("name").asText("");
            if (!name.matches("[a-z0-9-]+")) throw new IllegalArgumentException(origin + ": bad rule name '" + name + "'");
            Set<String> aggs = new java.util.LinkedHashSet<>();
            r.path("aggregations").forEach(a -> aggs.add(a.asText()));
            Set<TimeUnit> units = EnumSet.noneOf(TimeUnit.class);
            r.path("units").forEach(u -> units.add(TimeUnit.fromCode(u.asText())));
            if (units.isEmpty()) throw new IllegalArgumentException(origin + ": rule " + name + " has no units");
            grades.add(new Grade(name, r.hasNonNull("qualifier"), Set.copyOf(aggs), units));
        }
        if (grades.isEmpty()) throw new IllegalArgumentException(origin + ": no rules");
        return new Grades(grades);
    }
}
