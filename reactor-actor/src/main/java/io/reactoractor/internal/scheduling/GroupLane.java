package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A group's presence in one carrier's queue ({@link CarrierQueue}): that carrier's ready actors of the
 * group, and the group's position in that carrier's heap of groups.
 *
 * <p>Everything here is guarded by the owning queue's lock, except {@link #floor}, which is also read
 * without it (see there). The heap key ({@link #vtime}, inherited) is a <em>snapshot</em> of the
 * group's virtual time, which is global and charged by every carrier without this lock: a group's
 * virtual time only grows, so a snapshot is never larger than the truth, and the queue refreshes the
 * top of its heap before it picks ({@link CarrierQueue#refreshTop}). Popping stale tops until the top
 * is fresh gives the exact minimum: every other key is at least the fresh top's, and every true value
 * at least its key.
 */
final class GroupLane extends SchedulingEntity {

    private static final VarHandle FLOOR;

    static {
        try {
            FLOOR = MethodHandles.lookup().findVarHandle(GroupLane.class, "floor", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SchedulingGroup group;
    /** The group's ready actors queued on this carrier, by their virtual time. */
    final ReadyActorQueue ready = new ReadyActorQueue();
    /**
     * The largest virtual time of this group's actors picked on this carrier (monotonic). Written with
     * opaque stores under the queue's lock; read with opaque loads by any carrier placing an actor of the
     * group into this lane while it has ready actors; the group's floor over all lanes ({@link
     * SchedulingGroup#floor()}) follows it in steps, so that actor virtual times stay comparable across
     * carriers without a shared counter written at every pick.
     */
    @SuppressWarnings("unused") // through FLOOR
    private long floor;

    GroupLane(SchedulingGroup group) {
        this.group = group;
    }

    @Override
    public int weight() {
        return group.weight();
    }

    /** Lock held: raises this lane's floor to {@code v} if larger. */
    void raiseFloor(long v) {
        if (v > (long) FLOOR.getOpaque(this)) {
            FLOOR.setOpaque(this, v);
            group.laneFloorRose(v);
        }
    }

    /** Any thread: the floor as last published (untorn, recent). */
    long floorView() {
        return (long) FLOOR.getOpaque(this);
    }
}
