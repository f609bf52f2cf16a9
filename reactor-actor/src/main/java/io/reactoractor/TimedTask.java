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
 *   RUNNING  | periodic ends, or a fixed-rate | WAITING (re-armed at previous deadline + period,
 *            |  run throws (reported)         |  or QUEUED again at once for period 0)
 *   RUNNING  | task throws (one-shot, period  | DONE
 *            |  0, or its report throws)      |
 *   any but  | dispose / worker terminated /  | CANCELLED (timer entry removed; a queued copy is
 *   DONE     | graceful shutdown (periodic)   |  skipped; a running one finishes, not re-armed;
 *            |                                |  a periodic one queued when the scheduler's
 *            |                                |  graceful shutdown began is skipped too)
 * </pre>
 * A dispose racing the re-arm (RUNNING → WAITING, then arming) is settled by re-reading the state
 * after arming: see {@code rearm()}. {@link #isDisposed()} is also true as soon as the worker is
 * disposed, before the worker's drain reaches the task.
 * Fixed-rate periods: a late run does not shift later deadlines (as
 * {@code ScheduledExecutorService.scheduleAtFixedRate}); runs never overlap.
 *
 * <p>Errors, as in Reactor's own workers: the error goes to {@code Schedulers.handleError} (the
 * thread's uncaught-exception handler or Reactor's logger, then the {@code Schedulers.onHandleError}
 * hooks), and a fixed-rate task keeps its schedule (Reactor's {@code PeriodicWorkerTask} catches the
 * error, so its {@code scheduleAtFixedRate} goes on) unless that reporting throws (then Reactor's
 * executor sees the run fail and stops the schedule; so does this), while a period-0 task stops
 * (Reactor's {@code InstantPeriodicWorkerTask} re-submits itself only after a run that returned).
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
    /**
     * The deadline of the run in progress (fixed rate: the next one is this plus the period). Written
     * before the task is armed or delivered and then only by the run that reads it; the timer's lock
     * and the mailbox order those accesses.
     */
    private long due;

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
        due = deadline;
        return engine().scheduleTimer(this, deadline);
    }

    /**
     * Delivers the first run at once (an initial delay of zero or less, as Reactor submits it instead
     * of scheduling it): FIFO with the worker's immediate tasks, no trip through the timer thread.
     *
     * @param now the deadline the fixed-rate schedule counts from
     * @return {@code false} if the worker was terminated (the task is then cancelled)
     */
    boolean deliverNow(long now) {
        due = now;
        if (!STATE.compareAndSet(this, WAITING, QUEUED)) {
            return state != CANCELLED; // disposed meanwhile: nothing to deliver
        }
        return deliver();
    }

    @Override
    protected void fire() {
        if (STATE.compareAndSet(this, WAITING, QUEUED)) {
            deliver();
        }
    }

    private boolean deliver() {
        if (!cell.offer(this)) {
            // the worker was terminated in the meantime: the drain or we cancel it
            finish(CANCELLED);
            return false;
        }
        return true;
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
        if (periodNanos >= 0 && !engine().isAccepting()) {
            // a graceful shutdown cancels periodic tasks; it disarmed the waiting ones, this one was
            // already due in the mailbox (a ScheduledExecutorService's shutdown cancels it as well)
            dispose();
            return;
        }
        if (!STATE.compareAndSet(this, QUEUED, RUNNING)) {
            return;
        }
        boolean goOn;
        try {
            task.run();
            goOn = periodNanos >= 0;
        } catch (Throwable t) {
            // reported here, not by the turn: a fixed-rate task goes on after an error whose report
            // returned (see the class doc), and stops when the reporting threw
            goOn = engine().taskFailed(cell, t) && periodNanos > 0;
        }
        if (goOn) {
            rearm();
        } else {
            finish(DONE);
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
            due += periodNanos;
            if (!engine().scheduleTimer(this, due)) {
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
