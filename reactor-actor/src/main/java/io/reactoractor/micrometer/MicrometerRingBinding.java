package io.reactoractor.micrometer;

import java.util.concurrent.ConcurrentMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.reactoractor.internal.metrics.RingMetrics;
import io.reactoractor.ring.RingBuffer;

/**
 * The rings of one scheduler, reported to the binding's registry ({@link MicrometerRingMetrics} has the
 * table). Registered when a ring starts, removed when it terminates.
 *
 * <p>Two live rings with the same tags (same scheduler, group and ring name) would share meter ids, and
 * Micrometer hands the first ring's meters to the second: the second would read the first ring's
 * figures, and its removal would take away the first one's meters. So the first live ring owns the
 * ids; a namesake started while it lives is not metered (its getters still work), and an owner's
 * removal clears the ids for the next ring of that name.
 */
final class MicrometerRingBinding implements RingMetrics {

    private final MeterRegistry registry;
    /** Live owners by tag values, shared by every scheduler of the binding (ids are registry-wide). */
    private final ConcurrentMap<String, RingBuffer<?>> owners;

    MicrometerRingBinding(MeterRegistry registry, ConcurrentMap<String, RingBuffer<?>> owners) {
        this.registry = registry;
        this.owners = owners;
    }

    @Override
    public Registration bindRing(RingBuffer<?> ring) {
        String key = MicrometerRingMetrics.tags(ring).toString();
        RingBuffer<?> owner = owners.putIfAbsent(key, ring);
        if (owner != null) {
            // a live namesake owns these ids (see the class comment); the logger looked up now (rare), so a
            // factory installed later (Loggers.useCustomLoggers) applies
            reactor.util.Loggers.getLogger(MicrometerRingBinding.class).warn("ring " + ring.name() + " " + key
                    + " is not metered: a live ring of the same name and tags owns its meters (" + owner + ")");
            return Registration.NONE;
        }
        MeterSet meters;
        try {
            meters = MicrometerRingMetrics.register(registry, ring);
        } catch (RuntimeException | Error e) {
            owners.remove(key, ring);
            throw e;
        }
        return () -> {
            meters.removeAll();
            owners.remove(key, ring);
        };
    }

    @Override
    public String toString() {
        return "MicrometerRingBinding[" + registry.getClass().getSimpleName() + "]";
    }
}
