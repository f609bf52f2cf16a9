package io.reactoractor.internal.metrics;

import io.reactoractor.ring.RingBuffer;

/**
 * Where the {@link RingBuffer}s of one scheduler report; created by
 * {@link MetricsBinding#ringMetrics(String)}. Not API. This package names no metrics library, so
 * Micrometer stays an optional dependency.
 */
public interface RingMetrics {

    /** Records nothing. */
    RingMetrics NONE = new RingMetrics() {
    };

    /** Removes what {@link #bindRing} registered; idempotent. */
    @FunctionalInterface
    interface Registration {
        /** Does nothing. */
        Registration NONE = () -> {
        };

        /** Removes the ring's meters (idempotent). */
        void unbind();
    }

    /**
     * Registers the meters of a started ring, read from its getters on scrape (its consumers are
     * fixed by then). The ring calls {@link Registration#unbind()} once it terminated.
     *
     * @param ring the ring
     * @return what removes the meters again, not {@code null}
     */
    default Registration bindRing(RingBuffer<?> ring) {
        return Registration.NONE;
    }
}
