package io.reactoractor.internal.scheduling;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The run-next slot policy (Go's {@code runnext}, Tokio's LIFO slot): an actor woken by the task a
 * carrier is running runs next <em>on that carrier</em>, right after the current turn, without going
 * through the shared run queue. A message exchange between two actors (ask/reply, ping-pong, a
 * pipeline stage feeding the next) then stays on one core: no run-queue lock for the wake-up, no
 * wake-up of another carrier, no cache lines bouncing between cores.
 *
 * <h2>Rules</h2>
 * <ol>
 *   <li><b>Placement</b> ({@link #tryPlace}). A carrier that makes an actor ready from inside a task
 *       puts it in its slot only when its own actor has no more work: the turn is about to end, so the
 *       woken actor waits for the rest of that task, not for a turn. Otherwise, and for every wake-up
 *       from outside the pool (timer, user threads), the actor goes to the run queue. A newer occupant
 *       displaces the older one to the run queue. Placement reads no clock (a clock read was a quarter
 *       of a ping-pong message's cost): the waking task's start stands for the placement time, so an
 *       occupant whose waker had already run for {@value #RESCUE_AFTER_NANOS} ns is fair game for a
 *       rescuer at once (rule 4) — where an age check at placement used to send it to the run queue.</li>
 *   <li><b>Chaining</b> ({@link #next}). At the end of a turn the carrier runs the occupant next,
 *       inheriting the rest of the slice: quota and preemption count from the start of the chain, so a
 *       chain is preempted like one turn. While other actors are ready, at most {@value #MAX_STREAK}
 *       turns in a row come from the slot, and the occupant goes to the run queue instead whenever the
 *       fair order says a waiting actor should run first ({@link RunQueue#shouldPreempt}, evaluated for
 *       the chain's elapsed time, as often as a turn's preemption checks: {@link Turn#preemptCheckDue}):
 *       a ping-pong pair cannot starve the queue. With nobody ready there is
 *       nobody to starve, and the chain goes on. The carrier takes its next actor from the run queue
 *       right after such a flush, so it wakes no other carrier.</li>
 *   <li><b>Flush</b> ({@link #flush}). If the turn goes on to another task instead of ending, the
 *       occupant goes to the run queue before that task starts ({@link Turn#beginTask()}).</li>
 *   <li><b>Rescue</b> ({@link #rescue}). A task that woke an actor and then ran long (a never-ending
 *       {@code publishOn} drain loop) would strand the occupant: an occupant that waited
 *       {@value #RESCUE_AFTER_NANOS} ns (counted from its waker's task start) is moved to the run queue
 *       by spinning idle carriers, by busy carriers at most once per preemption-check interval (at a
 *       turn's end or between its tasks: {@link CarrierThread#maybeRescue}), and by the hog monitor's
 *       periodic check (so the wait is bounded by its interval even when every other carrier is parked
 *       or inside one long task). A rescuer moves it to its own queue, where it competes by virtual time.</li>
 * </ol>
 *
 * <h2>Slot states (one per carrier; the occupant holds its {@code SCHEDULED} bit)</h2>
 * <pre>
 *   slot      | event (thread)                                   | next / action
 *   ----------+--------------------------------------------------+------------------------------------------
 *   empty     | place A (owner, inside the last task of its turn)| A
 *   A         | place B (owner)                                  | B; A to the run queue (a move)
 *   A         | turn ends; nobody ready, or streak &lt; max and   | empty; A runs next on this carrier
 *             | no check due or no preemption (owner)            | (getAndSet), inheriting the running count
 *   A         | turn ends, otherwise (owner)                     | empty; A to the run queue (a move), no
 *             |                                                  | wake-up
 *   A         | next task of the same turn starts (owner)        | empty; A to the run queue (a move)
 *   A         | waited &ge; rescue delay (spinner, busy carrier at | empty (CAS); A to the run queue (a move)
 *             | a check, hog monitor)                            |
 * </pre>
 * Whoever empties the slot (owner: {@code getAndSet}; rescuer: {@code compareAndSet} against the
 * occupant it read) owns the occupant, so exactly one thread runs or enqueues it. Both are volatile
 * atomics, and placement is a volatile {@code getAndSet}: everything the placing thread wrote before
 * (the actor's status CAS, its {@code readyAt}) is visible to whoever takes the actor.
 *
 * <h2>Quiescence without a counter on the hand-off path</h2>
 * A graceful shutdown must never see the scheduler quiescent while an actor waits in a slot
 * ({@link #isEmpty}): it scans the slots, then reads {@code moving}, then (the caller) the run queue.
 * An occupant is always visible to one of the three: placed by a running task (the run queue counts
 * that turn as running until it ends, and a turn ends only after its carrier chained the occupant —
 * it then inherits the running count — or moved it to the run queue); and every move out of a slot
 * to the run queue increments {@code moving} <em>before</em> the slot is emptied and decrements it
 * only <em>after</em> the run queue counts the actor as ready. All volatile (sequentially consistent):
 * a checker that finds the slot already empty reads {@code moving} later, so it sees the move in
 * progress, or reads the run queue later still, after the actor is counted there. A chained hand-off
 * (the common path) touches neither counter.
 */
final class RunNext {

    /** At most this many consecutive turns of a carrier come from its slot. */
    static final int MAX_STREAK = 3;
    /** An occupant that waited this long may be moved to the run queue by another thread. */
    static final long RESCUE_AFTER_NANOS = 100_000L;

    private final SchedulerEngine engine;
    private final RunQueue runQueue;
    /** {@code System::nanoTime}; a test clock in the policy tests. Read at placement only for metrics. */
    private final LongSupplier clock;
    /**
     * Whether placement stamps {@code readyAt} with the clock: only when the scheduling delay is recorded
     * (otherwise the waking task's start stands for it, see rule 1).
     */
    private final boolean exactReadyAt;
    /** Occupants between their slot and the run queue (see "Quiescence"). */
    private final AtomicInteger moving = new AtomicInteger();
    /** Visits the carriers whose slots {@link #isEmpty} scans (the pool's; a test's own carrier). */
    private final java.util.function.Consumer<java.util.function.Consumer<CarrierThread>> carriers;
    private final LongAdder rescued = new LongAdder();

    RunNext(SchedulerEngine engine, RunQueue runQueue, LongSupplier clock,
            java.util.function.Consumer<java.util.function.Consumer<CarrierThread>> carriers) {
        this.engine = engine;
        this.runQueue = runQueue;
        this.clock = clock;
        this.exactReadyAt = engine.config().metrics().recordsSchedulingDelay();
        this.carriers = carriers;
    }

    /**
     * Puts {@code cell} (just made {@code SCHEDULED} by the calling thread) in the calling carrier's
     * slot if the rules allow.
     *
     * @return {@code true} if placed; {@code false}: the caller puts it in the run queue
     */
    boolean tryPlace(CarrierThread carrier, ActorCell cell) {
        long taskStart = carrier.taskStartedAt();
        if (taskStart == 0) {
            return false; // not inside a task (e.g. the carrier loop re-signalling after a turn)
        }
        ActorCell running = carrier.currentCell();
        if (running == null || running == cell || running.hasWorkAfterCurrentTask()) {
            return false; // the turn goes on: the woken actor would wait for it
        }
        // no clock read (rule 1): the task's start stands for now, so the rescue delay counts from there
        long now = taskStart;
        cell.readyAt = exactReadyAt ? clock.getAsLong() : now;
        // only this carrier fills its slot: an occupant seen now is displaced below, unless a rescuer
        // takes it first; count the move before the slot lets go of it
        boolean occupied = carrier.hasRunNext();
        if (occupied) {
            moving.incrementAndGet();
        }
        ActorCell displaced = carrier.putRunNext(cell, now);
        if (displaced != null) {
            toRunQueue(displaced, now, true);
        } else if (occupied) {
            moving.decrementAndGet(); // a rescuer took it (and counted its own move)
        }
        return true;
    }

    /**
     * End of a turn on {@code carrier}: takes the occupant to run next, or moves it to the run queue.
     * A returned actor takes the finished actor's place among the running ones (the caller ends that
     * turn as chained).
     *
     * @param sliceElapsed the time since the start of the current chain (or turn)
     * @param checkDue     whether the slice is due for a preemption check ({@link Turn#preemptCheckDue}):
     *                     between checks the chain goes on without reading what other carriers write, up
     *                     to the streak cap
     * @return the actor to run next on this carrier, or {@code null}
     */
    ActorCell next(CarrierThread carrier, long sliceElapsed, long now, boolean checkDue) {
        ActorCell candidate = carrier.peekRunNext();
        if (candidate == null) {
            carrier.runNextStreak = 0;
            return null;
        }
        boolean capped = carrier.runNextStreak >= MAX_STREAK;
        if ((capped || checkDue) && runQueue.readyCount() > 0
                && (capped || runQueue.shouldPreempt(candidate, sliceElapsed, now, carrier.index()))) {
            carrier.runNextStreak = 0;
            moveToRunQueue(carrier, now, false); // this carrier takes from the run queue right away
            return null;
        }
        ActorCell taken = carrier.takeRunNext();
        if (taken == null) {
            carrier.runNextStreak = 0; // rescued meanwhile
            return null;
        }
        taken.placementDue = true; // woken without placement: placed if its turn ends with it still ready
        carrier.runNextStreak++;
        carrier.chainedTurns++; // carrier-confined: no shared counter on the hand-off path
        return taken;
    }

    /** Moves {@code carrier}'s occupant, if any, to the run queue (owner side). */
    void flush(CarrierThread carrier, long now) {
        if (carrier.hasRunNext()) {
            moveToRunQueue(carrier, now, true);
        }
    }

    private void moveToRunQueue(CarrierThread carrier, long now, boolean wake) {
        moving.incrementAndGet(); // before the slot lets go of the occupant (see "Quiescence")
        ActorCell c = carrier.takeRunNext();
        if (c != null) {
            toRunQueue(c, now, wake);
        } else {
            moving.decrementAndGet(); // rescued meanwhile
        }
    }

    /**
     * Moves an occupant that waited at least {@link #RESCUE_AFTER_NANOS} to the run queue (any thread
     * but the owner).
     *
     * @return whether one was moved
     */
    boolean rescue(CarrierThread carrier, long now) {
        moving.incrementAndGet(); // before the slot lets go of the occupant (see "Quiescence")
        ActorCell c = carrier.rescueRunNext(now, RESCUE_AFTER_NANOS);
        if (c == null) {
            moving.decrementAndGet();
            return false;
        }
        rescued.increment();
        toRunQueue(c, now, true);
        return true;
    }

    /** Caller counted the move in {@code moving}; this ends it once the run queue counts the actor. */
    private void toRunQueue(ActorCell c, long now, boolean wake) {
        try {
            engine.enqueueShared(c, now, wake);
        } finally {
            moving.decrementAndGet(); // after the run queue counts it as ready
        }
    }

    /**
     * Rescues (rule 4) the occupants of every carrier's slot but {@code self}'s that waited at least
     * {@link #RESCUE_AFTER_NANOS}: an idle carrier before it parks, a busy one at most once per
     * preemption-check interval ({@link Turn#lookAtOtherSlots}). Reads each other carrier's slot once.
     *
     * @return whether one was moved (to the caller's queue, when the caller is a carrier)
     */
    boolean rescueOthers(CarrierThread self, long now) {
        boolean[] moved = {false};
        carriers.accept(c -> {
            if (c != self && c.hasRunNext()) {
                moved[0] |= rescue(c, now);
            }
        });
        return moved[0];
    }

    /**
     * Whether no actor waits in a slot or between a slot and the run queue (see "Quiescence": read
     * the run queue after this).
     *
     * @return {@code true} if every slot is empty and no move is in progress
     */
    boolean isEmpty() {
        boolean[] occupied = {false};
        carriers.accept(c -> occupied[0] |= c.hasRunNext());
        return !occupied[0] && moving.get() == 0;
    }


    /** @return occupants moved to the run queue by another thread after waiting too long */
    long rescues() {
        return rescued.sum();
    }
}
