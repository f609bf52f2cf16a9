package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import reactor.core.scheduler.NonBlocking;

/**
 * A thread of an {@code ActorScheduler}: takes ready actors from the run queue (its own carrier queue
 * first, stealing from the others' when they are far enough behind or it has none, see
 * {@link FairRunQueue}) and runs their turns ({@link #runLoop}, beside the per-carrier state it drives: the run-next slot, the task stamps
 * the hog monitor reads, the park state). Implements Reactor's {@link NonBlocking} marker so {@code block()} fails fast on it.
 *
 * <p>Fields read by other threads ({@link #taskStartedAt}, {@link #hogStamp}, {@link #parkState}, and
 * the actor of the turn in progress, {@link Turn#cellOpaque()}) are documented where they are declared.
 */
final class CarrierThread extends Thread implements NonBlocking {

    static final int RUNNING = 0;
    static final int PARKED = 1;

    private static final VarHandle TASK_STARTED_AT;
    private static final VarHandle HOG_STAMP;
    private static final VarHandle PARK_STATE;
    private static final VarHandle RUN_NEXT;
    private static final VarHandle RUN_NEXT_SINCE;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            TASK_STARTED_AT = l.findVarHandle(CarrierThread.class, "taskStartedAt", long.class);
            HOG_STAMP = l.findVarHandle(CarrierThread.class, "hogStamp", long.class);
            PARK_STATE = l.findVarHandle(CarrierThread.class, "parkState", int.class);
            RUN_NEXT = l.findVarHandle(CarrierThread.class, "runNext", ActorCell.class);
            RUN_NEXT_SINCE = l.findVarHandle(CarrierThread.class, "runNextSince", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SchedulerEngine engine;
    private final boolean compensating;

    /**
     * Start of the task in progress ({@code System.nanoTime()}), 0 when none. Written by this thread
     * with opaque stores (no fence on the hot path), read by the hog monitor with opaque loads: the
     * monitor only needs an eventually visible, untorn value.
     */
    private long taskStartedAt;
    /**
     * The turn this carrier runs, reused for every turn; its actor is what {@link #currentCell()} answers.
     * Final, so published with this thread.
     */
    private final Turn turn;
    /**
     * Non-zero while the hog monitor counts this carrier as hogged; the value is the
     * {@link #taskStartedAt} it flagged. Set by the monitor with CAS, cleared by this thread (or by
     * the monitor undoing a stale flag) with CAS: every successful set is matched by exactly one
     * successful clear, and each clear decrements the hogged count once.
     */
    private volatile long hogStamp;
    /** Hog suspect bookkeeping, touched only by the hog monitor's thread (see {@code HogMonitor#confirmed}). */
    long suspectStamp;
    long suspectRuns;
    long suspectCpu;
    long suspectWall;
    /** {@link #tasksRun} when the monitor last saw it change, and the check before that one (monitor only). */
    long monitorRuns;
    long monitorRunsSince;
    /** {@link #RUNNING} or {@link #PARKED}; the thread that CASes PARKED→RUNNING owns the wake-up. */
    private volatile int parkState;

    /**
     * The run-next slot (see {@link RunNext}): an actor woken by this carrier's running task, to run
     * right after the current turn on this carrier. The occupant holds its {@code SCHEDULED} bit; whoever
     * removes it from the slot (this carrier with {@code getAndSet}, a rescuer with {@code compareAndSet})
     * owns it and must run it or put it in the run queue. Placed and taken with volatile atomics, so
     * the actor's fields written before placement are visible to whoever takes it.
     */
    private volatile ActorCell runNext;
    /** When the occupant was placed ({@code System.nanoTime()}); opaque, read by rescuers. */
    private long runNextSince;
    /** Consecutive turns this carrier took from its slot (carrier-confined). */
    int runNextStreak;
    /**
     * Turns this carrier took from its slot, ever: a plain increment by this thread, read racily by the
     * benchmarks' counters (like {@link #tasksRun}).
     */
    long chainedTurns;
    /** Turns this carrier began (chained or not) and turns cut by a preemption: carrier-confined counters. */
    long turns;
    long preemptions;
    /** Clock reads between and after tasks ({@link Turn}, "Clock reads between tasks"): carrier-confined. */
    long clockReads;

    /**
     * Written only by this thread (a plain increment per task: no fence on the hot path); statistics
     * read it racily and may see a slightly stale count, which is all they promise.
     */
    private long tasksRun;

    /** A compensating carrier that decided to retire ({@link CarrierPool#shouldRetire}); carrier-confined. */
    boolean released;

    /** This carrier's slot in the pool (0..threads-1 for permanent carriers); a stable hint for lanes. */
    private final int index;

    CarrierThread(SchedulerEngine engine, String name, boolean compensating, int index) {
        super(name);
        this.engine = engine;
        this.compensating = compensating;
        this.index = index;
        setDaemon(engine.config().daemon()); // the builder's choice; compensating carriers follow it
        setUncaughtExceptionHandler(TaskErrors.UNCAUGHT); // as Reactor's thread factories do
        this.turn = new Turn(engine, this);
    }

    /** @return the turn this carrier runs (the same object for every turn) */
    Turn turn() {
        return turn;
    }

    /** @return this carrier's slot in its pool */
    int index() {
        return index;
    }

    @Override
    public void run() {
        // what the OS or the JVM took from a long turn is not charged to its actor (StolenTime); made here, on the
        // carrier, whose own clocks it reads, and closed (an open file on Linux) whenever the carrier leaves
        StolenTime stolen = new StolenTime(null); // nothing stolen: FIFO order charges nothing
        try {
            if (engine.config().fair()) {
                stolen = StolenTime.forCarrier();
            }
            runLoop(stolen);
        } catch (Throwable t) {
            // runLoop catches everything itself; this guards the guard (e.g. a StackOverflowError
            // while reporting), so the exit below always runs and the pool can replace this carrier
            engine.internalError("leaving a carrier loop", t);
        } finally {
            stolen.close();
            engine.carrierExited(this);
        }
    }

    /**
     * The run loop: take an actor (this carrier's run-next slot first, then the run queue), run its
     * turn, charge it, repeat; idle in the pool when nothing is ready. Catches everything: a task's
     * error is the task's, and an error of the engine's own bookkeeping is counted and survived.
     */
    private void runLoop(StolenTime stolen) {
        final CarrierThread self = this;
        final RunQueue runQueue = engine.runQueue();
        final RunNext runNext = engine.runNext();
        final CarrierPool pool = engine.pool();
        final SchedulerEngine.Config config = engine.config();
        final Turn turn = this.turn;
        // the turns' group charges, summed on this carrier and handed over before an empty-handed take or idle
        final CarrierCharge charge = new CarrierCharge();
        boolean recordDelay = config.metrics().recordsSchedulingDelay();
        ActorCell next = null;
        boolean chained = false;
        long lastEnd = 0L;
        for (;;) {
            try {
                // an actor in hand was taken at the end of the previous turn (from the slot or the run queue,
                // no idling in between): its turn starts where that one ended, one clock read less per turn
                // (the pick's bookkeeping is charged to it)
                boolean fromPreviousTurn = next != null;
                if (next == null) {
                    charge.flush(); // before an empty-handed take, idling or leaving
                    if (engine.isStopping() || (self.compensating() && pool.shouldRetire(self))) {
                        return;
                    }
                    next = runQueue.take(index, System.nanoTime());
                    chained = false; // also after the catch below interrupted a chain
                    if (next == null) {
                        stolen.idling();
                        if (!pool.idle(self)) {
                            return;
                        }
                        continue;
                    }
                }
                if (!chained) {
                    // a chained turn came from this carrier's slot: the run queue did not change, and
                    // this carrier's own enqueues wake whoever they need (pool.onWork)
                    pool.propagate();
                }
                ActorCell cell = next;
                next = null;
                long start = fromPreviousTurn ? lastEnd : System.nanoTime();
                if (recordDelay) {
                    try {
                        long delay = start - cell.readyAt;
                        if (delay < 0) {
                            // made ready after the clock this turn starts at was read (taken at the previous
                            // turn's end, e.g. from arrivals a thread outside the pool added meanwhile): measured
                            // from now instead, never negative (Micrometer drops a negative sample, with a warning)
                            delay = Math.max(0L, System.nanoTime() - cell.readyAt);
                        }
                        config.metrics().schedulingDelay(cell.group(), delay);
                    } catch (Throwable t) {
                        // a failing meter registry: the actor, already off the run queue, must still run its
                        // turn (an exception here used to drop it for good: nothing would schedule it again)
                        engine.internalError("recording a scheduling delay", t);
                    }
                }
                turns++;
                stolen.turnStarting(start);
                if (chained) {
                    turn.beginChained(cell, start);
                } else {
                    turn.begin(cell, start);
                }
                // an interrupt that reached this carrier between turns (from outside, while idle, or left by
                // user code the previous turn ran after its last task: a terminal signal, a schedule hook)
                // belongs to no task of this actor's: dropped, as a ThreadPoolExecutor clears its worker's
                // flag before each task (Turn.endTask clears it between the tasks of a turn)
                Thread.interrupted();
                if (cell.runnable()) {
                    cell.group().turnStarting(); // counted while its group closes gracefully (ActorGroup)
                    try {
                        turn.runTurn(); // cell's turn, inside Schedulers.onScheduleHook (Turn)
                    } catch (Throwable t) {
                        // runTurn implementations route task errors through Turn.run; this is a bug guard
                        engine.taskFailed(cell, t);
                    }
                }
                long end = turn.endClock();
                long stolenNanos = stolen.stolen(start, end); // 0 for most turns; the charge clears it
                cell.stolenNanos = stolenNanos;
                if (stolenNanos > 0) {
                    cell.hostStolenNanos = stolen.hostStolen(); // read by the charge only with stolen time
                }
                lastEnd = end;
                turn.end();
                turn.lookAtOtherSlots(end);
                boolean requeue = cell.keepScheduledAfterTurn();
                boolean takeNext = !engine.isStopping() && !(self.compensating() && pool.shouldRetire(self));
                ActorCell fromSlot = null;
                if (takeNext) {
                    fromSlot = runNext.next(self, end - turn.sliceStart(), end, turn.preemptCheckDue(end));
                } else {
                    runNext.flush(self, end); // this carrier leaves: its occupant must not be stranded
                }
                if (fromSlot != null) {
                    // the slot's actor replaces this one as the carrier's running actor: no lock to
                    // find the next actor, none to charge the turn unless this one is re-queued
                    if (requeue) {
                        runQueue.finishTurn(cell, end - start, true, end, false, true, index, charge);
                    } else {
                        runQueue.finishChainedTurn(cell, end - start, charge);
                    }
                    next = fromSlot;
                    chained = true;
                } else {
                    next = runQueue.finishTurn(cell, end - start, requeue, end, takeNext, false, index, charge);
                    chained = false;
                }
                if (!requeue) {
                    cell.releaseAfterTurn();
                }
                if (!takeNext && next == null) {
                    charge.flush();
                    return;
                }
            } catch (Throwable t) {
                // Only the engine's own bookkeeping can get here (an allocation failure, a bug): the
                // carrier survives; the actor it held, if any, may be stranded, and is counted here.
                engine.internalError("running a carrier loop", t);
            }
        }
    }

    boolean compensating() {
        return compensating;
    }

    /**
     * Marks the start of a task of the turn in progress. Only a timestamp: the task's actor is the turn's,
     * stored once per turn ({@link Turn#cellOpaque()}). A reference stored per task into this long-lived
     * object cost a G1 write barrier with a store-load fence per task (a carrier is old, the actor often
     * young or in another region), for the hog monitor's log line only.
     */
    void taskStarted(long start) {
        TASK_STARTED_AT.setOpaque(this, start == 0 ? 1 : start);
    }

    /**
     * Marks the end of a task.
     *
     * @return whether it had been flagged as a hog (then the next task's start must be read fresh:
     *     {@link Turn}, "Clock reads between tasks")
     */
    boolean taskEnded() {
        TASK_STARTED_AT.setOpaque(this, 0L);
        tasksRun++;
        if (hogStamp != 0) {
            clearHogStamp();
            return true;
        }
        return false;
    }

    long taskStartedAt() {
        return (long) TASK_STARTED_AT.getOpaque(this);
    }

    /**
     * @return the actor of the turn in progress (so of its task in progress, if any), or {@code null}
     *     between turns; any thread (opaque)
     */
    ActorCell currentCell() {
        return turn.cellOpaque();
    }

    long tasksRun() {
        return tasksRun;
    }

    /** Monitor side: flags this carrier as hogged by the task that started at {@code stamp}. */
    boolean tryFlagHog(long stamp) {
        return HOG_STAMP.compareAndSet(this, 0L, stamp);
    }

    /** Monitor side: undoes a flag whose task already ended. */
    boolean tryUnflagHog(long stamp) {
        return HOG_STAMP.compareAndSet(this, stamp, 0L);
    }

    long hogStamp() {
        return hogStamp;
    }

    /** Carrier side: clears a hog flag, if any, and tells the monitor the hog is over. */
    void clearHogStamp() {
        long s = hogStamp;
        if (s != 0 && HOG_STAMP.compareAndSet(this, s, 0L)) {
            engine.hogMonitor().hogEnded();
        }
    }

    // ------------------------------------------------------------------ run-next slot

    /**
     * Owner side: puts {@code cell} in the slot.
     *
     * @return the actor it displaced (now owned by the caller), or {@code null}
     */
    ActorCell putRunNext(ActorCell cell, long now) {
        RUN_NEXT_SINCE.setOpaque(this, now);
        if (runNext == null) {
            // only this carrier fills its slot (rescuers only empty it): an empty slot stays empty until
            // this store, which releases everything written before it to whoever takes the occupant
            // (a rescuer's volatile read and CAS acquire it); no atomic exchange on the hand-off path
            RUN_NEXT.setRelease(this, cell);
            return null;
        }
        return (ActorCell) RUN_NEXT.getAndSet(this, cell);
    }

    /** @return whether the slot is occupied (a volatile read of a field this carrier mostly owns) */
    boolean hasRunNext() {
        return runNext != null;
    }

    /** @return the occupant without taking it, or {@code null} */
    ActorCell peekRunNext() {
        return runNext;
    }

    /** Owner side: takes the occupant (now owned by the caller), or {@code null} if a rescuer took it. */
    ActorCell takeRunNext() {
        return runNext == null ? null : (ActorCell) RUN_NEXT.getAndSet(this, (ActorCell) null);
    }

    /**
     * Rescuer side: takes the occupant if it has waited at least {@code minWaitNanos}.
     *
     * @return the occupant (now owned by the caller), or {@code null}
     */
    ActorCell rescueRunNext(long now, long minWaitNanos) {
        ActorCell c = runNext;
        if (c == null || now - (long) RUN_NEXT_SINCE.getOpaque(this) < minWaitNanos) {
            return null;
        }
        return RUN_NEXT.compareAndSet(this, c, (ActorCell) null) ? c : null;
    }

    void markParked() {
        PARK_STATE.setVolatile(this, PARKED);
    }

    /** @return {@code true} if the caller moved this carrier from PARKED to RUNNING */
    boolean tryUnmarkParked() {
        return PARK_STATE.compareAndSet(this, PARKED, RUNNING);
    }

    boolean isParked() {
        return parkState == PARKED;
    }

    boolean engineIs(SchedulerEngine e) {
        return engine == e;
    }
}
