package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The schedulable part of an actor: its status word, its place in the run queue and the hooks a
 * concrete actor implements (what "work" is, how one turn runs, what termination drains).
 *
 * <p>This is an internal SPI shared by the library's actor kinds (Reactor workers, typed actors,
 * pull-consumer group actors); applications use the public types in {@code io.reactoractor}.
 *
 * <h2>Status word (one {@code int}, changed only by CAS)</h2>
 * <pre>
 *   bit 0      SCHEDULED  the actor is in the run queue or running on a carrier; whoever sets it
 *                         owns the consumer side of the mailbox until it clears it
 *   bit 1      TERMINATED the actor will never run user work again (set once, never cleared)
 *   bits 2..30 suspend count, in units of 4 (re-entrant: n suspends need n resumes; at most
 *              MAX_SUSPENSIONS, the sign bit stays clear)
 *
 *   state (S=scheduled, T=terminated, n=suspends) | event            | next state / action
 *   ----------------------------------------------+------------------+------------------------------------------
 *   idle      (S=0,T=0,n=0)                        | signal, has work | S=1, enqueue in the run queue
 *   scheduled (S=1,T=0,n=0)                        | signal           | unchanged (no second enqueue, no wake-up)
 *   scheduled (S=1)                                | turn ends        | work left and n=0: stays S=1, re-queued;
 *                                                  |                  | else S=0, then re-check work (lost-signal guard)
 *   any       (T=0)                                | suspend          | n+1; a running turn stops at the next task boundary;
 *                                                  |                  | a queued actor is skipped when taken (S=0)
 *   suspended (n>0)                                | resume           | n-1; reaching n=0 with S=0 and work: signal
 *   suspended (n>0,S=0)                            | signal           | unchanged (work waits for the resume)
 *   any                                            | terminate        | T=1; whoever holds or gains S drains the
 *                                                  |                  | mailbox (pending work is cancelled), then S=0;
 *                                                  |                  | a carrier holding S drains at the turn's end
 *                                                  |                  | whether or not work is left
 *   terminated (T=1)                               | signal           | returns false: the producer's work is rejected
 * </pre>
 */
public abstract class ActorCell extends SchedulingEntity {

    static final int SCHEDULED = 1;
    static final int TERMINATED = 2;
    static final int SUSPEND_UNIT = 4;

    private static final VarHandle STATUS;

