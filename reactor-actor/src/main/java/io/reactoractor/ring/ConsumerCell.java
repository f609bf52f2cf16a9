package io.reactoractor.ring;

import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorGroup;
import io.reactoractor.internal.ContextThreadLocals;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.TimerEntry;
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
    /** The subscriber's context, asked for only under automatic context propagation (each turn). */
    private final java.util.function.Supplier<reactor.util.context.Context> subscriberContext;
    /** The turn being run; carrier-confined (set and cleared by the carrier holding the cell). */
    private Turn turn;
    /**
     * The armed back-off of a retry, or {@code null}. Whoever takes it out of here (by CAS: the timer
     * firing, or {@link #endBackoff()}) lifts the one suspension {@link #suspendFor} took, so it is
     * lifted exactly once.
     */
    private final AtomicReference<Backoff> backoff = new AtomicReference<>();

    ConsumerCell(ActorGroup group, String path, RingConsumer<?, ?> consumer) {
        super(Internals.engine(group), Internals.schedulingGroup(group), path, 1);
        this.consumer = consumer;
        this.subscriberContext = consumer::subscriberContext;
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

    /**
     * Suspends the consumer and arms the scheduler's timer to resume it after {@code nanos} (a retry's
     * back-off). Called on the consumer's turn, which must then end: the cell is neither re-queued
     * nor run while suspended, and a {@link #wake()} meanwhile is kept for the resume (the cell's
     * {@code resume()} re-reads {@link #hasWork()}). The suspension comes before the timer is armed,
     * so the timer can never lift a suspension that was not taken.
     *
     * @param nanos the back-off
     * @return {@code false} if the scheduler no longer takes timers (it is terminating); the
     *         suspension is lifted again then
     */
    boolean suspendFor(long nanos) {
        suspend();
        Backoff b = new Backoff();
        backoff.set(b); // volatile: read by endBackoff() (the cancel side of RingConsumer's Dekker check)
        if (!engine().scheduleTimer(b, System.nanoTime() + nanos)) {
            if (backoff.compareAndSet(b, null)) {
                resume();
            }
            return false;
        }
        return true;
    }

    /**
     * Ends a back-off early (downstream cancel, bad request, ring stopped): the consumer is resumed
     * now and sees why at its next turn. A no-op without a back-off or once the timer fired.
     */
    void endBackoff() {
        Backoff b = backoff.getAndSet(null);
        if (b != null) {
            engine().cancelTimer(b);
            resume();
        }
    }

    /** @return whether a retry's back-off is armed (momentary; for tests and diagnostics) */
    boolean backingOff() {
        return backoff.get() != null;
    }

    /** Disarms a back-off without resuming (the consumer terminated: the cell never runs again). */
    void dropBackoff() {
        Backoff b = backoff.getAndSet(null);
        if (b != null) {
            engine().cancelTimer(b);
        }
    }

    /** The timer entry of a back-off; fires on the timer thread, where only the thread-safe resume runs. */
    private final class Backoff extends TimerEntry {
        @Override
        protected void fire() {
            if (backoff.compareAndSet(this, null)) {
                resume();
            }
        }

        @Override
        protected boolean awaitedOnShutdown() {
            return true; // a graceful shutdown lets the retry happen, as for an actor's retry
        }
    }

    /** @return an error for work refused because the scheduler is shutting down */
    RuntimeException rejected(reactor.util.context.ContextView context) {
        return engine().rejectSignal(context);
    }

    @Override
    protected boolean hasWork() {
        return consumer.hasWork();
    }

    @Override
    protected void runTurn(Turn turn) {
        this.turn = turn;
        // inside Schedulers.onScheduleHook (the carrier decorates each turn: Turn), and inside the subscriber's
        // thread locals under Reactor's automatic context propagation (ContextThreadLocals)
        try (ContextThreadLocals.Scope ignored = ContextThreadLocals.open(subscriberContext)) {
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
