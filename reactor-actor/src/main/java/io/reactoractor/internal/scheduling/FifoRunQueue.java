package io.reactoractor.internal.scheduling;

import java.util.ArrayDeque;

/**
 * A first-in first-out run queue (QMQ's {@code fair=false}): actors run in the order they became
 * ready, each turn bounded only by the quota. Kept to measure what fairness buys and costs; CPU
 * time is still accounted per group for statistics. One queue and one lock for all carriers: the
 * comparison baseline of the benchmarks, not a scalable design.
 */
final class FifoRunQueue implements RunQueue {

    private final ArrayDeque<ActorCell> queue = new ArrayDeque<>();
    private int running;
    /** Lock acquisitions (written under the lock, read racily by {@link #lockAcquisitions()}). */
    private long locks;
    private volatile int ready;

    @Override
    public synchronized void enqueue(ActorCell cell, long now, int carrier) {
        locks++;
        cell.readyAt = now;
        queue.addLast(cell);
        ready = ready + 1;
    }

    @Override
    public synchronized ActorCell take(int carrier, long now) {
        locks++;
        return takeLocked();
    }

    private ActorCell takeLocked() {
        ActorCell cell = queue.pollFirst();
        if (cell != null) {
            ready = ready - 1;
            running++;
        }
        return cell;
    }

    @Override
    public synchronized ActorCell finishTurn(ActorCell cell, long elapsed, boolean requeue, long now,
            boolean takeNext, boolean chained, int carrier, CarrierCharge charge) {
        locks++;
        if (!chained) {
            running--;
        }
        charge.add(cell.group(), 0L, Math.max(0L, elapsed));
        if (requeue) {
            cell.readyAt = now;
            queue.addLast(cell);
            ready = ready + 1;
        }
        return takeNext ? takeLocked() : null;
    }

    @Override
    public void finishChainedTurn(ActorCell cell, long elapsed, CarrierCharge charge) {
        charge.add(cell.group(), 0L, Math.max(0L, elapsed));
    }

    @Override
    public boolean shouldPreempt(ActorCell running, long turnElapsed, long now, int carrier) {
        return false;
    }

    @Override
    public int readyCount() {
        return ready;
    }

    @Override
    public synchronized boolean isQuiescent() {
        return ready == 0 && running == 0;
    }

    @Override
    public long lockAcquisitions() {
        return locks;
    }

    /** One queue for all carriers: every acquisition is shared traffic. */
    @Override
    public long remoteLockAcquisitions() {
        return locks;
    }
}
