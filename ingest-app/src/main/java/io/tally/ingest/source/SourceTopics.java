package io.tally.ingest.source;

import io.tally.rules.source.SourceMapping;
import io.tally.rules.source.Sources;
import io.tally.schemas.Topics;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The sources' topics as this deployment names them: {@code topics.prefix} in front of every name a sources file
 * gives, and in front of every topic a pattern may match.
 */
public record SourceTopics(Sources sources, String prefix) {

    /** The shipped sources (TransactionEvent on {@code transactions}) under the deployment's prefix. */
    public static SourceTopics shipped(Topics.Names names) {
        return new SourceTopics(Sources.load(Sources.BUILTIN_DEFAULT), names.prefix());
    }

    /** The full names of a source's listed topics (none for a pattern source). */
    public List<String> named(SourceMapping s) {
        return s.topics().stream().map(t -> prefix + t).toList();
    }

    /** Every listed topic of every source, full names. */
    public List<String> named() {
        return sources.namedTopics().stream().map(t -> prefix + t).toList();
    }

    /** A pattern source's pattern over full topic names. */
    public Optional<Pattern> pattern(SourceMapping s) {
        return s.topicPattern().map(p -> Pattern.compile(Pattern.quote(prefix) + "(?:" + p.pattern() + ")"));
    }

    /** The source reading the topic of this full name, if any. */
    public Optional<SourceMapping> sourceOf(String topic) {
        if (!topic.startsWith(prefix)) return Optional.empty();
        return sources.sourceOf(topic.substring(prefix.length()));
    }
}
