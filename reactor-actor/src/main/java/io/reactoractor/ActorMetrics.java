package io.reactoractor;

import io.reactoractor.scheduling.SchedulerMetrics;

/**
 * Where an {@link ActorScheduler}, and the components built on it, report their figures; given to
 * {@link ActorScheduler.Builder#metrics(ActorMetrics)}.
 *
 * <p>This type names no metrics library, so the scheduler's classes load and can be introspected
 * (Mockito, Spring, Kotlin reflection) when Micrometer is absent. The Micrometer binding is created
 * with {@code io.reactoractor.micrometer.MicrometerActorMetrics.of(meterRegistry)}, the only package
 * of the library that needs Micrometer. Without a binding ({@link #NONE}, the default) the same
 * figures stay available through {@link ActorScheduler#stats()}.
 *
 * <p>A binding that also implements {@code io.reactoractor.pull.PullMetrics.Provider} receives the
 * figures of the pull consumers built on the scheduler.
 */
@FunctionalInterface
public interface ActorMetrics {

    /** Records nothing (the default). */
    ActorMetrics NONE = scheduler -> SchedulerMetrics.NONE;

    /**
     * Creates where one scheduler reports. Called once by every {@link ActorScheduler.Builder#build()},
     * so one binding can serve several schedulers, each with its own meters.
     *
     * @param scheduler the scheduler's name
     * @return the scheduler's metrics, not {@code null}
     */
    SchedulerMetrics schedulerMetrics(String scheduler);
}
