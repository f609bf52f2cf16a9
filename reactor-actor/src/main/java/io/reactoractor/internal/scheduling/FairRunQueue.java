package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The fair run queue: hierarchical ordering by weighted virtual time (Linux CFS style).
 *
 * <h2>Rules</h2>
 * <ol>
 *   <li><b>Charging.</b> At the end of a turn that ran {@code e} ns, the actor's virtual time grows by
 *       {@code e / actorWeight} and its group's by {@code e / groupWeight}.</li>
 *   <li><b>Picking.</b> The group with the least virtual time among groups that have ready actors,
 *       then that group's ready actor with the least virtual time; ties go to the one that became
 *       ready first.</li>
 *   <li><b>Placement.</b> Each level keeps a monotonic floor (the virtual time of the last entity
 *       picked there). A brand-new entity starts <em>at</em> the floor (no head start, so
 *       newcomers cannot monopolise the pool); a waking entity gets
 *       {@code max(own, floor - credit)}: at most {@code credit} of advantage for having slept,
 *       never an unbounded one (QMQ's failure with raw cumulative totals).</li>
 *   <li><b>Preemption (run to parity).</b> Between two tasks a running actor yields if the actor
 *       that would be picked next has a smaller virtual time (compared at the group level when it
 *       belongs to another group) and either the running turn has used its minimum slice
 *       ({@code granularity}) or the other actor is at least {@code granularity} of virtual time
 *       behind (wake-up preemption: a sleeper or a light tenant cuts in at the next task boundary).
 *       How long the other actor has <em>waited</em> does not matter: with thousands of ready actors
 *       every one of them has waited, and cutting each turn after one task made every task pay for
 *       a whole turn. The quota stays the hard backstop.</li>
 * </ol>
 *
 * <p>One lock guards the whole structure, except for two paths. (1) A turn that ends with its carrier
 * going on with its run-next slot's actor ({@link RunNext}) is charged without the lock
 * ({@link #finishChainedTurn}): the actor's virtual time is its carrier's while it runs, and the
 * group's charge is summed on the carrier ({@link ChainCharge}: handed over after at most
 * {@value ChainCharge#FLUSH_NANOS} ns of run time, at a change of group, and before the carrier takes
 * this lock or idles), then waits in {@code SchedulingGroup.pendingVtime} until {@code fold} adds it
 * under the lock, before any read of that group's virtual time under the lock (enqueue, take, end of
 * turn). So a group's virtual time as seen here lags by at most that much run time per carrier. (2) The preemption check
 * ({@link #shouldPreempt}) reads published copies (the next pick, the groups' virtual times plus their
 * pending charges) and takes no lock: it is a heuristic that every end of turn corrects.
 *
 * <p>Groups sit in a {@link VTimeHeap} (their virtual time changes while queued; there are few), the
 * ready actors of a group in a {@link ReadyActorQueue}: an exact heap while small, a calendar of
 * virtual-time buckets whose cost does not grow with the ready set when large. A per-carrier queue
 * with stealing would scale further past a handful of threads; with the thread counts this library
 * targets the lock is uncontended most of the time, and a message exchange between actors does not
 * take it at all (the run-next slot).
 */
final class FairRunQueue implements RunQueue {

    private final VTimeHeap<SchedulingGroup> groups = new VTimeHeap<>();
    private final long credit;
    private final long granularity;
    private long rootFloor;
    private long seq;
    private int running;
    /** Lock acquisitions (written under the lock, read racily by {@link #lockAcquisitions()}). */
    private long locks;
    private volatile int ready;

    // The next pick as of the last change under the lock, for the lock-free preemption check: written
    // with opaque stores under the lock (publishHead), read with opaque loads by shouldPreempt.
    private static final VarHandle HEAD_GROUP;
    private static final VarHandle HEAD_ACTOR_VTIME;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD_GROUP = l.findVarHandle(FairRunQueue.class, "headGroup", SchedulingGroup.class);
            HEAD_ACTOR_VTIME = l.findVarHandle(FairRunQueue.class, "headActorVtime", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The group that would be picked next, or {@code null} (see {@link #publishHead}). */
    @SuppressWarnings("unused") // through HEAD_GROUP
    private SchedulingGroup headGroup;
    /** The virtual time of that group's next actor (see {@link #publishHead}). */
    @SuppressWarnings("unused") // through HEAD_ACTOR_VTIME
    private long headActorVtime;

    FairRunQueue(long creditNanos, long granularityNanos) {
        this.credit = creditNanos;
        this.granularity = granularityNanos;
    }

    @Override
    public synchronized void enqueue(ActorCell cell, long now) {
        locks++;
        SchedulingGroup g = cell.group();
        fold(g);
        place(cell, g.floor);
        addReady(cell, g, now);
        publishHead();
    }

    private void addReady(ActorCell cell, SchedulingGroup g, long now) {
        cell.readyAt = now;
        cell.seq = ++seq;
        g.ready.add(cell);
        if (g.heapIndex < 0) {
            place(g, rootFloor);
            g.publishVtime();
            g.seq = seq;
            g.readyAt = now;
            groups.add(g);
        }
        ready = ready + 1;
    }

    private void place(SchedulingEntity e, long floor) {
        if (!e.placed) {
            e.vtime = floor;
            e.placed = true;
        } else if (e.vtime < floor - credit) {
            e.vtime = floor - credit;
        }
    }

    @Override
    public synchronized ActorCell take(long now) {
        locks++;
        ActorCell cell = takeLocked();
        publishHead();
        return cell;
    }

    private ActorCell takeLocked() {
        SchedulingGroup g = groups.peek();
        if (g == null) {
            return null;
        }
        fold(g);
        ActorCell cell = g.ready.poll();
        if (cell.vtime > g.floor) {
            g.floor = cell.vtime;
        }
        if (g.vtime > rootFloor) {
            rootFloor = g.vtime;
        }
        if (g.ready.isEmpty()) {
            groups.remove(g);
        }
        ready = ready - 1;
        running++;
        return cell;
    }

    @Override
    public synchronized ActorCell finishTurn(ActorCell cell, long elapsed, boolean requeue, long now,
            boolean takeNext, boolean chained) {
        locks++;
        if (!chained) {
            running--;
        }
        SchedulingGroup g = cell.group();
        fold(g);
        long e = Math.max(0L, elapsed);
        cell.vtime += e / cell.weight();
        g.vtime += e / g.weight();
        g.publishVtime();
        g.account(e, 1L);
        if (g.heapIndex >= 0) {
            groups.update(g);
        }
        if (requeue) {
            addReady(cell, g, now);
        }
        ActorCell next = takeNext ? takeLocked() : null;
        publishHead();
        return next;
    }

    /**
     * Without the lock (the run-to-parity rule above). It reads the next pick as published by the last
     * change under the lock ({@link #publishHead}) and the groups' virtual times as published
     * ({@link SchedulingGroup#vtimeEstimate}), each an opaque load: recent and untorn, not a consistent
     * snapshot. A stale answer costs one early or one late preemption, never fairness: the turn's end
     * charges and re-sorts under the lock, and the quota bounds any turn. The check runs at most once per
     * check interval of a turn and once per run-next hand-off, so it must not take the lock every time
     * others are ready (with hundreds of ready actors, that was one lock per message).
     */
    @Override
    public boolean shouldPreempt(ActorCell current, long turnElapsed, long now) {
        if (ready == 0) {
            return false;
        }
        SchedulingGroup g = (SchedulingGroup) HEAD_GROUP.getOpaque(this);
        if (g == null) {
            return false;
        }
        SchedulingGroup mine = current.group();
        // How far the next pick is behind the running actor, in virtual time, compared where they
        // differ: between groups, or between actors of the running actor's group. The running actor's
        // own virtual time is its carrier's while it runs.
        long lead = g != mine
                ? mine.vtimeEstimate() + turnElapsed / mine.weight() - g.vtimeEstimate()
                : current.vtime + turnElapsed / current.weight() - (long) HEAD_ACTOR_VTIME.getOpaque(this);
        if (lead <= 0) {
            return false; // the running actor is still the fairest choice
        }
        // Run to parity: a turn has a minimum slice, so thousands of ready actors do not make every
        // task pay for a whole turn; a waking actor far enough behind (a sleeper placed at
        // floor - credit, a light tenant) cuts in at the next task boundary.
        return turnElapsed >= granularity || lead >= granularity;
    }

    /** Lock held, after a change: publishes the next pick for {@link #shouldPreempt}. */
    private void publishHead() {
        SchedulingGroup g = groups.peek();
        if (g != null) {
            HEAD_ACTOR_VTIME.setOpaque(this, g.ready.peekVtime());
        }
        HEAD_GROUP.setOpaque(this, g);
    }

    @Override
    public void finishChainedTurn(ActorCell cell, long elapsed, ChainCharge charge) {
        SchedulingGroup g = cell.group();
        long e = Math.max(0L, elapsed);
        cell.vtime += e / cell.weight(); // the running actor is in no heap: its carrier owns its vtime
        charge.add(g, e / g.weight(), e); // to the group in sums (ChainCharge: bounded lag)
    }

    /**
     * Lock held: adds the group's lock-free charges to its virtual time (and re-sorts it if queued),
     * so every comparison below sees them.
     */
    private void fold(SchedulingGroup g) {
        long pending = g.takePendingVtime();
        if (pending != 0) {
            g.vtime += pending;
            g.publishVtime();
            if (g.heapIndex >= 0) {
                groups.update(g);
            }
        }
    }

    @Override
    public int readyCount() {
        return ready;
    }

    @Override
    public synchronized boolean isQuiescent() {
        return ready == 0 && running == 0;
    }

    @Override
    public long lockAcquisitions() {
        return locks;
    }
}
