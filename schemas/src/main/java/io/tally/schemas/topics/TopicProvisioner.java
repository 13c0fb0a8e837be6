package io.tally.schemas.topics;

import io.tally.schemas.Topics.TopicSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Creates missing topics and verifies existing ones against their {@link TopicSpec}, then waits
 * until every partition has a leader: an idempotent producer that writes to a partition before that
 * can lose a batch (KAFKA-15591). All problems are reported in one exception. Existing topics are
 * never altered: a difference that is not required is returned as a note, for the caller to report.
 */
public final class TopicProvisioner {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    /**
     * What provisioning found or did for one topic.
     *
     * @param created    whether this call created it
     * @param partitions its partition count now
     * @param notes      differences from its spec that do not stop the start (fewer partitions, other configs)
     */
    public record Outcome(String name, boolean created, int partitions, List<String> notes) {}

    private final Admin admin;
    private final Duration timeout;

    public TopicProvisioner(Admin admin) {
        this(admin, DEFAULT_TIMEOUT);
    }

    /** {@code timeout} bounds each step: listing, creating, describing, and waiting for leaders. */
    public TopicProvisioner(Admin admin, Duration timeout) {
        this.admin = admin;
        this.timeout = timeout;
    }

    /** Ensures every topic of {@code specs}; returns one outcome per spec, in order. */
    public List<Outcome> ensure(List<TopicSpec> specs, boolean createMissing) {
        try {
            Set<String> existing = admin.listTopics().names().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            List<String> problems = new ArrayList<>();
            List<Outcome> outcomes = new ArrayList<>();
            for (TopicSpec spec : specs) {
                if (existing.contains(spec.name())) {
                    outcomes.add(verify(spec, problems));
                } else if (createMissing) {
                    outcomes.add(create(spec));
                } else {
                    problems.add("topic " + spec.name() + " does not exist: create it with " + spec.partitions()
                            + " partitions and " + spec.configs() + ", or set topics.create-missing=true");
                }
            }
            if (!problems.isEmpty()) {
                throw new IllegalStateException("Kafka topics are not as Tally needs them:\n  - " + String.join("\n  - ", problems));
            }
            awaitLeaders(specs.stream().map(TopicSpec::name).toList(), timeout);
            return outcomes;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while provisioning topics", e);
        } catch (TimeoutException e) {
            throw unanswered(e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) throw unanswered(e);
            throw new IllegalStateException("cannot provision topics: " + e.getCause(), e);
        }
    }

    private IllegalStateException unanswered(Exception e) {
        return new IllegalStateException("Kafka did not answer within " + timeout.toSeconds() + " s while provisioning topics"
                + " (is the broker up, and kafka.bootstrap.servers right?)", e);
    }

    private Outcome create(TopicSpec spec) throws InterruptedException, ExecutionException, TimeoutException {
        try {
            // Replication follows the broker's default.replication.factor: 1 locally, 3 in production clusters.
            admin.createTopics(List.of(new NewTopic(spec.name(), java.util.Optional.of(spec.partitions()),
                    java.util.Optional.empty()).configs(spec.configs()))).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return new Outcome(spec.name(), true, spec.partitions(), List.of());
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) throw e;
            List<String> problems = new ArrayList<>(); // another instance was quicker: check what it created
            Outcome found = verify(spec, problems);
            if (!problems.isEmpty()) throw new IllegalStateException(String.join("; ", problems));
            return found;
        }
    }

    private Outcome verify(TopicSpec spec, List<String> problems) throws InterruptedException, ExecutionException, TimeoutException {
        List<String> notes = new ArrayList<>();
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, spec.name());
        Config actual = admin.describeConfigs(List.of(resource)).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(resource);
        for (Map.Entry<String, String> want : spec.configs().entrySet()) {
            var entry = actual.get(want.getKey());
            String have = entry == null ? null : entry.value();
            if (want.getValue().equals(have)) continue;
            if (spec.required().contains(want.getKey())) {
                problems.add("topic " + spec.name() + " has " + want.getKey() + "=" + have + "; Tally needs " + want.getValue()
                        + " (kafka-configs --alter --entity-type topics --entity-name " + spec.name() + " --add-config "
                        + want.getKey() + "=" + want.getValue() + ")");
            } else {
                notes.add(want.getKey() + "=" + have + " (Tally creates it with " + want.getValue() + ")");
            }
        }
        int partitions = admin.describeTopics(List.of(spec.name())).allTopicNames()
                .get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(spec.name()).partitions().size();
        if (partitions < spec.partitions()) {
            notes.add(partitions + " partitions, fewer than the " + spec.partitions()
                    + " Tally creates: it limits how many instances share the work");
        }
        return new Outcome(spec.name(), false, partitions, List.copyOf(notes));
    }

    /** Waits until every partition of the topics has a leader. */
    public void awaitLeaders(Collection<String> names, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<String> missing = new ArrayList<>();
            try {
                Map<String, TopicDescription> d = admin.describeTopics(names).allTopicNames().get();
                for (TopicDescription td : d.values()) {
                    for (TopicPartitionInfo p : td.partitions()) {
                        if (p.leader() == null || p.leader().isEmpty()) missing.add(td.name() + "-" + p.partition());
                    }
                }
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw new IllegalStateException("cannot describe topics " + names, e.getCause());
                }
                missing.add("metadata of " + names);
            }
            if (missing.isEmpty()) return;
            if (System.nanoTime() > deadline) throw new IllegalStateException("no leader after " + timeout + " for " + missing);
            Thread.sleep(100);
        }
    }
}
