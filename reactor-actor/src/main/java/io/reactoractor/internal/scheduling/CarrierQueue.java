package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongSupplier;

import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;

/**
 * One carrier's part of the {@link FairRunQueue}: the ready actors queued on that carrier, grouped by
 * {@link GroupLane}, the lanes in a heap ordered by their group's (global) virtual time. Its monitor is
 * the lock; its own carrier takes it on every turn end, another carrier only to steal from it (or an
 * outside thread to hand it an actor), so it is uncontended on the local path.
 *
 * <p>Waking an actor takes no lock: it waits in {@link #arrivals}, a lock-free queue that whoever
 * holds the lock moves into the heap ({@code FairRunQueue#drainArrivals}), usually this queue's carrier
 * at its next pick. A submitting thread then never contends with the carrier for its lock, which under
 * a burst of outside submissions made both wait on an inflated monitor (1.4 µs per submission with
 * 65,536 workers made ready from one thread, where Reactor's {@code parallel()} took 0.6-0.9 µs); and a
 * carrier's own wake-ups (most messages wake an actor) cost an offer, not a lock, a heap insertion and
 * a head publication each.
 *
 * <p>Fields: the heap, {@link #seq}, {@link #running} and the counters of lock acquisitions are guarded
 * by the lock; {@link #ready} is volatile (written under the lock, read without it by the idle check, the
 * preemption check and stealers); the published head ({@link #publishHead}) is written with opaque
 * stores under the lock and read with opaque loads by any carrier.
 */
final class CarrierQueue {

    /** Slots per chunk of {@link #arrivals}: wake-ups allocate a chunk per this many. */
    private static final int ARRIVAL_CHUNK = 1024;

