package io.reactoractor.micrometer;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.reactoractor.internal.metrics.MetricsBinding;
import io.reactoractor.internal.metrics.PullMetrics;
import io.reactoractor.internal.metrics.RingMetrics;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.internal.scheduling.SchedulerMetrics;

/** The {@code ActorMetrics} handle {@link MicrometerActorMetrics#of} returns: one registry, any number of schedulers. */
final class MicrometerBinding implements MetricsBinding {

    private final MeterRegistry registry;
    /** The live rings that own their meter ids in {@link #registry} (see {@link MicrometerRingBinding}). */
    private final ConcurrentMap<String, RingBuffer<?>> ringOwners = new ConcurrentHashMap<>();

    MicrometerBinding(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public SchedulerMetrics schedulerMetrics(String scheduler) {
        return new MicrometerSchedulerMetrics(registry, scheduler);
    }

    @Override
    public PullMetrics pullMetrics(String scheduler) {
        return new MicrometerPullMetrics(registry, scheduler);
    }

    @Override
    public RingMetrics ringMetrics(String scheduler) {
        return new MicrometerRingBinding(registry, ringOwners);
    }

    @Override
    public String toString() {
        return "MicrometerActorMetrics[" + registry.getClass().getSimpleName() + "]";
    }
}
