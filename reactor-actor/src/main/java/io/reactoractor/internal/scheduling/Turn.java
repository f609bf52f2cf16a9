package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import reactor.core.scheduler.Schedulers;

/**
 * One carrier's view of the turn it is running: the clock, the quota and preemption decisions,
 * and the bookkeeping around each task (hog detection, quota overruns, errors).
 *
 * <p>A carrier owns exactly one {@code Turn} (created with it) and reuses it for every turn; it is
 * confined to that thread, but for the actor of the turn in progress, which the hog monitor reads
 * ({@link #cellOpaque()}). The clock is read after a task ({@code System.nanoTime()}; the end of one task is the start
 * of the next), but not after every task when they are tiny.
 *
 * <h2>Clock reads between tasks</h2>
 * A clock read costs about 20 ns on common virtual machines, as much as a tiny task itself (a
 * {@code publishOn} element, a message that updates a field): read after each, it was more than half
 * of a fused {@code publishOn}'s time per element. So reads are spread adaptively: when a read finds
 * that the tasks since the previous one took at most {@value #TINY_TASK_NANOS} ns each on average,
 * the number of tasks until the next read doubles, up to {@value #MAX_CLOCK_STRIDE}; any read that
 * finds longer tasks goes back to one. An actor's first turn starts reading after every task; a later
 * turn starts at the stride its actor's previous turn ended with, but at most {@value #CARRIED_STRIDE}
 * (an actor's tasks tend to be alike: a turn of 4 tiny tasks then costs two reads, not three; the
 * actor's own history, never another actor's; capped because that history may be old, so at most one
 * task at a turn's start goes unmeasured whatever the actor did before).
 * Between reads the turn's clock ({@code now}) stands still. The stride is chosen from tasks that
 * already ran, while the tasks it leaves unmeasured may take any time; so what the clock drives lags by
 * up to {@value #MAX_CLOCK_STRIDE} - 1 tasks <em>of any length</em>, after reads (in this turn or the
 * actor's previous one) that found tiny ones:
 * <ul>
 *   <li>the quota and the preemption check ({@link #shouldContinue()}) see the time at the next read:
 *       a turn whose tiny tasks are followed by long ones may run up to that many tasks past its quota
 *       or its preemption point (a turn of tasks over 1 µs reads after each from its first or second
 *       task on);</li>
 *   <li>quota overruns are counted per stretch between two reads, when its average task was over the
 *       quota (then at least one was): a lower bound, never a false count;</li>
 *   <li>the hog monitor sees a task's start as the last read, earlier than it was, and several tasks
 *       with the same start; it tells them apart by the carrier's task count, and a task that ends
 *       flagged as a hog makes the next read immediate ({@code HogMonitor});</li>
 *   <li>the turn's length, which fairness charges, is exact: the carrier takes it from
 *       {@link #endClock()}, which reads the clock if tasks ended since the last read.</li>
 * </ul>
 *
 * <h2>Reactor's schedule hook</h2>
 * An actor's turn is its drain, so {@link reactor.core.scheduler.Schedulers#onScheduleHook
 * Schedulers.onScheduleHook} decorates each turn as Reactor decorates each scheduling of an operator's
 * drain ({@link #runTurn()}): every actor kind's work (a behaviour, a ring handler, a pull group's
 * commands, the fair {@code publishOn}'s deliveries) runs inside the hook, once per turn, on the carrier.
 * The decorated {@code Runnable} is this carrier's {@link #turnTask}, which runs the actor of the turn in
 * progress; without a hook (the hook returns its argument) the turn runs directly. A Reactor worker's
 * turn is not decorated ({@link ActorCell#decoratesTurns()}): each of its tasks was when scheduled. A hook
 * that fails to run a turn is reported and backs the actor off ({@link #hookFailed}).
 */
public final class Turn {

    private static final VarHandle CELL;

