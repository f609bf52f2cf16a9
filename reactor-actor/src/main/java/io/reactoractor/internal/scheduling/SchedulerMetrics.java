package io.reactoractor.internal.scheduling;

/**
 * Where a scheduler reports what it does (an SPI, created by an {@code io.reactoractor.ActorMetrics}).
 * The default records nothing; {@code io.reactoractor.micrometer.MicrometerActorMetrics} exports to
 * Micrometer. This package names no metrics library, so Micrometer stays an optional dependency.
 *
 * <p>A binding keeps whatever per-group state it needs itself (keyed by the group, dropped in
 * {@link #unbindGroup}): the engine's classes carry no metrics fields.
 *
 * <p>Binding and unbinding never throw (the contract of {@code io.reactoractor.internal.metrics}): the
 * engine calls them from group creation, a group's dispose and the last exiting carrier.
 *
 * <p>Counters and gauges are read from the engine on scrape (function counters/gauges), so the hot
 * path pays nothing for them; only the per-turn scheduling delay is pushed.
 */
public interface SchedulerMetrics {

    /** Records nothing. */
    SchedulerMetrics NONE = new SchedulerMetrics() {
    };

    /**
     * Registers the scheduler-wide meters. Called once, when the engine is created.
     *
     * @param engine the engine to read on scrape
     */
    default void bindScheduler(SchedulerEngine engine) {
    }

    /**
     * Registers the meters of a new group.
     *
     * @param engine the group's engine
     * @param group  the new group
     */
    default void bindGroup(SchedulerEngine engine, SchedulingGroup group) {
    }

    /**
     * Removes the meters of a group that was disposed (its name may be reused by a new group), and any
     * state kept for it.
     *
     * @param group the disposed group
     */
    default void unbindGroup(SchedulingGroup group) {
    }

    /**
     * Whether {@link #schedulingDelay} wants to be called (saves a clock read per turn when not).
     *
     * @return {@code true} to receive the scheduling delays
     */
    default boolean recordsSchedulingDelay() {
        return false;
    }

    /**
     * Records the time an actor of {@code group} waited between becoming ready and running.
     *
     * @param group the actor's group
     * @param nanos the wait, in nanoseconds
     */
    default void schedulingDelay(SchedulingGroup group, long nanos) {
    }

    /** Removes everything this binding registered. Called when the scheduler terminates. */
    default void close() {
    }
}
