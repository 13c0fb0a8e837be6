package io.tally.loadgen;

import org.apache.commons.rng.UniformRandomProvider;
import org.apache.commons.rng.sampling.distribution.RejectionInversionZipfSampler;
import org.apache.commons.rng.sampling.distribution.SharedStateDiscreteSampler;

/**
 * Entity indexes drawn from a Zipf distribution: index k has rank k+1, so entity 0 ({@code c-0},
 * {@code sku-0}) is the busiest, as a few customers and SKUs dominate real traffic.
 *
 * <p>Not thread-safe: it draws from the generator's random source, whose order of use is what makes a
 * run reproducible.
 */
public final class ZipfEntities {
    private final SharedStateDiscreteSampler sampler;

    /**
     * @param population how many distinct ids exist (ranks 1..population)
     * @param exponent   Zipf exponent s; 0 gives a uniform choice, larger values a hotter head
     */
    public ZipfEntities(UniformRandomProvider rng, int population, double exponent) {
        // Rejection-inversion (Hörmann and Derflinger): O(1) per sample for any population, no tables.
        this.sampler = RejectionInversionZipfSampler.of(rng, population, exponent);
    }

    /** The next id's 0-based index (rank - 1). */
    public int nextIndex() {
        return sampler.sample() - 1;
    }
}