    static {
        try {
            CELL = MethodHandles.lookup().findVarHandle(Turn.class, "cell", ActorCell.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SchedulerEngine engine;
    private final CarrierThread carrier;
    private final RunQueue runQueue;
    private final long quota;
    private final long preemptCheckInterval;

    private final RunNext runNext;

    /**
     * The actor of the turn in progress, {@code null} between turns (an idle carrier must not keep the
     * last actor, and its subscribers, reachable: rule 3.13). Written by the carrier with opaque stores,
     * read by it plainly and by the hog monitor (its log line) with opaque loads.
     */
    private ActorCell cell;
    /**
     * Start of the slice this turn runs in: the turn's own start, or for an actor taken from the
     * run-next slot the start of the chain it continues (it inherits the rest of the slice, so the
     * quota and run-to-parity apply to the chain as to one turn).
     */
    private long sliceStart;
    private long now;
    private long nextPreemptCheck;
    private int tasks;
    private long taskStart;

    /** Largest average task length, between two clock reads, that lets the next reads be spread. */
    static final long TINY_TASK_NANOS = 1_000L;
    /** Most tasks between two clock reads within a turn (class doc, "Clock reads between tasks"). */
    static final int MAX_CLOCK_STRIDE = 4;
    /** The most a turn's stride starts at, carried over from its actor's previous turn (class doc). */
    static final int CARRIED_STRIDE = 2;
    /** Tasks between two clock reads now: 1, doubling after reads that found tiny tasks. */
    private int clockStride;
    /**
     * {@link #tasks} at the last read (or 0 at the turn's start): {@code tasks - tasksAtRead} tasks
     * ended since, unmeasured ({@code now} lags while it is not 0).
     */
    private int tasksAtRead;
    /**
     * Set once a preemption was decided in this turn: {@link #shouldContinue()} is rate-limited (it
     * consults the run queue at most every {@code preemptCheckInterval}), so without remembering the
     * decision a second call right after the first would answer {@code true} and the decision would
     * be lost (an actor loop that asks twice per message would then run to the quota).
     */
    private boolean preempted;
    /**
     * When this carrier next looks at the other carriers' run-next slots for an occupant stranded by a
     * long task ({@link RunNext}, rule 4): once per preemption-check interval of its clock, busy or not.
     */
    private long nextSlotLook;

    /**
     * The turn in progress as the {@code Runnable} that {@code Schedulers.onScheduleHook} decorates (class
     * doc): one per carrier, reused, so a turn allocates nothing when no hook is set.
     */
    private final Runnable turnTask = () -> {
        turnStarted = true;
        cell.runTurn(this);
    };
    /** Whether the decorated {@link #turnTask} ran: a hook's {@code Runnable} may fail before it does. */
    private boolean turnStarted;

    Turn(SchedulerEngine engine, CarrierThread carrier) {
        this.engine = engine;
        this.carrier = carrier;
        this.runQueue = engine.runQueue();
        this.runNext = engine.runNext();
        this.quota = engine.config().quotaNanos();
        // check the run queue at most ~8 times per granularity, not after every tiny task
        this.preemptCheckInterval = Math.max(1_000L, engine.config().granularityNanos() / 8);
    }

    void begin(ActorCell cell, long start) {
        this.sliceStart = start;
        // the pick that chose this actor was the fair decision: the first check is one interval in
        this.nextPreemptCheck = start + preemptCheckInterval;
        beginChained(cell, start);
    }

    /**
     * Begins a turn that continues the current slice (an actor taken from the run-next slot): the slice's
     * start and its preemption checks' schedule go on.
     */
    void beginChained(ActorCell cell, long start) {
        CELL.setOpaque(this, cell);
        this.now = start;
        this.tasks = 0;
        this.preempted = false;
        // where this actor's previous turn left off (1 for its first): the last actor's tiny tasks say
        // nothing of this one's, its own do
        int stride = cell.clockStride;
        this.clockStride = stride == 0 ? 1 : Math.min(stride, CARRIED_STRIDE);
        this.tasksAtRead = 0;
    }

    /**
     * Whether the slice is due for a preemption check at {@code now} (at most one per interval: the ready
     * counts and heads a check reads are written by every carrier at every pick); if so, the next one is
     * scheduled an interval later. Used between the tasks of a turn and at run-next hand-offs.
     */
    boolean preemptCheckDue(long now) {
        if (now - nextPreemptCheck < 0) {
            return false;
        }
        nextPreemptCheck = now + preemptCheckInterval;
        return true;
    }

    /**
     * A busy carrier's share of the run-next rescue ({@link RunNext}, rule 4): at most once per
     * preemption-check interval (at a turn's end and between a turn's tasks), moves the occupants of the
     * other carriers' slots that waited too long to this carrier's queue. Placement reads no clock, so
     * this (with idle carriers and the hog monitor) is what bounds an occupant's wait behind a long task.
     *
     * @param now the clock
     */
    void lookAtOtherSlots(long now) {
        if (now - nextSlotLook >= 0) {
            nextSlotLook = now + preemptCheckInterval;
            runNext.rescueOthers(carrier, now);
        }
    }

    /**
     * Runs the turn begun ({@link #begin}/{@link #beginChained}): the actor's
     * {@link ActorCell#runTurn runTurn}, inside {@code Schedulers.onScheduleHook} unless the actor's tasks
     * were decorated one by one (class doc, "Reactor's schedule hook").
     */
    void runTurn() {
        ActorCell c = cell;
        if (!c.decoratesTurns()) {
            c.runTurn(this);
            return;
        }
        Runnable hooked;
        try {
            hooked = Schedulers.onSchedule(turnTask);
        } catch (Throwable t) {
            hookFailed(c, t);
            return;
        }
        if (hooked == turnTask) {
            c.runTurn(this); // no hook: no indirection
            if (c.hookFailures != 0) {
                c.hookFailures = 0;
            }
            return;
        }
        if (hooked == null) {
            hookFailed(c, new NullPointerException("Schedulers.onScheduleHook returned null"));
            return;
        }
        turnStarted = false;
        try {
            hooked.run();
        } catch (Throwable t) {
            if (!turnStarted) {
                hookFailed(c, t);
                return;
            }
            throw t; // the turn's own failure: the carrier reports it
        }
        if (!turnStarted) {
            hookFailed(c, new IllegalStateException("the Runnable of Schedulers.onScheduleHook returned without "
                    + "running the turn of actor '" + c.path() + "'"));
            return;
        }
        if (c.hookFailures != 0) {
            c.hookFailures = 0;
        }
    }

    /** The first back-off after the schedule hook failed to run an actor's turn. */
    static final long HOOK_BACKOFF_MIN_NANOS = 1_000_000L;
    /** The longest back-off after repeated failures of the schedule hook. */
    static final long HOOK_BACKOFF_MAX_NANOS = 1_000_000_000L;

    /**
     * The schedule hook failed to run {@code c}'s turn (it threw, returned {@code null}, or its
     * {@code Runnable} did not run the turn): reported as a failed task, as Reactor reports a hook that
     * fails a scheduling, and the actor is suspended for a back-off that doubles with each consecutive
     * failure, from {@value #HOOK_BACKOFF_MIN_NANOS} ns to {@value #HOOK_BACKOFF_MAX_NANOS} ns. Nothing is
     * lost: its work waits, and runs once the hook works again. Without the back-off the actor, still
     * ready, was queued again at once, and a hook that kept failing spun a carrier and flooded the logs
     * (thousands of reports a second).
     */
    private void hookFailed(ActorCell c, Throwable t) {
        engine.taskFailed(c, t);
        int n = c.hookFailures;
        if (n < Byte.MAX_VALUE) {
            c.hookFailures = (byte) (n + 1);
        }
        long delay = HOOK_BACKOFF_MIN_NANOS << Math.min(n, 10);
        c.suspendFor(Math.min(delay, HOOK_BACKOFF_MAX_NANOS));
    }

    /** Forgets the actor once its turn is over, so an idle carrier keeps nothing reachable. */
    void end() {
        cell.clockStride = (byte) clockStride;
        CELL.setOpaque(this, (ActorCell) null);
    }

    /**
     * The turn's end on the clock, for charging it: the last read, or a new one if tasks ended since
     * (class doc, "Clock reads between tasks"). Called by the carrier once the turn is over.
     *
     * @return the clock at the end of the turn's last task (or at the turn's start if it ran none)
     */
    long endClock() {
        if (tasks != tasksAtRead) {
            long end = System.nanoTime();
            carrier.clockReads++;
            int covered = tasks - tasksAtRead;
            countOverrun(end - taskStart, covered);
            nextStride(end, covered); // what this read found is where the actor's next turn starts
            now = end;
            tasksAtRead = tasks;
        }
        return now;
    }

    /**
     * Counts a quota overrun for a stretch of {@code covered} tasks that took {@code took} in all, if its
     * average was over the quota (then at least one task was; a lower bound, class doc).
     */
    private void countOverrun(long took, int covered) {
        if (took > quota && took / covered > quota) {
            engine.quotaOverrun(cell, took / covered);
        }
    }

    /** @return the start of the slice this turn runs in (see {@link #beginChained}) */
    long sliceStart() {
        return sliceStart;
    }

    /** @return the actor this turn runs */
    public ActorCell cell() {
        return cell;
    }

    /** Any thread: the actor of the turn in progress as last stored, or {@code null} between turns. */
    ActorCell cellOpaque() {
        return (ActorCell) CELL.getOpaque(this);
    }

    /** @return how many tasks ran in this turn so far */
    public int tasks() {
        return tasks;
    }

    /**
     * Whether the actor may start another task in this turn: it is not suspended or terminated,
     * the scheduler is not stopping, the quota is not used up and no preemption is due. The
     * first task of a turn is always allowed (a turn always makes progress).
     *
     * @return {@code true} to run one more task
     */
    public boolean shouldContinue() {
        if (!cell.runnable() || engine.isStopping()) {
            return false;
        }
        if (tasks == 0) {
            return true;
        }
        if (preempted) {
            return false;
        }
        long elapsed = now - sliceStart;
        if (elapsed >= quota) {
            return false;
        }
        // rate-limited whether or not an actor was ready: the ready counts are written by every carrier
        // at every pick, so reading them after each tiny task costs a cache miss per task; an actor that
        // becomes ready meanwhile waits at most one interval longer for its preemption
        if (preemptCheckDue(now)) {
            lookAtOtherSlots(now);
            if (runQueue.readyCount() > 0 && runQueue.shouldPreempt(cell, elapsed, now, carrier.index())) {
                preempted = true;
                carrier.preemptions++;
                return false;
            }
        }
        return true;
    }

    /**
     * Runs one task of this actor with the scheduler's bookkeeping. A {@link Throwable} thrown by
     * the task is reported and counted, never propagated: it cannot kill the carrier.
     *
     * @param task the task
     */
    public void run(Runnable task) {
        beginTask();
        try {
            task.run();
        } catch (Throwable t) {
            engine.taskFailed(cell, t);
        }
        endTask();
    }

    /** Marks the start of a task (for hog detection) when a caller runs its own message loop. */
    public void beginTask() {
        if (tasks > 0 && carrier.hasRunNext()) {
            // the turn goes on: an actor a previous task woke must not wait for it (RunNext, flush)
            runNext.flush(carrier, now);
        }
        taskStart = now;
        carrier.taskStarted(now);
    }

    /**
     * Marks the end of a task started with {@link #beginTask()}. Reads the clock, unless the tasks
     * before were tiny (class doc, "Clock reads between tasks").
     */
    public void endTask() {
        tasks++;
        boolean wasHog = carrier.taskEnded();
        // a task that interrupted its own carrier must not leak the flag into the next actor's turn:
        // Thread.interrupted() clears it
        Thread.interrupted();
        int covered = tasks - tasksAtRead;
        if (covered < clockStride && !wasHog) {
            return; // now lags by these tiny tasks until the next read
        }
        long end = System.nanoTime();
        carrier.clockReads++;
        // taskStart is the last read, so this covers every task since then
        countOverrun(end - taskStart, covered);
        nextStride(end, covered);
        tasksAtRead = tasks;
        now = end;
    }

    /** After a read at {@code end} covering {@code covered} tasks since the last one: doubles or resets the stride. */
    private void nextStride(long end, int covered) {
        clockStride = end - now <= covered * TINY_TASK_NANOS ? Math.min(clockStride << 1, MAX_CLOCK_STRIDE) : 1;
    }
}