    static {
        try {
            STATUS = MethodHandles.lookup().findVarHandle(ActorCell.class, "status", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile int status;

    /**
     * The index of the carrier queue that last gave this actor a turn ({@link FairRunQueue}), -1 before
     * its first: where a wake-up from outside the pool queues it. Written under that queue's lock, read
     * racily by whoever enqueues the actor: a hint, any value in range is correct.
     */
    int homeQueue = -1;

    /**
     * Set by the carrier that took this actor from its run-next slot, which hands an actor over without
     * placing it (rule 3 of {@link FairRunQueue}: a woken actor's virtual time is placed against the
     * floor); {@link FairRunQueue} places it if the turn ends with the actor still ready. Confined to the
     * carrier that holds the actor (handed over with it through the slot's or the run queue's ordering).
     */
    boolean placementDue;

    /**
     * Tasks between two clock reads at the end of this actor's last turn, 0 before its first: where its
     * next turn starts ({@link Turn}, "Clock reads between tasks"). Confined to the carrier that holds
     * the actor, like {@link #placementDue}.
     */
    byte clockStride;

    /**
     * Consecutive turns of this actor that {@code Schedulers.onScheduleHook} failed to run ({@link Turn},
     * "Reactor's schedule hook"): the exponent of the next back-off. Confined to the carrier that holds the
     * actor, like {@link #placementDue}.
     */
    byte hookFailures;

    /**
     * Of the turn that just ended, the wall-clock time its carrier did not run ({@link StolenTime}): set by the
     * carrier before it charges the turn, read by {@link FairRunQueue} as it charges. Confined to the carrier
     * that holds the actor, like {@link #placementDue}.
     */
    long stolenNanos;
    /**
     * Of {@link #stolenNanos}, the part the host took (the carrier was runnable and waited for a core; {@link
     * StolenTime#hostStolen}), which its group is not charged. Guarded as {@code stolenNanos}.
     */
    long hostStolenNanos;
    /**
     * Run time charged to {@link #vtime} but not yet a whole virtual nanosecond ({@code 0 <= r < weight};
     * always 0 at weight 1), carried to the next charge ({@link #weightedCharge}). Guarded as {@code vtime}:
     * written only by the carrier charging the actor's turn.
     */
    long vtimeRemainder;

    private final SchedulerEngine engine;
    private final SchedulingGroup group;
    private final String path;
    private final int weight;
    /** {@link #decoratesTurns()}; final, so published with the cell. */
    private final boolean decorateTurns;
    /**
     * This actor's hash code: random, not the identity hash. Registries keep actors in concurrent hash
     * sets (the group's cells, a group's workers), and an identity hash is computed and installed in the
     * object header on first use (tens of nanoseconds, a measurable part of creating a worker per
     * {@code subscribeOn}). Equality stays identity.
     */
    private final int hash = ThreadLocalRandom.current().nextInt();

    /**
     * @param engine the scheduler that runs this actor
     * @param group  the group whose share this actor uses
     * @param path   the actor's identity, e.g. {@code orders/group-a}
     * @param weight the actor's weight inside its group (≥ 1)
     */
    protected ActorCell(SchedulerEngine engine, SchedulingGroup group, String path, int weight) {
        this(engine, group, path, weight, true);
    }

    /**
     * @param engine        the scheduler that runs this actor
     * @param group         the group whose share this actor uses
     * @param path          the actor's identity, e.g. {@code orders/group-a}
     * @param weight        the actor's weight inside its group (≥ 1)
     * @param decorateTurns whether {@code Schedulers.onScheduleHook} decorates each turn
     *                      ({@link #decoratesTurns()}); {@code false} for an actor whose tasks were each
     *                      decorated when submitted
     */
    protected ActorCell(SchedulerEngine engine, SchedulingGroup group, String path, int weight,
            boolean decorateTurns) {
        if (weight < 1) {
            throw new IllegalArgumentException("weight must be >= 1 but was " + weight);
        }
        this.engine = engine;
        this.group = group;
        this.path = path;
        this.weight = weight;
        this.decorateTurns = decorateTurns;
    }

    /**
     * Counts this actor in its group and its scheduler: the last step of building it, called once by
     * whoever builds it, when the actor and everything its hooks read are assigned (the subclass's
     * fields, and an owner's that the hooks reach). From then on other threads walk it with the group's
     * actors (a disposal terminates it, a gauge reads its {@link #pendingWork()}); joining from this
     * class's constructor let them see it before its subclass's fields were set (a disposal racing
     * {@code createWorker()} threw a {@code NullPointerException} from the worker's mailbox, and the
     * queued-work gauges read {@code NaN}). Not joined, an actor still runs; it is only left out of its
     * group's counts and walks.
     *
     * <p>An actor that joins a group or scheduler already disposed terminates here: the disposal's walk
     * may have missed it. A handshake on volatile variables: the disposal sets its flag ({@link
     * SchedulingGroup#close()}, or the engine's terminal state) and then walks the group's set; this
     * adds itself to the set and then reads both flags. Either the walk sees this actor or this actor
     * sees the flag (or both: {@link #terminate()} is idempotent), so no actor built during a disposal is
     * left running nowhere, accepting work nobody will do.
     */
    public final void joinGroup() {
        if (countIn() && (engine.isStopping() || group.isClosed())) {
            terminate();
        }
    }

    /**
     * Counts this actor in its group and the engine, unless it is terminated: a termination that races this
     * call takes it out again (both sides remove it from the group's set, so it is counted out exactly once).
     *
     * @return whether it is counted in (not terminated when looked at last)
     */
    private boolean countIn() {
        if (group.register(this)) {
            engine.actorCreated(this);
        }
        if (isTerminated()) {
            detachFromGroup();
            return false;
        }
        return true;
    }

    /**
     * Takes this idle actor out of its group's and the engine's counts while its group is retired
     * (see {@code ActorGroup}'s lifecycle); {@link #reattachToGroup()} counts it in again. It keeps
     * working meanwhile: an actor needs no registry to run.
     */
    public final void detachFromGroup() {
        if (group.unregister(this)) {
            engine.actorTerminated(this);
        }
    }

    /** Counts this actor in again when its group is re-attached; a terminated actor stays out ({@link #countIn}). */
    public final void reattachToGroup() {
        if (!isTerminated()) {
            countIn();
        }
    }

    /** @return the scheduler engine running this actor */
    public final SchedulerEngine engine() {
        return engine;
    }

    /** @return the group this actor belongs to */
    public final SchedulingGroup group() {
        return group;
    }

    /**
     * Whether the carrier runs each turn of this actor inside {@code Schedulers.onScheduleHook}
     * ({@link Turn}, "Reactor's schedule hook"): an actor's turn is its drain, which Reactor decorates at
     * each scheduling. Not a Reactor worker's: it decorates each task when it is scheduled, as Reactor's
     * workers do, so its turn is not decorated again.
     *
     * @return {@code true} unless constructed otherwise
     */
    public final boolean decoratesTurns() {
        return decorateTurns;
    }

    /** @return the actor's path */
    public final String path() {
        return path;
    }

    @Override
    public final int weight() {
        return weight;
    }

    /**
     * The virtual time a turn's {@code nanos} of run time are charged: {@code nanos / weight}, the rest of the
     * division carried to the next charge (truncating each turn's charge made every turn shorter than the
     * weight free: an actor of short turns at a weight above them never advanced). The carrier charging the
     * turn only.
     *
     * @param nanos run time, at least 0
     * @return whole virtual nanoseconds to add to {@link #vtime}
     */
    final long weightedCharge(long nanos) {
        int w = weight;
        if (w == 1) {
            return nanos;
        }
        long total = nanos + vtimeRemainder;
        long whole = total / w;
        vtimeRemainder = total - whole * w;
        return whole;
    }

    // ------------------------------------------------------------------ hooks

    /**
     * Whether the mailbox holds work. Any thread; a spurious {@code true} is allowed.
     *
     * @return {@code true} if the mailbox may hold work
     */
    protected abstract boolean hasWork();

    /**
     * A hint for the run-next slot ({@link RunNext}): whether this actor has work beyond the task in
     * progress, i.e. whether its turn would go on after that task. Called only by the carrier running
     * the actor, from inside one of its tasks. A wrong answer costs only speed: {@code false} when the
     * turn goes on moves the woken actor to the run queue at the next task; {@code true} when it ends
     * forgoes the hand-off. The default is {@link #hasWork()}, right for actors that take a task out
     * of their mailbox before running it.
     *
     * @return {@code true} if the turn would go on after the current task
     */
    protected boolean hasWorkAfterCurrentTask() {
        return hasWork();
    }

    /**
     * Runs one turn (inside {@code Schedulers.onScheduleHook} unless {@link #decoratesTurns()} is
     * false: the carrier decorates it, an implementation does not). Call {@link Turn#shouldContinue()} before each message and run each message
     * through {@link Turn#run(Runnable)} (or bracket it with {@link Turn#beginTask()} /
     * {@link Turn#endTask()}) so that the quota, preemption, hog detection and error accounting
     * apply. Only called by the carrier holding {@code SCHEDULED}, never while terminated.
     *
     * @param turn the turn context of the calling carrier
     */
    protected abstract void runTurn(Turn turn);

    /**
     * Cancels all pending work after termination. Called with consumer rights (holding
     * {@code SCHEDULED}), possibly more than once.
     */
    protected abstract void drainTerminated();

    /**
     * Whether the actor is neither queued nor running and has no work: what a graceful group
     * shutdown waits for. Any thread; a momentary answer.
     *
     * @return {@code true} if idle
     */
    public boolean isIdle() {
        return (status & SCHEDULED) == 0 && !hasWork() && !hasClaimedWork();
    }

    /**
     * Whether the actor's mailbox holds work {@link #hasWork()} may not show: a producer claimed the head's
     * place and has not written it yet (the mailbox's {@code isEmpty()} then answers "empty", and what was
     * added behind that place, by producers that returned, waits for it). Scheduling needs no more: that
     * producer signals the actor once it wrote. A graceful close does: it must not end the actor before then
     * (a group's quiescence, {@link #isIdle()}; the scheduler's, {@link SchedulerEngine}), or the work added
     * behind the place, accepted before the close began, would be discarded. Any thread; the default, for
     * actors whose work is not claimed in two steps, is {@code false}.
     *
     * @return whether claimed work is waiting
     */
    public boolean hasClaimedWork() {
        return false;
    }

    /**
     * Whether the actor waits for the answer of a call it made outside the scheduler (a message store's I/O)
     * and must apply it before it may end: the answer is posted to it when it comes, so nothing is queued
     * meanwhile and the actor may be idle or suspended. A graceful close of its group or scheduler waits for
     * it, as it waits for a library timer armed for an actor ({@link #awaitsTimer()}): the work was accepted
     * before the close began (an acknowledgement handed in, for instance) and would otherwise be failed
     * half done. Any thread; a momentary answer that must be {@code true} from before the turn that made the
     * call released the actor until the turn that applied the answer; the default is {@code false}.
     *
     * @return whether an outside answer is awaited
     */
    public boolean awaitsReply() {
        return false;
    }

    /** @return how much work is waiting (approximate); used for {@code Scannable.Attr.BUFFERED} */
    public int pendingWork() {
        return hasWork() ? 1 : 0;
    }

    // ------------------------------------------------------------------ status word

    /**
     * Makes the actor runnable if it has work, is idle and not suspended. Call after adding work.
     *
     * <p>This is the producer's half of the handshake with whoever clears {@code SCHEDULED}, lifts a
     * suspension or drains a terminated actor (each changes the status word by CAS, then asks
     * {@link #hasWork()}): the work added before this call must be visible to that check unless this
     * call schedules the actor itself. So every outcome other than winning the CAS is decided on a
     * status read that follows a full fence. The work may therefore be published with a release store
     * (the mailbox's {@code offerRelease}): the fence orders it before the deciding read, as a
     * volatile store would, but only when the actor is busy, suspended or terminated, and after the
     * store's cache miss has had the first status read to overlap with. An idle actor's CAS needs no
     * fence: it is a volatile write after the work was published, and whoever checks the work later
     * (the carrier that takes the actor from the run queue, a resumer, a terminating or draining
     * thread) first changes the status word by a CAS later in the order, so the work happens-before
     * its check. The argument in full, with its basis (the C++11-style fence semantics of
     * {@code VarHandle}), is beside the mailbox queue ({@code MpscChunkedArrayQueue}).
     *
     * @return {@code false} if the actor is terminated (the caller must reject its work)
     */
    public final boolean signal() {
        boolean fenced = false;
        for (;;) {
            int s = status;
            if ((s & (SCHEDULED | TERMINATED)) != 0 || s >= SUSPEND_UNIT) {
                if (!fenced) {
                    // the store-load fence: the caller's work before the status read this decision rests on
                    VarHandle.fullFence();
                    fenced = true;
                    continue;
                }
                if ((s & TERMINATED) != 0) {
                    tryDrain();
                    return false;
                }
                return true;
            }
            if (STATUS.compareAndSet(this, s, s | SCHEDULED)) {
                engine.enqueue(this);
                return true;
            }
        }
    }

    /** The most suspensions in force at once: the count's bits below the sign bit of {@code status}. */
    public static final int MAX_SUSPENSIONS = Integer.MAX_VALUE >>> 2;

    /**
     * Suspends the actor (re-entrant). The task in progress completes; no further one starts.
     *
     * @throws IllegalStateException if {@link #MAX_SUSPENSIONS} suspensions are in force already (a leak of
     *                               unbalanced suspends: one more would overflow the count and lift them all)
     */
    public final void suspend() {
        for (;;) {
            int s = status;
            if ((s & TERMINATED) != 0) {
                return;
            }
            if ((s >>> 2) >= MAX_SUSPENSIONS) {
                throw new IllegalStateException("actor '" + path + "' is suspended " + MAX_SUSPENSIONS
                        + " times already, the most: each suspend() needs its resume()");
            }
            if (STATUS.compareAndSet(this, s, s + SUSPEND_UNIT)) {
                if (s < SUSPEND_UNIT) {
                    engine.suspendedDelta(1);
                }
                return;
            }
        }
    }

    /**
     * Suspends the actor for {@code nanos} (the turn in progress must end): the scheduler's timer lifts
     * the suspension, or it is lifted at once if the scheduler takes no more timers (it is terminating).
     * A graceful shutdown waits for the timer, as for the actor's work.
     *
     * @param nanos how long
     */
    final void suspendFor(long nanos) {
        suspend();
        timedLifts.incrementAndGet(); // before the timer can fire: awaitsTimer() never misses it while armed
        TimerEntry lift = new TimerEntry() {
            @Override
            protected void fire() {
                timedLifts.decrementAndGet();
                resume();
            }

            @Override
            protected boolean awaitedOnShutdown() {
                return true; // the actor's work is waiting behind it
            }
        };
        if (!engine.scheduleTimer(lift, System.nanoTime() + nanos)) {
            timedLifts.decrementAndGet();
            resume();
        }
    }

    /** Armed {@link #suspendFor} timers (a failing schedule hook's back-off), for {@link #awaitsTimer()}. */
    private final java.util.concurrent.atomic.AtomicInteger timedLifts = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * Whether a one-shot timer of the library that a graceful shutdown waits for is armed for this actor: one that
     * will resume it (a timed suspension: {@code ActorContext.resumeAfter}, an error policy's retry back-off, a
     * failing schedule hook's back-off) or hand it a task ({@code ActorContext.schedule}). A graceful group
     * shutdown waits for these, as the scheduler's does through its timer queue, so a suspended actor whose
     * timer is armed is not yet done. Any thread; a momentary answer.
     *
     * @return {@code true} while such a timer is armed
     */
    public boolean awaitsTimer() {
        return timedLifts.get() > 0;
    }

    /**
     * Undoes one {@link #suspend()}; never goes below zero. When the last suspension is lifted and
     * the actor has work, it is scheduled again.
     *
     * @return {@code true} if a suspension was lifted
     */
    public final boolean resume() {
        for (;;) {
            int s = status;
            if ((s & TERMINATED) != 0 || s < SUSPEND_UNIT) {
                return false;
            }
            int ns = s - SUSPEND_UNIT;
            if (STATUS.compareAndSet(this, s, ns)) {
                if (ns < SUSPEND_UNIT) {
                    engine.suspendedDelta(-1);
                    if ((ns & SCHEDULED) == 0 && hasWork()) {
                        signal();
                    }
                }
                return true;
            }
        }
    }

    /** @return whether at least one suspension is in force (none once terminated: nothing can lift them) */
    public final boolean isSuspended() {
        int s = status;
        return s >= SUSPEND_UNIT && (s & TERMINATED) == 0;
    }

    /** @return the number of suspensions in force ({@code 0} once terminated) */
    public final int suspendCount() {
        int s = status;
        return (s & TERMINATED) != 0 ? 0 : s >>> 2;
    }

    /** @return whether the actor is in the run queue or running (for diagnostics; changes at any time) */
    public final boolean isScheduled() {
        return (status & SCHEDULED) != 0;
    }

    /** @return whether the actor is terminated */
    public final boolean isTerminated() {
        return (status & TERMINATED) != 0;
    }

    /**
     * Terminates the actor: it never runs user work again, and its pending work is drained by
     * {@link #drainTerminated()} (now, if it is idle; at the end of its turn otherwise).
     *
     * @return {@code true} if this call terminated it
     */
    public final boolean terminate() {
        for (;;) {
            int s = status;
            if ((s & TERMINATED) != 0) {
                return false;
            }
            if (STATUS.compareAndSet(this, s, s | TERMINATED)) {
                if (s >= SUSPEND_UNIT) {
                    engine.suspendedDelta(-1);
                }
                if (group.unregister(this)) { // not counted any more if its retired group detached it
                    engine.actorTerminated(this);
                }
                tryDrain();
                return true;
            }
        }
    }

    /**
     * Called by the engine, once it terminated and its last thread exited, for an actor it finds still
     * in the run queue: the queue held {@code SCHEDULED} for a carrier that will never come. Gives the
     * bit back, then terminates and drains the actor (its pending work is cancelled, its terminal
     * signals delivered) like {@link #terminate} does for an idle one.
     */
    final void drainAbandoned() {
        clearScheduled();
        if (!terminate()) {
            tryDrain(); // terminated before, while queued: its drain was left to a holder that never ran
        }
    }

    /** Gains consumer rights if nobody holds them and drains; repeats while late work shows up. */
    private void tryDrain() {
        for (;;) {
            int s = status;
            if ((s & SCHEDULED) != 0) {
                return; // the holder drains at the end of its turn (keepScheduledAfterTurn / releaseAfterTurn)
            }
            if (STATUS.compareAndSet(this, s, s | SCHEDULED)) {
                try {
                    drainTerminated();
                } finally {
                    clearScheduled();
                }
                if (!hasWork()) {
                    return;
                }
            }
        }
    }

    private int clearScheduled() {
        for (;;) {
            int s = status;
            int ns = s & ~SCHEDULED;
            if (STATUS.compareAndSet(this, s, ns)) {
                return ns;
            }
        }
    }

    /** Whether the carrier that holds this actor may start another task in this turn. */
    final boolean runnable() {
        return (status & ~SCHEDULED) == 0; // one read: no suspension counted, not terminated
    }

    /**
     * Called by the carrier after {@link #runTurn} returned, holding {@code SCHEDULED}.
     *
     * @return {@code true} if the actor keeps {@code SCHEDULED} and must be re-queued
     */
    final boolean keepScheduledAfterTurn() {
        int s = status;
        if ((s & TERMINATED) != 0) {
            drainTerminated();
            return false;
        }
        return s < SUSPEND_UNIT && hasWork();
    }

    /**
     * Called by the carrier after the run queue forgot the actor (not re-queued): releases
     * {@code SCHEDULED} and closes the race with producers and resumers that saw it set.
     */
    final void releaseAfterTurn() {
        int ns = clearScheduled();
        if ((ns & TERMINATED) != 0) {
            // whether or not it has work: the termination may have come after keepScheduledAfterTurn read the
            // status (so nobody drained), and terminate() left the drain to the holder, us. An actor with
            // nothing queued still owes its terminal signal (a ring consumer gated by another, a stream)
            tryDrain();
        } else if (ns < SUSPEND_UNIT && hasWork()) {
            signal();
        }
    }

    /** @return a random hash fixed at creation (see {@code hash}); equality is identity */
    @Override
    public final int hashCode() {
        return hash;
    }

    @Override
    public final boolean equals(Object o) {
        return this == o;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + path + "]";
    }
}
