package io.reactoractor.actor;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import io.reactoractor.internal.scheduling.TimerEntry;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * The behaviour's timers ({@link ActorContext#resumeAfter}, {@link ActorContext#schedule}) on the
 * engine's timer. They fire on the timer thread, so they only touch the actor through thread-safe
 * calls: the cell's {@code resume()}/{@code signal()} and the control mailbox (a task there runs on
 * the actor's turn).
 *
 * <p>An armed timer is tracked by its actor ({@link ActorTurnLoop#trackTimer}) until it fires or is
 * disposed, and the actor's termination cancels the ones still armed
 * ({@link ActorTimer#cancelOnTermination}): a timer of a dead actor never runs, so it must not stay in
 * the engine's timer queue either, where it held the behaviour (and whatever a scheduled task captured)
 * reachable until due, and a graceful shutdown waited for it.
 */
final class ActorTimers {

    private ActorTimers() {
    }

    /** A timer its actor tracks while it is armed. */
    interface ActorTimer {
        /**
         * The actor terminated: disarms the timer if still armed, without running or resuming anything
         * (a terminated cell ignores suspensions). Idempotent; any thread.
         */
        void cancelOnTermination();
    }

    /**
     * Suspends the actor now and resumes it after {@code delay}; if the scheduler no longer takes
     * timers, the suspension is undone at once.
     */
    static ResumeTimer resumeAfter(ActorTurnLoop<?, ?> loop, Duration delay) {
        Objects.requireNonNull(delay, "delay");
        long due = dueAt(delay); // before any change of state: nothing here may throw after the suspension
        loop.cell.suspend();
        ResumeTimer t = new ResumeTimer(loop);
        loop.timedSuspensions.incrementAndGet(); // before the timer can fire and settle it
        loop.trackTimer(t); // before it is armed: whatever settles it untracks it after
        if (!loop.engine.scheduleTimer(t, due)) {
            t.settled.set(true); // settled here: a later resumeNow() or dispose() must not resume again
            loop.untrackTimer(t);
            loop.timedSuspensions.decrementAndGet();
            loop.cell.resume();
        } else {
            disarmIfTerminated(loop, t);
        }
        return t;
    }

    /** Runs {@code task} on the actor's turn after {@code delay}. */
    static Disposable schedule(ActorTurnLoop<?, ?> loop, Duration delay, Runnable task) {
        Objects.requireNonNull(delay, "delay");
        Objects.requireNonNull(task, "task");
        long due = dueAt(delay);
        // decorated now, on the scheduling thread, as Reactor's Worker.schedule decorates its task: the hook sees
        // every task (a per-task span, state captured where the task was scheduled); a hook that throws fails
        // this call, one that returns null fails the task when it runs (Schedulers.onHandleError), as there
        Runnable hooked = Schedulers.onSchedule(task);
        if (loop.isClosing() && !loop.isTerminated()) {
            // a new task for a closing scheduler or group, rejected as Reactor's schedulers reject theirs during a
            // graceful shutdown (a task that re-armed itself would otherwise hold the shutdown open for good);
            // a terminated actor's timer is returned disposed instead, as documented
            throw loop.engine.reject();
        }
        ControlTimer t = new ControlTimer(loop, hooked, due);
        loop.trackTimer(t); // before it is armed: whatever settles it untracks it after
        if (!loop.engine.scheduleTimer(t, due)) {
            t.disposed = true;
            loop.untrackTimer(t);
            throw loop.engine.reject();
        }
        disarmIfTerminated(loop, t);
        return t;
    }

    /**
     * The actor may have terminated between tracking {@code t} and arming it: its termination then
     * cancelled a timer not yet armed (a no-op on the timer queue), and this takes the armed one out.
     * The timer queue orders that cancel before this arm, and {@code done} was written before it, so
     * this read sees it.
     */
    private static void disarmIfTerminated(ActorTurnLoop<?, ?> loop, TimerEntry t) {
        if (loop.done) {
            loop.engine.cancelTimer(t);
        }
    }

    /**
     * The deadline {@code delay} from now; a delay of zero or less is now, and one of {@code Long.MAX_VALUE / 2}
     * nanoseconds (about 146 years) or more saturates there, like the scheduler's own delays (far enough
     * never to come, near enough not to wrap into the past; {@code Duration.toNanos} throws beyond 292 years,
     * which left the actor suspended with no timer).
     */
    private static long dueAt(Duration delay) {
        long nanos;
        if (delay.isNegative()) {
            nanos = 0L;
        } else if (delay.compareTo(MAX_DELAY) >= 0) {
            nanos = Long.MAX_VALUE / 2;
        } else {
            nanos = delay.toNanos();
        }
        return System.nanoTime() + nanos;
    }

    private static final Duration MAX_DELAY = Duration.ofNanos(Long.MAX_VALUE / 2);

    /**
     * Resumes the actor when due (runs on the timer thread: resume is thread-safe). Exactly one of
     * {@link #fire()} and {@link #dispose()} settles the suspension it holds: firing lifts it;
     * disposing first hands it to the user, so {@link Actor#resume()} lifts it (as documented on
     * {@link ActorContext#resumeAfter}).
     */
    static final class ResumeTimer extends TimerEntry implements Disposable, ActorTimer {
        private final ActorTurnLoop<?, ?> loop;
        private final AtomicBoolean settled = new AtomicBoolean();

        ResumeTimer(ActorTurnLoop<?, ?> loop) {
            this.loop = loop;
        }

        @Override
        protected void fire() {
            if (settled.compareAndSet(false, true)) {
                loop.untrackTimer(this);
                loop.timedSuspensions.decrementAndGet();
                loop.cell.resume();
            }
        }

        /** Lifts the suspension now instead of when due (a retry's back-off cut short); once, as fire(). */
        void resumeNow() {
            if (settled.compareAndSet(false, true)) {
                loop.engine.cancelTimer(this);
                loop.untrackTimer(this);
                loop.timedSuspensions.decrementAndGet();
                loop.cell.resume();
            }
        }

        @Override
        public void cancelOnTermination() {
            if (settled.compareAndSet(false, true)) {
                loop.engine.cancelTimer(this);
                loop.untrackTimer(this);
                loop.timedSuspensions.decrementAndGet();
            }
        }

        @Override
        protected boolean awaitedOnShutdown() {
            return true;
        }

        @Override
        public void dispose() {
            if (settled.compareAndSet(false, true)) {
                loop.engine.cancelTimer(this);
                loop.untrackTimer(this);
                loop.handSuspensionToUser(); // counted as the user's before it stops being a timer's
                loop.timedSuspensions.decrementAndGet();
            }
        }

        @Override
        public boolean isDisposed() {
            return settled.get();
        }
    }

    /**
     * A fired {@link ControlTimer}'s task in the actor's control mailbox. Run on the actor's turn, it runs the
     * task unless the handle was disposed first; discarded by a termination ({@link #discarded()}), it settles
     * the handle as disposed: a timer due at once, armed in the turn that terminated the actor, fires and
     * leaves the timers the termination cancels before that termination runs, so only the discard can settle it.
     */
    static final class Due implements Runnable {
        private final ControlTimer timer;

        Due(ControlTimer timer) {
            this.timer = timer;
        }

        @Override
        public void run() {
            if (!timer.disposed) {
                timer.disposed = true;
                timer.task.run();
            }
        }

        /** The actor terminated with this task in its control mailbox: it never runs. */
        void discarded() {
            timer.dispose();
        }
    }

    /**
     * Hands the task of every tracked {@link ControlTimer} whose time has come to the control mailbox now, on
     * the actor's turn, without waiting for the timer thread to fire it: the completion check of
     * {@link ActorTurnLoop} calls it, because a completion runs the tasks already due first (as documented on
     * {@link ActorContext#schedule}), and the termination that follows an empty mailbox would otherwise cancel a
     * timer that is due but not yet fired (the timer thread comes to it a moment later: a delay of zero always
     * meets this).
     *
     * <p>Why the completion check misses nothing: a timer is handed over once ({@code handed}, by CAS, between
     * this and {@link ControlTimer#fire}); whoever wins offers its task to the control mailbox and only then
     * untracks it. This method reads the tracked timers before the check reads the control mailbox, so a due
     * timer is either still tracked here (this call returns {@code true}: handed over by this call, or being
     * handed over by the timer thread, and the check looks again) or was untracked after its task was offered,
     * which the check's read of the control mailbox then sees.
     *
     * @return whether a due timer's task is, or is about to be, in the control mailbox
     */
    static boolean handOverDueTasks(java.util.Set<ActorTimer> tracked) {
        if (tracked == null || tracked.isEmpty()) {
            return false;
        }
        long now = System.nanoTime();
        boolean due = false;
        for (ActorTimer t : tracked) {
            if (t instanceof ControlTimer c && c.isDueBy(now)) {
                c.handOver();
                due = true;
            }
        }
        return due;
    }

    /**
     * Delivers a task into the actor's control mailbox when due: the timer thread's {@link #fire()}, or the
     * actor's own completion check ({@link #handOverDueTasks}), whichever comes first.
     */
    private static final class ControlTimer extends TimerEntry implements Disposable, ActorTimer {
        private static final java.lang.invoke.VarHandle HANDED;

        static {
            try {
                HANDED = java.lang.invoke.MethodHandles.lookup().findVarHandle(ControlTimer.class, "handed",
                        boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final ActorTurnLoop<?, ?> loop;
        private final Runnable task;
        /** When the task is due, {@code System.nanoTime()} terms (the timer's own deadline is its lock's). */
        private final long due;
        private volatile boolean disposed;
        /** Set once, by CAS, by whoever offers the task to the control mailbox: fire() or handOver(). */
        @SuppressWarnings("unused")
        private volatile boolean handed;

        ControlTimer(ActorTurnLoop<?, ?> loop, Runnable task, long due) {
            this.loop = loop;
            this.task = task;
            this.due = due;
        }

        @Override
        protected void fire() {
            if (!disposed && HANDED.compareAndSet(this, false, true)) {
                loop.offerControl(new Due(this));
            }
            // untracked after the offer, not before (see handOverDueTasks); a termination discards the Due
            loop.untrackTimer(this);
        }

        /**
         * @return whether the task is due by {@code now} and not disposed (any thread); also while the timer thread
         *         hands it over (it is untracked once its task is offered, see {@link #handOverDueTasks})
         */
        boolean isDueBy(long now) {
            return now - due >= 0 && !disposed;
        }

        /** The actor's turn takes the due task over from the timer thread (see {@link #handOverDueTasks}). */
        void handOver() {
            if (HANDED.compareAndSet(this, false, true)) {
                loop.engine.cancelTimer(this); // the timer thread has not fired it: it need not any more
                loop.offerControl(new Due(this));
                loop.untrackTimer(this);
            }
        }

        @Override
        protected boolean awaitedOnShutdown() {
            return true;
        }

        @Override
        public void dispose() {
            if (!disposed) {
                disposed = true;
                loop.engine.cancelTimer(this);
                loop.untrackTimer(this);
            }
        }

        @Override
        public void cancelOnTermination() {
            dispose();
        }

        @Override
        public boolean isDisposed() {
            return disposed;
        }
    }
}
