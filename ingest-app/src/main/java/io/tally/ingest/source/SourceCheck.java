package io.tally.ingest.source;

import io.tally.rules.source.RuleFields;
import io.tally.rules.source.SourceMapping;
import io.tally.rules.source.SourcePlan;
import io.tally.schemas.serde.RegisteredSchema;
import io.tally.schemas.serde.SchemaRegistryClient;
import io.tally.schemas.serde.SchemaRegistryException;
import io.tally.schemas.serde.SubjectNameStrategy;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Checks every source mapping and rule against the latest schema of each source's subjects, before anything runs: a
 * path that does not exist, or holds a type that cannot serve (a record where a key is needed, a double amount not
 * allowed), is a problem naming the source, the subject, the schema id and the rule. ingest-app refuses to start on
 * one; {@code ./tally rules check} prints them.
 *
 * <p>A subject without a schema yet (nothing produced) cannot be checked; that is a note, and the same check runs
 * for every schema id as its first record arrives ({@link SourceReader}).
 */
public final class SourceCheck {
    /**
     * @param problems what would send events to the DLQ or break the rules, each naming its source, subject and path
     * @param checked  the subjects checked, with version and id
     * @param notes    what could not be checked, and why
     */
    public record Report(List<String> problems, List<String> checked, List<String> notes) {
        public boolean ok() {
            return problems.isEmpty();
        }
    }

    private SourceCheck() {}

    /**
     * Runs the check. Throws {@link SchemaRegistryException} when the registry cannot be asked (down, refusing us):
     * the caller decides whether that stops it.
     */
    public static Report run(SourceTopics topics, RuleFields fields, SchemaRegistryClient registry, List<String> registrySubjects) {
        List<String> problems = new ArrayList<>();
        List<String> checked = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (SourceMapping s : topics.sources().sources()) {
            List<String> subjects = subjects(s, topics, registrySubjects);
            if (subjects.isEmpty()) {
                notes.add("source " + s.name() + ": no registered subject matches its " + s.describeTopics()
                        + " yet; each writer schema is checked as its first record arrives");
            }
            for (String subject : subjects) {
                RegisteredSchema latest;
                try {
                    latest = registry.latest(subject);
                } catch (SchemaRegistryException e) {
                    if (e.kind() == SchemaRegistryException.Kind.SUBJECT_NOT_FOUND || e.kind() == SchemaRegistryException.Kind.VERSION_NOT_FOUND) {
                        notes.add("source " + s.name() + ": subject " + subject + " has no schema yet (nothing produced to it); "
                                + "each writer schema is checked as its first record arrives");
                        continue;
                    }
                    throw e;
                }
                String where = "source " + s.name() + ", subject " + subject + " (version " + latest.version() + ", schema id " + latest.id() + ")";
                List<String> found = SourcePlan.compile(s, fields, latest.schema(), latest.id()).problems();
                found.forEach(p -> problems.add(where + ": " + p));
                if (found.isEmpty()) checked.add(where);
            }
        }
        return new Report(List.copyOf(problems), List.copyOf(checked), List.copyOf(notes));
    }

    /** The registry's subjects when a pattern source needs them to find its subjects; none otherwise. */
    public static List<String> registrySubjectsIfNeeded(SourceTopics topics, SchemaRegistryClient registry) {
        boolean patterns = topics.sources().sources().stream().anyMatch(s -> s.topicPattern().isPresent()
                && s.subjectStrategy() != SubjectNameStrategy.RECORD_NAME);
        return patterns ? registry.subjects() : List.of();
    }

    /**
     * The subjects a source's producers register under, by its strategy: per listed topic, or, for a pattern, every
     * registered subject that a matching topic would have.
     */
    static List<String> subjects(SourceMapping s, SourceTopics topics, List<String> registrySubjects) {
        SubjectNameStrategy strategy = s.subjectStrategy();
        String record = s.recordName().orElse(null);
        if (strategy == SubjectNameStrategy.RECORD_NAME) return List.of(strategy.subject(null, false, record));
        if (s.topicPattern().isEmpty()) {
            return topics.named(s).stream().map(t -> strategy.subject(t, false, record)).toList();
        }
        Pattern topic = topics.pattern(s).orElseThrow();
        String suffix = strategy == SubjectNameStrategy.TOPIC_NAME ? "-value" : "-" + record;
        return registrySubjects.stream()
                .filter(sub -> sub.endsWith(suffix) && topic.matcher(sub.substring(0, sub.length() - suffix.length())).matches())
                .sorted().toList();
    }
}
