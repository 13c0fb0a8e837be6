package io.tally.ingest.sink;

/**
 * The two operations of the stale-write protocol. A bucket is first written as a conditional patch
 * ({@code set} of every field, filter {@code FROM c WHERE c.ver < @ver}): it applies only when the stored
 * version is older, answers 412 when it is not, and 404 when the bucket does not exist. A 404 turns the
 * write into a create (201, or 409 when someone created it meanwhile, which turns it back into a
 * conditional patch). No step can replace a newer {@code ver} with an older one, whichever sink instance
 * sends it and however late it arrives. A bucket's first update ({@code tally.bucket.created} header) starts
 * as a create instead, skipping the 404 it would surely get; a 409 there turns it into the conditional patch.
 */
public enum WriteKind { PATCH_IF_NEWER, CREATE }
