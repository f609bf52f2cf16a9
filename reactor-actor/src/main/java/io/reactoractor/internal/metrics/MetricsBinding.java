package io.reactoractor.internal.metrics;

import io.reactoractor.ActorMetrics;
import io.reactoractor.internal.scheduling.SchedulerMetrics;

/**
 * What an {@link ActorMetrics} handle is inside: it creates where each scheduler, and each pull
 * consumer and ring buffer built on one, reports. Not API: the public type is the opaque
 * {@link ActorMetrics}, so the engine's reporting interfaces stay out of the library's public
 * signatures. The Micrometer binding
 * ({@code io.reactoractor.micrometer}) is the one implementation outside {@link #NONE}.
 */
public interface MetricsBinding extends ActorMetrics {

    /** Records nothing; {@link ActorMetrics#NONE} is this instance. */
    MetricsBinding NONE = new MetricsBinding() {
        @Override
        public SchedulerMetrics schedulerMetrics(String scheduler) {
            return SchedulerMetrics.NONE;
        }

        @Override
        public String toString() {
            return "ActorMetrics.NONE";
        }
    };

    /**
     * Creates where one scheduler reports. Called once by every {@code ActorScheduler.Builder.build()},
     * so one binding can serve several schedulers, each with its own meters.
     *
     * @param scheduler the scheduler's name
     * @return the scheduler's metrics, not {@code null}
     */
    SchedulerMetrics schedulerMetrics(String scheduler);

    /**
     * Creates where one pull consumer reports. Called once per {@code PullConsumer}.
     *
     * @param scheduler the name of the consumer's scheduler
     * @return the consumer's metrics, not {@code null}
     */
    default PullMetrics pullMetrics(String scheduler) {
        return PullMetrics.NONE;
    }

    /**
     * Creates where the ring buffers of one scheduler report. Called once per started
     * {@code RingBuffer}.
     *
     * @param scheduler the name of the rings' scheduler
     * @return the rings' metrics, not {@code null}
     */
    default RingMetrics ringMetrics(String scheduler) {
        return RingMetrics.NONE;
    }
}
