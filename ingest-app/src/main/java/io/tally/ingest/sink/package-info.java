/**
 * Stages 7-10: the Cosmos sink. {@link io.tally.ingest.sink.BucketSink} wires a poll loop
 * ({@link io.tally.ingest.sink.UpdateSource}) to the {@link io.tally.ingest.sink.Coalescer} (newest ver per
 * bucket per window), the {@link io.tally.ingest.sink.BulkWriter} (grouped bulk calls, conditional
 * patch/create, classified retries, AIMD concurrency, DLQ, stall) and the
 * {@link io.tally.ingest.sink.OffsetTracker} (commit only each partition's durable prefix). Design notes,
 * retry layering and sizing: docs/sink.md.
 */
package io.tally.ingest.sink;
