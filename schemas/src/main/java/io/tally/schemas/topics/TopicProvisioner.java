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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates missing topics and verifies existing ones against their {@link TopicSpec}, then waits
 * until every partition has a leader: an idempotent producer that writes to a partition before that
 * can lose a batch (KAFKA-15591). All problems are reported in one exception.
 */
public final class TopicProvisioner {
    private static final Logger log = LoggerFactory.getLogger(TopicProvisioner.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final Admin admin;

    public TopicProvisioner(Admin admin) {
        this.admin = admin;
    }

    public void ensure(List<TopicSpec> specs, boolean createMissing) {
        try {
            Set<String> existing = admin.listTopics().names().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            List<String> problems = new ArrayList<>();
            for (TopicSpec spec : specs) {
                if (existing.contains(spec.name())) {
                    verify(spec, problems);
                } else if (createMissing) {
                    create(spec);
                } else {
                    problems.add("topic " + spec.name() + " does not exist: create it with " + spec.partitions()
                            + " partitions and " + spec.configs() + ", or set topics.create-missing=true");
                }
            }
            if (!problems.isEmpty()) {
                throw new IllegalStateException("Kafka topics are not as Tally needs them:\n  - " + String.join("\n  - ", problems));
            }
            awaitLeaders(specs.stream().map(TopicSpec::name).toList(), TIMEOUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while provisioning topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot provision topics: " + e.getMessage(), e);
        }
    }

    private void create(TopicSpec spec) throws InterruptedException, ExecutionException, TimeoutException {
        try {
            // Replication follows the broker's default.replication.factor: 1 locally, 3 in production clusters.
            admin.createTopics(List.of(new NewTopic(spec.name(), java.util.Optional.of(spec.partitions()),
                    java.util.Optional.empty()).configs(spec.configs()))).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            log.info("created topic {} ({} partitions, {})", spec.name(), spec.partitions(), spec.configs());
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) throw e; // another instance was quicker
        }
    }

    private void verify(TopicSpec spec, List<String> problems) throws InterruptedException, ExecutionException, TimeoutException {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, spec.name());
        Config actual = admin.describeConfigs(List.of(resource)).all().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(resource);
        for (Map.Entry<String, String> want : spec.configs().entrySet()) {
            var entry = actual.get(want.getKey());
            String have = entry == null ? null : entry.value();
            if (want.getValue().equals(have)) continue;
            if (spec.required().contains(want.getKey())) {
                problems.add("topic " + spec.name() + " has " + want.getKey() + "=" + have + "; Tally needs " + want.getValue()
                        + " (kafka-configs --alter --entity-type topics --entity-name " + spec.name() + " --add-config "
                        + want.getKey() + "=" + want.getValue() + ")");
            } else {
                log.warn("topic {} has {}={} (Tally creates it with {})", spec.name(), want.getKey(), have, want.getValue());
            }
        }
        int partitions = admin.describeTopics(List.of(spec.name())).allTopicNames()
                .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(spec.name()).partitions().size();
        if (partitions < spec.partitions()) {
            log.warn("topic {} has {} partitions, fewer than the {} Tally creates: it limits how many instances share the work",
                    spec.name(), partitions, spec.partitions());
        }
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
