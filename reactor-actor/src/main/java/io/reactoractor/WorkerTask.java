package io.reactoractor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import reactor.core.Disposable;

/**
 * An immediate task of a worker; the {@link Disposable} handed to the caller.
 *
 * <pre>
 *   PENDING  --run-->     RUNNING --> DONE
 *   PENDING  --dispose--> CANCELLED          (it will be skipped when its turn comes)
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

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WorkerTask.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Runnable task;
    private final WorkerCell cell;
    private volatile int state;

    WorkerTask(Runnable task, WorkerCell cell) {
        this.task = task;
        this.cell = cell;
    }

    @Override
    public void run() {
        if (!STATE.compareAndSet(this, PENDING, RUNNING)) {
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

    @Override
    public void cancelPending() {
        STATE.compareAndSet(this, PENDING, CANCELLED);
    }

    /** @return {@code true} if the task was still pending and is now cancelled */
    boolean cancelIfPending() {
        return STATE.compareAndSet(this, PENDING, CANCELLED) || state == CANCELLED;
    }

    @Override
    public void dispose() {
        int s = state;
        if (s == PENDING || s == RUNNING) {
            // a lost race means it just started (PENDING -> RUNNING: retry once) or ended (DONE)
            if (!STATE.compareAndSet(this, s, CANCELLED) && s == PENDING) {
                STATE.compareAndSet(this, RUNNING, CANCELLED);
            }
        }
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
