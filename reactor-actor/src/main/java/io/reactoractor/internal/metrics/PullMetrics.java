package io.reactoractor.internal.metrics;

import java.util.function.Supplier;

import io.reactoractor.pull.GroupStats;

/**
 * Where a {@code PullConsumer} reports; created by {@link MetricsBinding#pullMetrics(String)}. Not API.
 * This package names no metrics library, so Micrometer stays an optional dependency.
 */
public interface PullMetrics {

    /** Records nothing. */
    PullMetrics NONE = new PullMetrics() {
    };

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

    /**
     * Removes the meters of every group, now: the consumer was disposed, or its scheduler terminated (inside
     * their {@code dispose()}, while a pair's actor may still be in a turn). Later {@link #bindGroup} calls
     * register nothing and later {@link #unbindGroup} calls find nothing (idempotent).
     */
    default void close() {
    }
}
