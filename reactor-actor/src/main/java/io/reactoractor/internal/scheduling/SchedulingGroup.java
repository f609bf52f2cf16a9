package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A set of actors sharing one fair share of the scheduler (a tenant, a consumer group).
 *
 * <p>CPU is divided between groups first (by the group's virtual time, advanced by
 * {@code elapsed / weight} for every turn of any of its actors) and then between the actors of
 * the group (by the actor's own virtual time). A group with 1,000 busy actors therefore gets the
 * same share as a group with one, at equal weight.
 */
public final class SchedulingGroup extends SchedulingEntity {

    /** The group's virtual time ({@code vtime}, inherited): global, charged by every carrier. */
    private static final VarHandle VTIME;
    private static final VarHandle LANES;
    private static final VarHandle FLOOR;
    private static final VarHandle REMAINDER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            VTIME = l.findVarHandle(SchedulingEntity.class, "vtime", long.class);
            LANES = l.findVarHandle(SchedulingGroup.class, "lanes", GroupLane[].class);
            FLOOR = l.findVarHandle(SchedulingGroup.class, "floor", long.class);
            REMAINDER = l.findVarHandle(SchedulingGroup.class, "chargeRemainder", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** {@link #vtime} of a group never placed in a run queue yet (it starts at the root floor). */
    static final long UNPLACED = Long.MIN_VALUE;

    private final String name;
    private final int weight;

    /**
     * The group's lane on each carrier's queue (index = queue index), created on first use. The array
     * is installed once with a CAS (so every thread sees one array); slot {@code i} is written and
     * read only under the lock of queue {@code i}.
     */
    @SuppressWarnings("unused") // through LANES
    private volatile GroupLane[] lanes;

    /** How far {@link #floor} may lag behind the largest of the lanes' floors, in virtual nanoseconds. */
    static final long FLOOR_STEP = 50_000L;

    /**
     * The group's actor floor over all carriers, published in steps: raised (CAS, only upwards) when a
     * lane's floor rises more than {@link #FLOOR_STEP} above it, so it is written about once per step of
     * the group's progress instead of at every pick, and a placement reads one line that rarely changes
     * instead of every lane's (each written by its carrier at every pick). Invariant: {@code
     * max(lane floors) - FLOOR_STEP <= floor <= max(lane floors)}: lane floors and this value only grow,
     * and a lane that rises to {@code v} leaves this value at least {@code v - FLOOR_STEP}.
     */
    @SuppressWarnings("unused") // through FLOOR
    private long floor;

    // statistics, added by any carrier in sums of its turns (CarrierCharge): striped so that carriers
    // running actors of one group do not fight over a cache line
    private final LongAdder cpuNanos = new LongAdder();
    private final LongAdder turns = new LongAdder();

    final Set<ActorCell> cells = ConcurrentHashMap.newKeySet();
    private final AtomicInteger actorCount = new AtomicInteger();
    /**
     * Set by the group's disposal before it terminates the group's actors (volatile): an actor that joins
     * after that terminates itself ({@link ActorCell#joinGroup()}).
     */
    private volatile boolean closed;
    /**
     * Set when the group begins to close gracefully (volatile): from then on each turn of its actors is counted
     * in {@link #turnsWhileQuiescing} as it starts, which its quiescence check needs ({@code ActorGroup}); before,
     * a turn pays one read of this rarely written field and nothing else.
     */
    private volatile boolean quiescing;
    private final java.util.concurrent.atomic.AtomicLong turnsWhileQuiescing = new java.util.concurrent.atomic.AtomicLong();

    SchedulingGroup(String name, int weight) {
        this.name = name;
        this.weight = weight;
        this.vtime = UNPLACED;
    }

    /** @return the group's name */
    public String name() {
        return name;
    }

    @Override
    public int weight() {
        return weight;
    }

    /** @return total measured run time of this group's turns, in nanoseconds */
    public long cpuTimeNanos() {
        return cpuNanos.sum();
    }

    /** @return number of turns run by this group's actors */
    public long turns() {
        return turns.sum();
    }

    /** @return number of live (not terminated) actors in this group */
    public int actors() {
        return actorCount.get();
    }

    /**
     * Visits the live actors of this group.
     *
     * @param action called with each live actor
     */
    public void forEachCell(java.util.function.Consumer<? super ActorCell> action) {
        cells.forEach(action);
    }

    /**
     * Counts run time and turns in the statistics: a carrier's sum of turns ({@link CarrierCharge}).
     */
    void account(long elapsedNanos, long turnCount) {
        cpuNanos.add(elapsedNanos);
        turns.add(turnCount);
    }

    /**
     * Run time charged but not yet a whole virtual nanosecond ({@code 0 <= r < weight}; always 0 at weight 1),
     * carried to the next {@link #charge}: truncating each charge's {@code nanos / weight} made every charge
     * shorter than the weight free, so a heavy group of short turns never advanced and starved the others.
     */
    @SuppressWarnings("unused") // through REMAINDER
    private long chargeRemainder;

    /**
     * Charges run time as virtual time (any carrier, no lock): {@code nanos / weight}, the division's rest
     * carried to the next charge. One atomic addition per {@link CarrierCharge} flush (a sum of at most that
     * many ns of a carrier's turns), and at a weight above 1 a CAS on the remainder first: the CAS decides,
     * for each flush, how many whole virtual nanoseconds it adds, so every charged nanosecond counts once
     * however many carriers charge at once (the addition that follows may land after a concurrent one's:
     * the sum is the same). The group is placed before any of its actors runs.
     *
     * @param nanos run time, not weighted
     */
    void charge(long nanos) {
        if (nanos <= 0) {
            return;
        }
        long whole;
        if (weight == 1) {
            whole = nanos;
        } else {
            for (;;) {
                long r = (long) REMAINDER.getVolatile(this);
                long total = r + nanos;
                whole = total / weight;
                if (REMAINDER.compareAndSet(this, r, total - whole * weight)) {
                    break;
                }
            }
        }
        if (whole != 0) {
            VTIME.getAndAdd(this, whole);
        }
    }

    /**
     * Any thread: the group's virtual time (a volatile read; {@link #UNPLACED} before its first
     * placement). It only grows, which the carriers' heaps rely on (see {@link GroupLane}).
     */
    long vtimeNow() {
        return (long) VTIME.getVolatile(this);
    }

    /**
     * Placement at the root (rule 3 of {@link FairRunQueue}): a brand-new group starts at
     * {@code rootFloor}; a waking one at {@code max(own, rootFloor - credit)}. A CAS loop, because
     * carriers charge and place the group concurrently; it only ever raises the value.
     *
     * @return the group's virtual time after placement
     */
    long place(long rootFloor, long credit) {
        for (;;) {
            long v = vtimeNow();
            long placed = v == UNPLACED ? rootFloor : Math.max(v, rootFloor - credit);
            if (placed == v || VTIME.compareAndSet(this, v, placed)) {
                return placed;
            }
        }
    }

    /**
     * This group's lane on queue {@code index} of {@code count}, created if absent. Only under the lock
     * of queue {@code index} (the only writer of that slot).
     */
    GroupLane lane(int index, int count) {
        GroupLane[] ls = lanes;
        if (ls == null) {
            LANES.compareAndSet(this, null, new GroupLane[count]);
            ls = lanes;
        }
        GroupLane lane = ls[index];
        if (lane == null) {
            lane = new GroupLane(this);
            ls[index] = lane;
        }
        return lane;
    }

    /**
     * Any thread: the group's actor floor, the largest virtual time of its actors picked on any carrier,
     * less at most {@link #FLOOR_STEP} (an opaque read of {@link #floor}: untorn and recent, and a stale
     * value is only lower, which hands a placed actor at most that much more credit): where a brand-new
     * actor of the group starts, and what a sleeper joining an idle lane is placed against.
     */
    long floor() {
        return (long) FLOOR.getOpaque(this);
    }

    /**
     * A lane's floor rose to {@code v} (its queue's lock held): raises {@link #floor} to {@code v} if
     * {@code v} is more than {@link #FLOOR_STEP} above it. The CAS is what keeps the invariant against a
     * concurrent raise from another lane (a plain store could put a lower value over a higher one).
     */
    void laneFloorRose(long v) {
        long f = (long) FLOOR.getOpaque(this);
        while (v - f > FLOOR_STEP) {
            long witness = (long) FLOOR.compareAndExchange(this, f, v);
            if (witness == f) {
                return;
            }
            f = witness;
        }
    }

    /**
     * While the group is retired (idle, out of the scheduler's registries): what re-attaches it. An actor
     * registering meanwhile runs it. Written and cleared under the scheduler's group lock; read by any
     * thread that registers an actor.
     */
    private volatile Runnable reattach;

    /**
     * Counts an actor in (from its constructor, or when its group is re-attached).
     *
     * <p>Against a concurrent retirement this is one side of a Dekker handshake: the count is raised
     * (a volatile read-modify-write) before {@link #reattach} is read, and {@link #tryRetire} writes
     * {@code reattach} (volatile) before it reads the count. Volatile accesses are sequentially
     * consistent, so either the retirement sees this actor and backs off, or this actor sees the
     * retirement and re-attaches its group. No actor is left in a retired group.
     *
     * @return {@code false} if it was counted already
     */
    boolean register(ActorCell cell) {
        actorCount.incrementAndGet();
        Runnable r = reattach;
        if (r != null) {
            // before the cell joins the set: the re-attachment may wait for the scheduler's group lock,
            // and a half-built cell (its subclass's fields not set yet) must not be visible meanwhile to
            // whoever walks the set (a group's dispose, a gauge)
            r.run();
        }
        if (!cells.add(cell)) {
            actorCount.decrementAndGet(); // counted already
            return false;
        }
        return true;
    }

    /** @return {@code false} if it was not counted (terminated, or detached by a retirement, before) */
    boolean unregister(ActorCell cell) {
        if (cells.remove(cell)) {
            actorCount.decrementAndGet();
            return true;
        }
        return false;
    }

    /**
     * Marks the group retired if it has exactly {@code expectedActors} actors (the idle ones its owner
     * will detach); from then on an actor registering runs {@code reattach}. The caller holds the
     * scheduler's group lock. See {@link #register} for the handshake.
     *
     * @param reattach       what an actor registering while the group is retired runs
     * @param expectedActors the group's idle actors its owner will detach
     * @return whether the group is now marked retired
     */
    public boolean tryRetire(Runnable reattach, int expectedActors) {
        this.reattach = reattach;
        if (actorCount.get() != expectedActors) {
            this.reattach = null;
            return false;
        }
        return true;
    }

    /** The group is attached again (or its retirement was undone): registering no longer re-attaches. */
    public void attached() {
        this.reattach = null;
    }

    /** The group is being disposed: call before terminating its actors (see {@link ActorCell#joinGroup()}). */
    public void close() {
        closed = true;
    }

    /** @return whether the group was disposed */
    public boolean isClosed() {
        return closed;
    }

    /** The group begins to close gracefully: count the turns its actors start from now on. */
    public void startQuiescing() {
        quiescing = true;
    }

    /** A carrier is about to run a turn of one of this group's actors (before any of its work). */
    void turnStarting() {
        if (quiescing) {
            turnsWhileQuiescing.incrementAndGet(); // volatile: ordered before the turn's work, and its wake-ups
        }
    }

    /** @return the turns started since {@link #startQuiescing()} (only counted from then) */
    public long turnsWhileQuiescing() {
        return turnsWhileQuiescing.get();
    }

    /** @return whether the group is marked retired */
    public boolean isRetired() {
        return reattach != null;
    }

    @Override
    public String toString() {
        return "SchedulingGroup[" + name + ", weight=" + weight + "]";
    }
}
