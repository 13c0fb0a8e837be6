package io.tally.loadgen.demo;

import java.util.List;

/**
 * Says when the pipeline has drained, from one {@link Progress} a second once loadgen has ended:
 * everything produced was read, nothing is in flight, and the counters of the aggregation and the sink
 * did not move for three seconds (bucket updates leave the aggregation at its commit interval, 1 s; the
 * sink writes within its flush window, 0.2 s). The sink's lag must be 0 too, except after ten quiet
 * seconds: updates of an aborted transaction count as emitted but are never read.
 */
final class DrainCheck {
    static final int QUIET_SECONDS = 3;
    static final int QUIET_SECONDS_WITH_SINK_LAG = 10;

    private int quiet;
    private List<Long> last;

    /** @param produced every record loadgen had acknowledged */
    boolean drained(Progress p, long produced) {
        List<Long> activity = p.activity();
        if (p.ingested() >= produced && p.aggLag() == 0 && p.inFlight() == 0 && activity.equals(last)) {
            quiet++;
        } else {
            quiet = 0;
        }
        last = activity;
        return (quiet >= QUIET_SECONDS && p.sinkLag() == 0) || quiet >= QUIET_SECONDS_WITH_SINK_LAG;
    }
}
