package io.reactoractor.benchmarks.fairness;

import java.util.concurrent.locks.LockSupport;

/**
 * Paces an open-loop producer thread: one tick every {@code periodNanos}, whatever the consumers do.
 * If the producer itself was descheduled for more than a period, it skips the missed ticks instead of
 * bursting to catch up (a burst would measure the OS, not the scheduler under test).
 */
final class Pacer {

    private final long periodNanos;
    private long next = System.nanoTime();

    Pacer(long periodNanos) {
        this.periodNanos = periodNanos;
    }

    /** Waits for the next tick; returns {@code System.nanoTime()} at the tick. */
    long awaitTick() {
        next += periodNanos;
        long now;
        while ((now = System.nanoTime()) - next < 0) {
            LockSupport.parkNanos(next - now);
        }
        if (now - next > periodNanos) {
            next = now;
        }
        return now;
    }
}