    private static final VarHandle READY;
    private static final VarHandle HEAD_GROUP;
    private static final VarHandle HEAD_ACTOR_VTIME;
    private static final VarHandle ROOT_FLOOR;
    private static final VarHandle PUBLISHED_AT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            READY = l.findVarHandle(CarrierQueue.class, "ready", int.class);
            HEAD_GROUP = l.findVarHandle(CarrierQueue.class, "headGroup", SchedulingGroup.class);
            HEAD_ACTOR_VTIME = l.findVarHandle(CarrierQueue.class, "headActorVtime", long.class);
            ROOT_FLOOR = l.findVarHandle(CarrierQueue.class, "rootFloor", long.class);
            PUBLISHED_AT = l.findVarHandle(CarrierQueue.class, "publishedAt", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // keeps the hot fields below off the cache line of whatever the allocator put before this queue
    @SuppressWarnings("unused")
    private long p01, p02, p03, p04, p05, p06, p07;

    final int index;
    private final int count;
    private final VTimeHeap<GroupLane> lanes = new VTimeHeap<>();
    private long seq;
    /** Acquisitions of this queue's lock by its own carrier (plain, under the lock; read racily). */
    long localLocks;
    /** Acquisitions by any other thread: steals, hand-offs from outside (plain, under the lock). */
    long remoteLocks;
    /**
     * Actors queued here, not counting {@link #arrivals}: written under the lock with release stores
     * (a pick, a re-queue or a drain of arrivals pays no store-load fence), read without it with volatile
     * loads (the idle check, the preemption check, stealers). No write here needs a store-load fence: a
     * wake-up's half of the idle handshake ({@link CarrierPool}) is its offer to {@link #arrivals}.
     */
    volatile int ready;
    /**
     * Actors made ready for this queue, not yet in the heap: offered by any thread (this queue's carrier
     * too) without the lock, polled only under it (so by one thread at a time: the queue's single consumer).
     * Each holds its {@code SCHEDULED} bit and its {@code readyAt}. Offers are volatile and its
     * {@code size()}/{@code isEmpty()} read volatile indices, so the idle handshake of {@link CarrierPool}
     * ("enqueuer: make ready; read spinning; read parked") holds with the offer as the "make ready".
     */
    final MpscChunkedArrayQueue<ActorCell> arrivals = new MpscChunkedArrayQueue<>(ARRIVAL_CHUNK);
    /** Turns running on this queue's carrier: guarded by the lock (read only under it, by the quiescence check). */
    int running;
    /**
     * The owner carrier's clock from which its next pick compares its head with the other queues'
     * ({@link FairRunQueue}, rule 5): confined to the carrier that owns this queue (plain).
     */
    long nextRemoteLook;

    /** The group of the actor this queue would pick next, or {@code null} (see {@link #publishHead}). */
    @SuppressWarnings("unused") // through HEAD_GROUP
    private SchedulingGroup headGroup;
    /** The virtual time of that actor. */
    @SuppressWarnings("unused") // through HEAD_ACTOR_VTIME
    private long headActorVtime;
    /**
     * The largest group virtual time picked here (monotonic; opaque stores under the lock). The root
     * floor of rule 3 is the maximum over all carriers' queues, read only when a group is placed.
     */
    @SuppressWarnings("unused") // through ROOT_FLOOR
    private long rootFloor;
    /** When the head was last published (the caller's clock; opaque): how stale it may be. */
    @SuppressWarnings("unused") // through PUBLISHED_AT
    private long publishedAt;

    @SuppressWarnings("unused")
    private long p11, p12, p13, p14, p15, p16, p17;

    CarrierQueue(int index, int count) {
        this.index = index;
        this.count = count;
    }

    /** Lock held: queues {@code cell}, placed by the caller, and publishes the head. */
    void add(ActorCell cell, long now, LongSupplier rootFloor, long credit) {
        cell.readyAt = now;
        addUnpublished(cell, now, rootFloor, credit);
        publishHead(now);
    }

    /**
     * Lock held: as {@link #add}, keeping the {@code readyAt} the cell already has (an arrival), without
     * publishing the head: a drain of arrivals publishes once for the batch (with thousands of actors
     * woken at once, a publication per actor read a cold heap top each time).
     */
    void addUnpublished(ActorCell cell, long now, LongSupplier rootFloor, long credit) {
        SchedulingGroup g = cell.group();
        GroupLane lane = g.lane(index, count);
        cell.seq = ++seq;
        lane.ready.add(cell);
        if (lane.heapIndex < 0) {
            lane.vtime = g.place(rootFloor.getAsLong(), credit);
            lane.seq = seq;
            lane.readyAt = now;
            lanes.add(lane);
            // a lane in the heap places its group's waking actors against its own floor (FairRunQueue,
            // place): it must not be older than the group's. This lane may have picked nothing for a long
            // time while the group ran elsewhere; its first actors were placed against the group's floor
            // or (a thief's share) were not placed at all, and a sleeper woken next would otherwise get
            // the credit of everything the group ran meanwhile
            lane.raiseFloor(g.floor());
        }
        READY.setRelease(this, ready + 1);
    }

    /**
     * Lock held: removes the actor that should run next here (least group virtual time, then least
     * actor virtual time), or returns {@code null}; raises the floors. The caller counts it as running.
     */
    ActorCell poll(long now) {
        ActorCell cell = removeTop(true);
        if (cell != null) {
            publishHead(now);
        }
        return cell;
    }

    /**
     * Lock held: removes the actor {@link #poll} would return, to move it to another carrier's queue
     * (a thief's share, {@code FairRunQueue#steal}): no floor is raised (it is not picked here) and the
     * head is not published (the caller publishes once for the batch).
     *
     * @return the actor, or {@code null} if none is queued here
     */
    ActorCell removeForMove() {
        return removeTop(false);
    }

    /** Lock held: removes the top lane's next actor; raises the floors if it is {@code picked} here. */
    private ActorCell removeTop(boolean picked) {
        GroupLane lane = refreshTop();
        if (lane == null) {
            return null;
        }
        ActorCell cell = lane.ready.poll();
        if (picked) {
            lane.raiseFloor(cell.vtime);
            long gv = lane.group.vtimeNow();
            if (gv > (long) ROOT_FLOOR.getOpaque(this)) {
                ROOT_FLOOR.setOpaque(this, gv);
            }
        }
        if (lane.ready.isEmpty()) {
            lanes.remove(lane);
        }
        READY.setRelease(this, ready - 1);
        return cell;
    }

    /**
     * Lock held: brings the top lane's key up to its group's virtual time until the top is fresh
     * (see {@link GroupLane}: the result is the exact minimum).
     */
    GroupLane refreshTop() {
        for (;;) {
            GroupLane top = lanes.peek();
            if (top == null) {
                return null;
            }
            long v = top.group.vtimeNow();
            if (v <= top.vtime) {
                return top;
            }
            top.vtime = v;
            lanes.update(top);
        }
    }

    /**
     * Lock held, after a change: publishes the next pick for lock-free readers. The top is refreshed
     * first: a stale key can keep a group on top whose virtual time other carriers have meanwhile pushed
     * past another group's, and publishing that group would hide the other one from stealers and from
     * the preemption check (a group behind would wait for this carrier). What is published goes stale
     * in turn as other carriers charge; this carrier re-publishes at its next change (at the latest at
     * its next turn's end), and a stealer that finds it older than the steal margin takes the lock and
     * looks for itself ({@code FairRunQueue#victim}): this carrier may be descheduled or in a long task.
     */
    void publishHead(long now) {
        PUBLISHED_AT.setOpaque(this, now);
        GroupLane top = refreshTop();
        if (top != null) {
            HEAD_ACTOR_VTIME.setOpaque(this, top.ready.peekVtime());
        }
        HEAD_GROUP.setOpaque(this, top == null ? null : top.group);
    }

    /** Any thread: the group of the next pick as last published, or {@code null}. */
    SchedulingGroup headGroup() {
        return (SchedulingGroup) HEAD_GROUP.getOpaque(this);
    }

    /** Any thread: the virtual time of the next pick as last published (meaningful with a head group). */
    long headActorVtime() {
        return (long) HEAD_ACTOR_VTIME.getOpaque(this);
    }

    /** Any thread: when the head was last published (the clock of the publishing caller). */
    long publishedAt() {
        return (long) PUBLISHED_AT.getOpaque(this);
    }

    /** Any thread: this queue's root floor as last published. */
    long rootFloorView() {
        return (long) ROOT_FLOOR.getOpaque(this);
    }
}
