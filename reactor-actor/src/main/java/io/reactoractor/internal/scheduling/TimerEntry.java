package io.reactoractor.internal.scheduling;

/**
 * Something the {@link TimerQueue} fires at a deadline. {@link #fire()} runs on the timer thread
 * and must be short: it only hands work to an actor (offer to its mailbox and signal it).
 */
public abstract class TimerEntry {

    /** Deadline in {@code System.nanoTime()} terms; guarded by the timer's lock while queued. */
    long deadline;
    long seq;
    int heapIndex = -1;

    /** Fires the entry on the timer thread. */
    protected abstract void fire();

    /**
     * Whether this entry is user work that a graceful shutdown waits for ({@code true}), or
     * periodic work that a graceful shutdown cancels ({@code false}).
     *
     * @return whether a graceful shutdown waits for this entry
     */
    protected abstract boolean awaitedOnShutdown();

    /**
     * Whether this is the scheduler's own bookkeeping (never cancelled by a graceful shutdown).
     *
     * @return {@code true} for the scheduler's own entries
     */
    protected boolean internal() {
        return false;
    }

    /** Called when a graceful shutdown removed this (periodic) entry from the timer. */
    protected void shutdownCancelled() {
    }

    /** @return the deadline this entry was last scheduled for ({@code System.nanoTime()} terms) */
    public final long deadline() {
        return deadline;
    }
}
