package io.reactoractor.scheduling;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A set of actors sharing one fair share of the scheduler (a tenant, a consumer group).
 *
 * <p>CPU is divided between groups first (by the group's virtual time, advanced by
 * {@code elapsed / weight} for every turn of any of its actors) and then between the actors of
 * the group (by the actor's own virtual time). A group with 1,000 busy actors therefore gets the
 * same share as a group with one, at equal weight.
 */
public final class SchedulingGroup extends SchedulingEntity {

    private final String name;
    private final int weight;

    /** Ready actors of this group, ordered by their virtual time (guarded by the run queue lock). */
    final ReadyActorHeap ready = new ReadyActorHeap();
    /** Monotonic floor of this group's actors' virtual times (guarded by the run queue lock). */
    long floor;

    // statistics: written under the run queue lock, read by anyone
    private volatile long cpuNanos;
    private volatile long turns;

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
        return cpuNanos;
    }

    /** @return number of turns run by this group's actors */
    public long turns() {
        return turns;
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

    /** Called under the run queue lock at the end of every turn. */
    void account(long elapsedNanos) {
        cpuNanos = cpuNanos + elapsedNanos;
        turns = turns + 1;
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
