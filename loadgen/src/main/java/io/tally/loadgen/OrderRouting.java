package io.tally.loadgen;

/**
 * Which logical events go out as orders: a pure function of the seed and the sequence number, drawn
 * from a hash rather than from the generator's random stream. So the share changes where an event goes
 * and nothing else: the same seed gives the same logical events, and the same ground truth, at any share.
 *
 * <p>Stateless and thread-safe.
 */
final class OrderRouting {
    /** Keeps the routing hash apart from any other use of the seed. */
    private static final long SALT = 0x6f72646572734c47L;
    private final long seed;
    private final double share;

    OrderRouting(long seed, double share) {
        this.seed = seed;
        this.share = share;
    }

    Destination of(long sequence) {
        if (share <= 0) return Destination.TRANSACTIONS;
        // The top 53 bits as a uniform double in [0, 1), as SplittableRandom.nextDouble does.
        double u = (hash(sequence) >>> 11) * 0x1.0p-53;
        return u < share ? Destination.ORDERS : Destination.TRANSACTIONS;
    }

    /** A second, independent bit of the same hash, for choices made only for orders. */
    boolean flip(long sequence) {
        return (hash(sequence) & 1) != 0;
    }

    private long hash(long sequence) {
        return mix(mix(seed ^ SALT) + sequence);
    }

    /** Stafford's variant 13 of the MurmurHash3 finalizer (the mixer of SplittableRandom). */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
