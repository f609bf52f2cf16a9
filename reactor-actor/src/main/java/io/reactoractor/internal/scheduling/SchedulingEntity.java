package io.reactoractor.internal.scheduling;

/**
 * Something the run queue orders by virtual time: an {@link ActorCell} inside its group's lane, or a
 * {@link GroupLane} (a group on one carrier's queue) at the root; a {@link SchedulingGroup} keeps the
 * global virtual time its lanes are keyed by.
 *
 * <p>The fields are guarded by the lock of the queue that holds the entity (for an actor: the queue it
 * waits in, or the carrier running it), except a group's {@link #vtime}, which is global and accessed
 * atomically ({@link SchedulingGroup#charge}).
 */
abstract class SchedulingEntity {

    /** Weighted CPU time used, in nanoseconds × {@code 1 / weight}; only meaningful once {@link #placed}. */
    long vtime;
    /** Whether {@link #vtime} was ever set (a brand-new entity is placed at the floor). */
    boolean placed;
    /** Position in the {@link VTimeHeap} that holds this entity, or -1. */
    int heapIndex = -1;
    /** Tie-breaker: order of insertion into the ready set (FIFO among equal virtual times). */
    long seq;
    /**
     * {@code System.nanoTime()} when the entity last became ready, for the scheduling-delay metric only;
     * without that metric a wake-up from outside the pool reads no clock and leaves 0 here.
     */
    long readyAt;

    SchedulingEntity() {
    }

    /**
     * The weight: a larger weight means a larger CPU share (virtual time advances more slowly).
     *
     * @return the weight, at least 1
     */
    public abstract int weight();
}
