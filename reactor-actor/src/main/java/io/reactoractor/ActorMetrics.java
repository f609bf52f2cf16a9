package io.reactoractor;

import io.reactoractor.internal.metrics.MetricsBinding;

/**
 * Where an {@link ActorScheduler}, and the components built on it (such as
 * {@code io.reactoractor.pull.PullConsumer}), report their figures; given to
 * {@link ActorScheduler.Builder#metrics(ActorMetrics)}.
 *
 * <p>An opaque handle: obtain one from a binding, today
 * {@code io.reactoractor.micrometer.MicrometerActorMetrics.of(meterRegistry)} (the only package of the
 * library that needs Micrometer), or use {@link #NONE}, the default. The type names no metrics library
 * and no engine type, so the scheduler's classes load and can be introspected (Mockito, Spring, Kotlin
 * reflection) when Micrometer is absent. Applications do not implement it: the builder refuses a handle
 * that did not come from a binding of this library. Without a binding the same figures stay available
 * through {@link ActorScheduler#stats()}.
 */
public interface ActorMetrics {

    /** Records nothing (the default). */
    ActorMetrics NONE = MetricsBinding.NONE;
}
