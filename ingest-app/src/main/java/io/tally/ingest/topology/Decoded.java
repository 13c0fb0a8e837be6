package io.tally.ingest.topology;

import io.tally.rules.source.SourceEvent;

/** The outcome of stage 1: an event, or the raw bytes of a record bound for the DLQ. */
record Decoded(SourceEvent event, byte[] raw) {
    static Decoded ok(SourceEvent event) {
        return new Decoded(event, null);
    }

    static Decoded rejected(byte[] raw) {
        return new Decoded(null, raw);
    }

    boolean isRejected() {
        return event == null;
    }
}
