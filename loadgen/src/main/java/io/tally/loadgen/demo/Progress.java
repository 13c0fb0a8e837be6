package io.tally.loadgen.demo;

import java.util.List;

/**
 * Where the pipeline stands for this run, in whole numbers: counters since the baseline scrape taken
 * before loadgen started (with --attach the apps may have run earlier demos), lags and in-flight
 * documents as they stand.
 *
 * @param aggLag  records the aggregation has yet to read: its input topic and its repartition topic
 * @param sinkLag bucket updates the aggregation emitted and the sink has not read yet
 */
record Progress(long ingested, long aggLag, long emitted, long dlq, long updates, long docs, long stale, long docsDlq,
                long ru, long throttled, long sinkLag, long inFlight) {

    /** @param produced records loadgen has had acknowledged so far */
    static Progress of(PipelineMetrics now, PipelineMetrics base, long produced) {
        // Kafka Streams measures records-lag at each fetch and stops fetching a partition while it has a
        // backlog buffered, so what loadgen produced and the aggregation has not read counts as lag too.
        double unread = produced - (now.ingested() - whole(base.ingested()));
        double aggLag = now.otherLag() + Math.max(now.inputLag(), unread);
        // Not the sink's records-lag-max gauge: a windowed maximum that stays up for a minute after the
        // sink has caught up.
        double sinkLag = Math.max(now.emitted() - now.updates(), 0);
        return new Progress(since(now.ingested(), base.ingested()), whole(aggLag), since(now.emitted(), base.emitted()),
                since(now.dlq(), base.dlq()), since(now.updates(), base.updates()), since(now.docs(), base.docs()),
                since(now.stale(), base.stale()), since(now.docsDlq(), base.docsDlq()), since(now.ru(), base.ru()),
                since(now.throttled(), base.throttled()), whole(sinkLag), whole(now.inFlight()));
    }

    /** The counters that move while the pipeline still works; equal over three seconds means quiet. */
    List<Long> activity() {
        return List.of(ingested, emitted, updates, docs, stale, docsDlq);
    }

    private static long since(double now, double base) {
        return whole(now) - whole(base);
    }

    private static long whole(double v) {
        return (long) Math.rint(v);
    }
}
