package io.tally.loadgen;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Live counts of one run, written by the pacer thread (sent) and the sender's result thread (acked,
 * failed), read by the progress reporter from its own thread. Thread-safe.
 */
public final class SendCounters {
    final AtomicLong sent = new AtomicLong();
    final AtomicLong acked = new AtomicLong();
    final AtomicLong failed = new AtomicLong();

    public long sent() { return sent.get(); }

    public long acked() { return acked.get(); }

    public long failed() { return failed.get(); }
}
