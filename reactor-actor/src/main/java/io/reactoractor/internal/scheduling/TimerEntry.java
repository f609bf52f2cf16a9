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

    /**
     * Whether a graceful shutdown leaves this entry queued although it does not wait for it ({@link
     * #awaitedOnShutdown()} {@code false}): it keeps firing while the shutdown runs and goes with the
     * scheduler's termination. For an entry whose firing the shutdown may wait for indirectly: a pull pair's
     * tick, which also sends again the acknowledgements its store failed to record, which hold the shutdown
     * open ({@link ActorCell#awaitsReply()}); removed, the retry never came and the shutdown never ended. The
     * scheduler's own entries ({@link #internal()}) are kept too.
     *
     * @return whether a graceful shutdown leaves this entry queued
     */
    protected boolean keptOnShutdown() {
        return internal();
    }

    /** Called when a graceful shutdown removed this (periodic) entry from the timer. */
    protected void shutdownCancelled() {
    }

    /** @return the deadline this entry was last scheduled for ({@code System.nanoTime()} terms) */
    public final long deadline() {
        return deadline;
    }
}
