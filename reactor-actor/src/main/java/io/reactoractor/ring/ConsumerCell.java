package io.reactoractor.ring;

import io.reactoractor.ActorGroup;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.Turn;

/**
 * The scheduler-facing half of a {@link RingConsumer}: an actor cell of the ring's
 * {@link ActorGroup}. This is the only class of the package that touches the scheduling engine, so
 * that moving the engine's package is an import rewrite here and nowhere else.
 *
 * <p>The cell has work ({@link #hasWork()}) exactly when the consumer can make progress: an event is
 * available below its barrier (and, for a published consumer, downstream demand is left), or a
 * terminal signal is pending. Without work the cell is neither queued nor running: the consumer is
 * <em>parked</em> and holds no thread. Whoever creates work calls {@link #wake()}; the lost-signal
 * guard is the cell's (see {@link ActorCell}: after a turn, {@code SCHEDULED} is cleared by a CAS and
 * {@link #hasWork()} is read again, so a signal that saw {@code SCHEDULED} set is never lost).
 */
final class ConsumerCell extends ActorCell {

    private final RingConsumer<?, ?> consumer;
    /** The turn being run; carrier-confined (set and cleared by the carrier holding the cell). */
    private Turn turn;

    ConsumerCell(ActorGroup group, String path, RingConsumer<?, ?> consumer) {
        super(Internals.engine(group), Internals.schedulingGroup(group), path, 1);
        this.consumer = consumer;
    }

    /** Makes the consumer runnable if it has work; a no-op while it runs or after it terminated. */
    void wake() {
        signal();
    }

    /** @return whether the consumer may start another batch in this turn (quota, preemption) */
    boolean shouldContinue() {
        return turn.shouldContinue();
    }

    /** Opens a batch: hog detection and run-next bookkeeping of the turn. */
    void beginBatch() {
        turn.beginTask();
    }

    /** Closes a batch opened by {@link #beginBatch()}. */
    void endBatch() {
        turn.endTask();
    }

    /** @return an error for work refused because the scheduler is shutting down */
    RuntimeException rejected() {
        return engine().reject();
    }

    @Override
    protected boolean hasWork() {
        return consumer.hasWork();
    }

    @Override
    protected void runTurn(Turn turn) {
        this.turn = turn;
        try {
            consumer.runTurn();
        } finally {
            this.turn = null;
        }
    }

    @Override
    protected void drainTerminated() {
        consumer.cellTerminated();
    }
}
