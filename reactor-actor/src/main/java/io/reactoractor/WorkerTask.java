package io.reactoractor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import reactor.core.Disposable;

/**
 * An immediate task of a worker; the {@link Disposable} handed to the caller.
 *
 * <pre>
 *   PENDING  --run-->     RUNNING --> DONE
 *   PENDING  --dispose--> CANCELLED_QUEUED   (skipped when the drain reaches it, and not counted as run; the
 *                                             Runnable is dropped at once, so what it captured is not kept
 *                                             by a mailbox that waits, e.g. a suspended worker's, and the
 *                                             worker's pending count leaves it out until the drain)
 *   CANCELLED_QUEUED --drained or run--> CANCELLED   (uncounted by the CAS that wins: once)
 *   PENDING  --worker terminated, drained--> CANCELLED
 *   RUNNING  --dispose--> CANCELLED          (disposed at once, as Reactor's WorkerTask; the run is
 *                                             not interrupted, and its end stores DONE)
 *   DONE     --dispose--> unchanged
 * </pre>
 */
final class WorkerTask implements MailboxTask, Disposable {

    private static final int PENDING = 0;
    private static final int RUNNING = 1;
    private static final int DONE = 2;
    private static final int CANCELLED = 3;
    /** Cancelled while in the mailbox and counted in {@link WorkerCell#cancelledWhileQueued}. */
    private static final int CANCELLED_QUEUED = 4;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WorkerTask.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Dropped ({@code null}) by the cancellation that moves PENDING to a cancelled state. Plain: only the run that moved
     * PENDING to RUNNING reads it, and that CAS and the cancelling one exclude each other (the write follows
     * the cancelling CAS, so it is never seen by a run that won).
     */
    private Runnable task;
    private final WorkerCell cell;
    private volatile int state;

    WorkerTask(Runnable task, WorkerCell cell) {
        this.task = task;
        this.cell = cell;
    }

    @Override
    public void run() {
        if (!STATE.compareAndSet(this, PENDING, RUNNING)) {
            takeCancelled(); // cancelled after the drain looked (takeCancelled): uncounted here instead
            return;
        }
        try {
            task.run();
        } finally {
            // release, not a CAS (this is every task's path): a dispose() that moved RUNNING to CANCELLED
            // meanwhile is overwritten with DONE, which isDisposed() reports the same way
            STATE.setRelease(this, DONE);
        }
    }

    /** Drained from a terminated worker's mailbox: no longer in it, so not counted as waiting there. */
    @Override
    public void cancelPending() {
        if (STATE.compareAndSet(this, PENDING, CANCELLED)) {
            task = null;
        }
    }

    @Override
    public boolean takeCancelled() {
        if (state == CANCELLED_QUEUED && STATE.compareAndSet(this, CANCELLED_QUEUED, CANCELLED)) {
            cell.cancelledWhileQueued(-1);
            return true;
        }
        return false;
    }

    /** @return {@code true} if the task was still pending and is now cancelled */
    boolean cancelIfPending() {
        if (STATE.compareAndSet(this, PENDING, CANCELLED_QUEUED)) {
            cancelledQueued();
            return true;
        }
        return state >= CANCELLED;
    }

    @Override
    public void dispose() {
        int s = state;
        if (s == PENDING) {
            if (STATE.compareAndSet(this, PENDING, CANCELLED_QUEUED)) {
                cancelledQueued();
                return;
            }
            s = state; // lost the race: it just started (RUNNING: cancelled below) or was cancelled or ran
        }
        if (s == RUNNING) {
            STATE.compareAndSet(this, RUNNING, CANCELLED); // or it just ended (DONE)
        }
    }

    /** PENDING to CANCELLED by this thread: the task waits in the mailbox until the drain skips it. */
    private void cancelledQueued() {
        task = null;
        cell.cancelledWhileQueued(1);
    }

    /**
     * Disposed once it ran, was cancelled, or its worker was disposed: a disposed worker's queued
     * tasks report it at once (Reactor's contract), even before the carrier that holds the actor
     * drains them, which waits for the task running now to end.
     */
    @Override
    public boolean isDisposed() {
        return state >= DONE || cell.isTerminated();
    }
}
