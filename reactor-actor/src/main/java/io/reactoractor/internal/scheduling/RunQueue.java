package io.reactoractor.internal.scheduling;

/**
 * The set of ready actors and the rule that picks the next one.
 *
 * <p>Methods that take a {@code carrier} get the calling carrier's index in its pool ({@link
 * CarrierThread#index()}), or {@link #OUTSIDE} from any other thread: a run queue may keep one queue per
 * carrier ({@link FairRunQueue}) or one for all ({@link FifoRunQueue}).
 *
 * <p>An actor is in the run queue at most once: only the thread that moved the actor's status to
 * {@code SCHEDULED} (see {@link ActorCell}) may {@link #enqueue} it, and only the carrier that
 * {@link #take took} it may hand it back through {@link #finishTurn}.
 */
interface RunQueue {

    /** The {@code carrier} argument of a thread that is not one of the pool's carriers. */
    int OUTSIDE = -1;

    /** Adds a ready actor (the caller holds its {@code SCHEDULED} bit). */
    void enqueue(ActorCell cell, long now, int carrier);

    /**
     * Removes the actor that should run next and counts it as running.
     *
     * @return the actor, or {@code null} if none is ready
     */
    ActorCell take(int carrier, long now);

    /**
     * Ends a turn: charges {@code elapsed} to the actor and, through the carrier's {@code charge}, to its
     * group, and, if {@code requeue},
     * puts the actor back among the ready ones; then takes the next actor to run in the same
     * critical section.
     *
     * @param takeNext whether to take the next actor as well
     * @param chained  the carrier goes on with an actor from its run-next slot, which takes the
     *                 finished actor's place among the running ones (then {@code takeNext} is false)
     * @return the next actor to run, or {@code null} (always {@code null} if {@code !takeNext})
     */
    ActorCell finishTurn(ActorCell cell, long elapsed, boolean requeue, long now, boolean takeNext,
            boolean chained, int carrier, CarrierCharge charge);

    /**
     * Ends a turn without the run queue's lock: the actor is not re-queued and its carrier goes on
     * with an actor from its run-next slot, which takes its place among the running ones. Charges the
     * actor (confined to its carrier while it runs) and, deferred, its group: through the carrier's
     * {@code charge} (summed there, bounded by {@link CarrierCharge#FLUSH_NANOS}), then the group's
     * pending virtual time (folded in under the lock before the group's virtual time is next read).
     */
    void finishChainedTurn(ActorCell cell, long elapsed, CarrierCharge charge);

    /**
     * Whether the running actor should end its turn early because a ready actor precedes it (see
     * the run-to-parity rule of {@link FairRunQueue}; FIFO never preempts before the quota).
     */
    boolean shouldPreempt(ActorCell running, long turnElapsed, long now, int carrier);

    /** Number of ready (queued, not running) actors; a volatile read, cheap enough per task. */
    int readyCount();

    /** Whether no actor is ready and no turn is running. */
    boolean isQuiescent();

    /**
     * @return how often the run queue's lock or locks were taken so far (plain counters bumped under
     *         the locks: racy to read, exact when quiescent)
     */
    long lockAcquisitions();

    /**
     * @return how often a thread took a lock that is not its own carrier's (a steal, a hand-off from
     *         outside the pool; every acquisition of a run queue shared by all carriers): the benchmarks'
     *         measure of cross-carrier traffic, 0 on the local path
     */
    long remoteLockAcquisitions();
}
