package io.tally.testsupport.pipeline;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.TopicPartition;

/** What the scale-out test and benchmark read about who owns which partitions. */
public final class ScaleOut {
    /** Flags of a two-instance run: a SIGKILLed member's partitions move after 10 s instead of the default 45 s. */
    public static final String[] FAST_FAILOVER = {"--kafka.session.timeout.ms=10000", "--kafka.heartbeat.interval.ms=2000"};

    private ScaleOut() {}

    /**
     * Partitions of {@code topic} assigned in {@code group}, by instance: the member's client id up to the
     * first {@code -StreamThread}, i.e. the {@code kafka.client.id} each instance is started with.
     */
    public static Map<String, Set<Integer>> assignment(Pipeline p, String group, String topic) {
        Map<String, Set<Integer>> out = new HashMap<>();
        try (Admin admin = p.admin()) {
            ConsumerGroupDescription d = admin.describeConsumerGroups(java.util.List.of(group)).all().get().get(group);
            for (MemberDescription m : d.members()) {
                String instance = m.clientId().replaceAll("-StreamThread.*$", "");
                for (TopicPartition tp : m.assignment().topicPartitions()) {
                    if (tp.topic().equals(topic)) out.computeIfAbsent(instance, k -> new TreeSet<>()).add(tp.partition());
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot describe group " + group + ": " + e, e);
        }
        return out;
    }
}
