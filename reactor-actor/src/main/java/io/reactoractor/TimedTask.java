package io.reactoractor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.scheduling.TimerEntry;
import reactor.core.Disposable;

/**
 * A delayed or periodic task: armed in the scheduler's single timer, delivered into its worker's
 * mailbox when due, and run on that worker's actor like any other task.
 *
 * <pre>
 *   state    | event                          | next
 *   ---------+--------------------------------+-------------------------------------------------
 *   WAITING  | timer fires                    | QUEUED (offered to the mailbox, actor signalled)
 *   QUEUED   | the actor runs it              | RUNNING
 *   RUNNING  | one-shot ends                  | DONE
 *   RUNNING  | periodic ends                  | WAITING (re-armed at previous deadline + period,
 *            |                                |  or QUEUED again at once for period 0)
 *   RUNNING  | task throws (periodic)         | DONE (like ScheduledExecutorService: no further runs)
 *   any but  | dispose / worker terminated /  | CANCELLED (timer entry removed; a queued copy is
 *   DONE     | graceful shutdown (periodic)   |  skipped; a running one finishes, not re-armed)
 * </pre>
 * A dispose racing the re-arm (RUNNING → WAITING, then arming) is settled by re-reading the state
 * after arming: see {@code rearm()}. {@link #isDisposed()} is also true as soon as the worker is
 * disposed, before the worker's drain reaches the task.
 * Fixed-rate periods: a late run does not shift later deadlines (as
 * {@code ScheduledExecutorService.scheduleAtFixedRate}); runs never overlap.
 */
final class TimedTask extends TimerEntry implements MailboxTask, Disposable {

    private static final int WAITING = 0;
    private static final int QUEUED = 1;
    private static final int RUNNING = 2;
    private static final int DONE = 3;
    private static final int CANCELLED = 4;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(TimedTask.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Runnable task;
    private final WorkerCell cell;
    private final long periodNanos; // < 0: one-shot; 0: re-run at once; > 0: fixed rate
    private final TimedTasks tracker; // may be null
    private volatile int state;

    TimedTask(Runnable task, WorkerCell cell, long periodNanos, TimedTasks tracker) {
        this.task = task;
        this.cell = cell;
        this.periodNanos = periodNanos;
        this.tracker = tracker;
    }

    private SchedulerEngine engine() {
        return cell.engine();
    }

    /** Arms the first run. @return {@code false} if the timer refused (scheduler stopped) */
    boolean arm(long deadline) {
        return engine().scheduleTimer(this, deadline);
    }

    @Override
    protected void fire() {
        if (STATE.compareAndSet(this, WAITING, QUEUED)) {
            deliver();
        }
    }

    private void deliver() {
        if (!cell.offer(this)) {
            // the worker was terminated in the meantime: the drain or we cancel it
            finish(CANCELLED);
        }
    }

    /** @return whether this task repeats */
    boolean isPeriodic() {
        return periodNanos >= 0;
    }

    @Override
    protected boolean awaitedOnShutdown() {
        return periodNanos < 0;
    }

    @Override
    protected void shutdownCancelled() {
        dispose();
    }

    @Override
    public void run() {
        if (!STATE.compareAndSet(this, QUEUED, RUNNING)) {
            return;
        }
        boolean ok = false;
        try {
            task.run();
            ok = true;
        } finally {
            if (!ok || periodNanos < 0) {
                finish(DONE);
            } else {
                rearm();
            }
        }
    }

    private void rearm() {
        if (!engine().isAccepting() || cell.isTerminated()) {
            finish(DONE);
            return;
        }
        if (periodNanos == 0) {
            if (STATE.compareAndSet(this, RUNNING, QUEUED)) {
                deliver();
            }
            return;
        }
        if (STATE.compareAndSet(this, RUNNING, WAITING)) {
            if (!engine().scheduleTimer(this, deadline() + periodNanos)) {
                finish(DONE);
            } else if (state == CANCELLED) {
                // dispose() ran between the CAS above and the arming: it saw WAITING and cancelled a
                // timer entry that was not armed yet. Either it cancels after our arming (it reads
                // WAITING later than we armed) or we see CANCELLED here: the entry never stays armed.
                engine().cancelTimer(this);
            }
        }
    }

    private void finish(int terminal) {
        for (;;) {
            int s = state;
            if (s == DONE || s == CANCELLED) {
                break;
            }
            if (STATE.compareAndSet(this, s, terminal)) {
                break;
            }
        }
        if (tracker != null) {
            tracker.remove(this);
        }
    }

    @Override
    public void cancelPending() {
        dispose();
    }

    @Override
    public void dispose() {
        for (;;) {
            int s = state;
            if (s == DONE || s == CANCELLED) {
                return;
            }
            if (STATE.compareAndSet(this, s, CANCELLED)) {
                if (s == WAITING) {
                    engine().cancelTimer(this);
                }
                if (tracker != null) {
                    tracker.remove(this);
                }
                return;
            }
        }
    }

    /** Disposed once done or cancelled, or at once when its worker was disposed (see {@link WorkerTask}). */
    @Override
    public boolean isDisposed() {
        int s = state;
        return s == DONE || s == CANCELLED || cell.isTerminated();
    }
}
