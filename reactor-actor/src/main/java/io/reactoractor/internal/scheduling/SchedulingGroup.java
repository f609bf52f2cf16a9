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

    private static final VarHandle PENDING_VTIME;
    private static final VarHandle VTIME_VIEW;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PENDING_VTIME = l.findVarHandle(SchedulingGroup.class, "pendingVtime", long.class);
            VTIME_VIEW = l.findVarHandle(SchedulingGroup.class, "vtimeView", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    private final int weight;

    /** Ready actors of this group, ordered by their virtual time (guarded by the run queue lock). */
    final ReadyActorQueue ready = new ReadyActorQueue();
    /** Monotonic floor of this group's actors' virtual times (guarded by the run queue lock). */
    long floor;

    /**
     * Virtual time charged by turns that ended without the run queue's lock (a carrier going on with
     * its run-next slot's actor), not yet added to {@link #vtime}: added with an atomic
     * {@code getAndAdd} by any carrier, moved into {@code vtime} by the run queue under its lock
     * ({@link #takePendingVtime}) before it reads the group's virtual time.
     */
    private volatile long pendingVtime;

    /**
     * A copy of {@link #vtime} for readers without the run queue's lock (the lock-free preemption
     * check, {@code FairRunQueue#shouldPreempt}): written with opaque stores under the lock each time
     * {@code vtime} changes, read with opaque loads. Opaque suffices: the reader only needs an untorn,
     * recent value for a heuristic that the next end of turn re-checks under the lock.
     */
    @SuppressWarnings("unused") // through VTIME_VIEW
    private long vtimeView;

    // statistics, added at the end of every turn by any carrier (under the run queue lock or, chained,
    // without it): striped so that carriers running actors of one group do not fight over a cache line
    private final LongAdder cpuNanos = new LongAdder();
    private final LongAdder turns = new LongAdder();

    final Set<ActorCell> cells = ConcurrentHashMap.newKeySet();
    private final AtomicInteger actorCount = new AtomicInteger();

    SchedulingGroup(String name, int weight) {
        this.name = name;
        this.weight = weight;
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
     * Counts run time and turns in the statistics: one turn at its end (any carrier), or several chained
     * turns at once ({@link ChainCharge}).
     */
    void account(long elapsedNanos, long turnCount) {
        cpuNanos.add(elapsedNanos);
        turns.add(turnCount);
    }

    /** Charges virtual time without the run queue's lock (see {@link #pendingVtime}). */
    void chargeLater(long weightedNanos) {
        PENDING_VTIME.getAndAdd(this, weightedNanos);
    }

    /** Run queue lock held: publishes {@link #vtime} for lock-free readers (see {@link #vtimeView}). */
    void publishVtime() {
        VTIME_VIEW.setOpaque(this, vtime);
    }

    /**
     * Without the lock: the group's virtual time as last published, plus the charges not folded yet.
     *
     * @return a recent, untorn estimate of the group's virtual time
     */
    long vtimeEstimate() {
        return (long) VTIME_VIEW.getOpaque(this) + pendingVtime;
    }

    /** Run queue lock held: takes the charges made without it, to add them to {@link #vtime}. */
    long takePendingVtime() {
        return pendingVtime == 0 ? 0 : (long) PENDING_VTIME.getAndSet(this, 0L);
    }

    void register(ActorCell cell) {
        cells.add(cell);
        actorCount.incrementAndGet();
    }

    void unregister(ActorCell cell) {
        if (cells.remove(cell)) {
            actorCount.decrementAndGet();
        }
    }

    @Override
    public String toString() {
        return "SchedulingGroup[" + name + ", weight=" + weight + "]";
    }
}
