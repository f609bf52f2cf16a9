package io.reactoractor.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.reactoractor.internal.metrics.MetricsBinding;
import io.reactoractor.internal.metrics.PullMetrics;
import io.reactoractor.internal.scheduling.SchedulerMetrics;

/** The {@code ActorMetrics} handle {@link MicrometerActorMetrics#of} returns: one registry, any number of schedulers. */
final class MicrometerBinding implements MetricsBinding {

    private final MeterRegistry registry;

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
    public String toString() {
        return "MicrometerActorMetrics[" + registry.getClass().getSimpleName() + "]";
    }
}
