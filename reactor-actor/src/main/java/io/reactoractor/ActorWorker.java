package io.reactoractor;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

import io.reactoractor.internal.scheduling.SchedulerEngine;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A {@link Scheduler.Worker} that is an actor: its tasks (immediate, delayed and periodic) run one
 * at a time, in FIFO order of submission (delayed ones in order of their deadlines), in turns of at
 * most the scheduler's quota, competing fairly with every other actor of the scheduler.
 *
 * <h2>Suspend and resume</h2>
 * {@link #suspend()} is re-entrant (QMQ semantics): n suspensions need n {@link #resume()}s. A
 * suspended worker finishes the task it is running, then starts no other until fully resumed;
 * tasks keep queueing meanwhile (delayed tasks still become due and wait in the mailbox). Resuming
 * schedules the worker again only if it has work.
 *
 * <h2>Disposal</h2>
 * {@link #dispose()} cancels every task that has not started (immediate, delayed and periodic);
 * afterwards {@code schedule} throws {@link java.util.concurrent.RejectedExecutionException}.
 * A task already running completes; it is not interrupted.
 */
public final class ActorWorker implements Scheduler.Worker, Scannable {

    private final ActorGroup group;
    private final WorkerCell cell;
    private final SchedulerEngine engine;

    ActorWorker(ActorGroup group, SchedulerEngine engine, String path) {
        this.group = group;
        this.engine = engine;
        this.cell = new WorkerCell(engine, group.schedulingGroup(), path, new TimedTasks());
        cell.joinGroup(); // last: a disposal or a gauge may reach the worker from now on
    }

    /** @return the actor's path, {@code <group>/worker-<n>} */
    public String path() {
        return cell.path();
    }

    /** @return the group this worker's CPU time is charged to */
    public ActorGroup group() {
        return group;
    }

    @Override
    public Disposable schedule(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (!engine.isAccepting() || cell.isTerminated() || !group.isAccepting()) {
            throw engine.reject();
        }
        WorkerTask t = new WorkerTask(Schedulers.onSchedule(task), cell);
        if (!cell.offer(t) && t.cancelIfPending()) {
            throw engine.reject();
        }
        return t;
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        if (delay <= 0L) {
            // as Reactor's workers submit it: in FIFO order with the immediate tasks
            return schedule(task);
        }
        return scheduleTimed(task, delay, -1L, unit);
    }

    @Override
    public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        return scheduleTimed(task, initialDelay, Math.min(Math.max(0L, unit.toNanos(period)), MAX_NANOS), unit);
    }

    /**
     * Longest delay or period (about 73 years). The timer orders deadlines by their difference: with
     * deadlines within a quarter of the {@code long} range of each other that difference never overflows,
     * where a longer period could make a re-armed task sort before one already due.
     */
    private static final long MAX_NANOS = Long.MAX_VALUE / 4;

    private Disposable scheduleTimed(Runnable task, long delay, long periodNanos, TimeUnit unit) {
        if (!engine.isAccepting() || cell.isTerminated() || !group.isAccepting()) {
            throw engine.reject();
        }
        TimedTask t = new TimedTask(Schedulers.onSchedule(task), cell, periodNanos, cell.timed);
        if (!cell.timed.add(t)) {
            throw engine.reject();
        }
        long now = System.nanoTime();
        if (delay <= 0L) {
            // the first run of a periodic task is due now: into the mailbox at once, like an immediate task
            if (!t.deliverNow(now)) {
                throw engine.reject();
            }
        } else if (!t.arm(now + Math.min(unit.toNanos(delay), MAX_NANOS))) {
            t.dispose();
            throw engine.reject();
        }
        if (cell.isTerminated() || (periodNanos >= 0 && !group.isAccepting())) {
            // disposed while arming: the drain may have run before our add; make sure it is cancelled. A
            // graceful shutdown of the group that began meanwhile cancels periodic tasks: its cancelPeriodic
            // may have run before our add
            t.dispose();
        }
        return t;
    }

    /** Cancels this worker's periodic tasks (graceful shutdown of its group). */
    void cancelPeriodic() {
        cell.timed.cancelPeriodic();
    }

    /** @return whether nothing is queued, running or still due on this worker */
    boolean isIdle() {
        return cell.isIdle();
    }

    /**
     * Suspends this worker (re-entrant); see the class documentation. No-op once disposed.
     *
     * @throws IllegalStateException if 536,870,911 suspensions are in force already (unbalanced suspends:
     *                               one more would overflow the count)
     */
    public void suspend() {
        cell.suspend();
    }

    /**
     * Lifts one suspension; when none is left and tasks are waiting, the worker runs again.
     *
     * @return {@code true} if a suspension was lifted, {@code false} if the worker was not suspended
     */
    public boolean resume() {
        return cell.resume();
    }

    /** @return whether at least one suspension is in force ({@code false} once disposed) */
    public boolean isSuspended() {
        return cell.isSuspended();
    }

    /** @return the number of suspensions in force ({@code 0} once disposed) */
    public int suspendCount() {
        return cell.suspendCount();
    }

    /** @return tasks waiting in the mailbox (approximate while producers are active) */
    public int pendingTasks() {
        return cell.pending();
    }

    @Override
    public void dispose() {
        cell.terminate();
        group.workerDisposed(this);
    }

    @Override
    public boolean isDisposed() {
        return cell.isTerminated();
    }

    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return path();
        }
        if (key == Attr.PARENT) {
            return group;
        }
        if (key == Attr.TERMINATED || key == Attr.CANCELLED) {
            return isDisposed();
        }
        if (key == Attr.BUFFERED) {
            return pendingTasks();
        }
        if (key == Attr.CAPACITY) {
            return 1; // an actor runs one task at a time (FIFO), like a Reactor worker's single thread
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    /** @return the hash of its actor (random, fixed at creation: no identity hash to install); equality is identity */
    @Override
    public int hashCode() {
        return cell.hashCode();
    }

    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public String toString() {
        return "ActorWorker[" + path() + "]";
    }

    WorkerCell cell() {
        return cell;
    }
}
