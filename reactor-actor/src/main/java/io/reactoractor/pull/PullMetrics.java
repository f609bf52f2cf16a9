package io.reactoractor.pull;

import java.util.function.Supplier;

/**
 * Where a {@link PullConsumer} reports (an SPI: applications use a binding, they do not call it). A
 * consumer reports here when its scheduler's {@link io.reactoractor.ActorMetrics} also implements
 * {@link Provider}, as {@code io.reactoractor.micrometer.MicrometerActorMetrics} does; otherwise it
 * records nothing. This package names no metrics library, so Micrometer stays an optional
 * dependency.
 */
public interface PullMetrics {

    /** Records nothing. */
    PullMetrics NONE = new PullMetrics() {
    };

    /**
     * Implemented by an {@link io.reactoractor.ActorMetrics} that also meters pull consumers; the
     * capability is discovered with {@code instanceof} so that the scheduler's API does not depend on
     * this package.
     */
    interface Provider {
        /**
         * Creates where one consumer reports. Called once per {@link PullConsumer}.
         *
         * @param scheduler the name of the consumer's scheduler
         * @return the consumer's metrics, not {@code null}
         */
        PullMetrics pullMetrics(String scheduler);
    }

    /** Records what must be pushed per event (everything else is read from the stats on scrape). */
    interface GroupRecorder {
        /** Records nothing. */
        GroupRecorder NONE = nanos -> {
        };

        /** @param nanos time from a pull's submission to its group's actor handling it */
        void pullQueued(long nanos);
    }

    /**
     * Registers the meters of a new {@code (subject, group)}.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param stats   reads the group's current figures (cheap; called on scrape)
     * @return where to push per-pull figures
     */
    default GroupRecorder bindGroup(String subject, String group, Supplier<GroupStats> stats) {
        return GroupRecorder.NONE;
    }

    /**
     * Removes the meters of a group whose actor terminated (idempotent).
     *
     * @param subject the subject
     * @param group   the consumer group
     */
    default void unbindGroup(String subject, String group) {
    }
}
