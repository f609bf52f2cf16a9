package io.reactoractor.internal.scheduling;

import java.util.function.LongSupplier;

/**
 * The fair run queue: hierarchical ordering by weighted virtual time (Linux CFS style), one queue per
 * carrier ({@link CarrierQueue}) with work stealing, so the per-turn path takes no lock shared by
 * all carriers.
 *
 * <h2>Rules</h2>
 * <ol>
 *   <li><b>Charging.</b> At the end of a turn that ran {@code e} ns, the actor's virtual time grows by
 *       {@code e / actorWeight} and its group's by {@code e / groupWeight}. A group's virtual time is
 *       global (one atomic value, {@link SchedulingGroup#charge}, added to in sums of at most
 *       {@value CarrierCharge#FLUSH_NANOS} ns of a carrier's run time) whichever carriers run its actors, so
 *       group shares hold across carriers; an actor's belongs to whoever holds the actor (the queue it
 *       waits in, under that queue's lock, or the carrier running it). Time its carrier did not run
 *       during a long turn ({@link StolenTime}: the operating system took the thread away, a safepoint)
 *       is not the actor's: its virtual time grows by its CPU time only, but never to less than its
 *       group's floor (rule 3) when the whole turn would have put it above: a robbed actor is made good
 *       up to the front of its group's queue, not past it, where it could run quotas ahead of a waking
 *       light actor that is placed at the floor less the credit and could then not preempt it. Its
 *       group is treated the same way one level up, for the host's part of that time only (the carrier
 *       was runnable and waited for a core; not the time a task blocked, which the tenant pays): charged
 *       the turn less that part, but never less than what brings it up to the root floor when the whole
 *       turn would have put it above (charged wall time, groups paid for the host's other load
 *       unevenly: a weight-1 group next to a weight-100 one got 1.4-3.6 times its share on a host with
 *       two busy threads, {@link #groupCharge}).</li>
 *   <li><b>Picking.</b> A carrier picks from its own queue: the group with the least virtual time among
 *       groups with ready actors there, then that group's ready actor with the least virtual time; ties
 *       go to the one that became ready first. Unless it steals (rule 5).</li>
 *   <li><b>Placement.</b> Each level keeps a monotonic floor per carrier: the largest virtual time picked
 *       there. A brand-new entity starts <em>at</em> the level's floor, the maximum over the carriers
 *       (for actors published in steps of {@value SchedulingGroup#FLOOR_STEP} ns: at most that much head
 *       start, so newcomers cannot monopolise the pool); a waking entity gets
 *       {@code max(own, floor - credit)} with the floor of the carrier it is queued on (the entities it
 *       competes with there; the carriers' floors stay within the lag bound of each other):
 *       at most {@code credit} of advantage for having slept, never an unbounded one (QMQ's failure with
 *       raw cumulative totals). Placement by floor is what makes actor virtual times comparable between
 *       carriers' queues (CFS normalises by {@code min_vruntime} on migration for the same reason). An
 *       actor that stays ready at the end of its turn is not placed again (it did not sleep), unless it
 *       was handed its turn through a run-next slot, which does not place ({@link
 *       ActorCell#placementDue}).</li>
 *   <li><b>Preemption (run to parity).</b> Between two tasks a running actor yields if an actor that
 *       would be picked instead has a smaller virtual time (compared at the group level when it belongs
 *       to another group) and either the running turn has used its minimum slice ({@code granularity})
 *       or the other actor is at least {@code granularity} behind (wake-up preemption). A candidate
 *       queued on another carrier counts only when it is more than the steal margin behind (rule 5).
 *       How long the other actor has <em>waited</em> does not matter: with thousands of ready actors
 *       every one of them has waited. The quota stays the hard backstop.</li>
 *   <li><b>Stealing.</b> Taking its next actor, a carrier compares its own queue's head with the heads
 *       the other queues published: always when its own queue is empty, else at most once per look
 *       interval ({@code granularity / 8} of its clock, the preemption check's interval) and at the pick
 *       right after a preemption a remote head caused. The heads and ready counts are written by their
 *       carriers at every pick, so reading them at every pick cost a cache miss per turn on the
 *       message-passing path. It takes the most-behind remote head instead of its own when that
 *       head is more than {@code stealMargin} (= {@code granularity}) of virtual time behind its own
 *       head, or whenever its own queue is empty. Between groups the margin is zero: a group's share is
 *       the tenant-level promise, so a group that is behind gets the next carrier to pick, wherever its
 *       actor is queued (as with one shared queue). A stolen actor runs here and is re-queued here: it
 *       migrates. A thief whose own queue is empty also takes a share: half of the victim's other ready
 *       actors (at most {@value #STEAL_SHARE}), the ones the victim would pick next, with their virtual
 *       times; otherwise an idle carrier stole one actor per turn, each steal taking both locks (about
 *       15 % of the carriers' time in Savina's chameneos, and 0.08 remote lock acquisitions per message
 *       there, against 0.013 with the share).</li>
 *   <li><b>Where a ready actor goes.</b> Made ready by a task on a carrier: that carrier's queue (or its
 *       run-next slot, {@link RunNext}). Made ready by any other thread (a timer, a user thread): the queue
 *       of the carrier that ran it last, or the next queue in turn for an actor that never ran. Either way
 *       it waits in the queue's lock-free {@link CarrierQueue#arrivals arrivals}: the waking thread takes no
 *       lock (a lock, a heap insertion and a head publication per wake-up were a third of a message's cost
 *       where most messages wake an actor), until a holder of the lock moves it into the heap and places it:
 *       the owner at its next pick (for a local wake-up usually the end of the turn in progress), any carrier
 *       at its next preemption check (at most one check interval away while it runs a turn: a woken actor
 *       can still preempt, even when its queue's carrier is descheduled or in a long task), a stealer that
 *       finds the queue with arrivals and nothing of its own to run (or the owner silent for longer than
 *       the steal margin); the quiescence check counts them. Arrivals are counted in {@link #readyCount},
 *       so idle carriers see them.</li>
 * </ol>
 *
 * <h2>Lag bound between carriers</h2>
 * Take two ready equal-weight actors of one group, queued on different carriers. A carrier checks the
 * other queues' heads at least once per look interval ({@code granularity / 8} of its clock) at a pick
 * and, while it runs a turn, at every preemption check (as often). A remote head more than
 * {@code stealMargin} behind the running actor preempts it once the slice is used, and the pick right
 * after that preemption looks and steals it. So the head of any queue is never more than
 * {@code stealMargin + granularity} behind the actor a busy carrier runs, plus one task (a task is never
 * interrupted; after tiny tasks, up to {@code Turn.MAX_CLOCK_STRIDE} tasks, which the checks see only at
 * the next clock read: {@link Turn}, "Clock reads between tasks") and one look interval — and the
 * quota caps a turn whatever the rules say. With the defaults (granularity 0.5 ms, quota 5 ms) two
 * equal actors drift at most about 1.1 ms + one task apart (a few tasks after tiny ones).
 * {@code FairPolicyTest} checks this bound in the step-driven simulation with two carriers, and the thief's
 * preference for the most-behind head with three.
 *
 * <h2>Locks</h2>
 * Each carrier's queue has its own lock ({@link CarrierQueue}'s monitor). A turn's end takes its
 * carrier's lock once (charge, re-queue, pick), uncontended unless another carrier is stealing from
 * it at that moment; a thread outside the pool takes none (rule 6). A steal takes the victim's lock and
 * the thief's, in queue-index order (so no two
 * threads can deadlock); the quiescence check takes all of them in that order. Nothing else holds two.
 * A turn that ends with its carrier going on with its run-next slot's actor takes no lock at all
 * ({@link #finishChainedTurn}). Group charges are summed on the carrier ({@link CarrierCharge}), so a
 * turn's end is not an atomic operation on a line all carriers write.
 *
 * <p>The preemption check ({@link #shouldPreempt}) and the steal decision read published copies (the
 * queues' heads, the groups' virtual times) and take no lock: they are heuristics that every end of
 * turn corrects. A steal re-decides under both locks with refreshed heads, and a head older than the
 * steal margin makes a stealer look under the victim's lock (its carrier may be descheduled by the
 * OS, which a shared queue hid and per-carrier queues must not: with one busy carrier stalled, a group
 * behind must not wait for it).
 *
 * <p>Groups sit in each queue's {@link VTimeHeap} of lanes (few per carrier), the ready actors of a
 * group on a carrier in a {@link ReadyActorQueue}: an exact heap while small, a calendar of
 * virtual-time buckets whose cost does not grow with the ready set when large.
 */
final class FairRunQueue implements RunQueue {

    private final CarrierQueue[] queues;
    private final long credit;
    private final long granularity;
    private final long stealMargin;
    /** How often a carrier with actors of its own compares its head with the other queues' (rule 5). */
    private final long lookInterval;
    /** Next queue for an actor that never ran, made ready outside the carriers (a racy hint). */
    private int rotor;

    /**
     * @param queues           one per permanent carrier (at least 1)
     * @param creditNanos      the most virtual time a sleeper may gain (rule 3)
     * @param granularityNanos the minimum slice and the steal margin (rules 4 and 5)
     */
    FairRunQueue(int queues, long creditNanos, long granularityNanos) {
        if (queues < 1) {
            throw new IllegalArgumentException("queues must be at least 1 but was " + queues);
        }
        this.queues = new CarrierQueue[queues];
        for (int i = 0; i < queues; i++) {
            this.queues[i] = new CarrierQueue(i, queues);
        }
        this.credit = creditNanos;
        this.granularity = granularityNanos;
        this.stealMargin = granularityNanos;
        this.lookInterval = Math.max(1_000L, granularityNanos / 8);
    }

    @Override
    public void enqueue(ActorCell cell, long now, int carrier) {
        // no lock, from any thread (rule 6): into the target queue's arrivals, placed when a holder of its
        // lock moves it into the heap (the owner at its next pick, usually the end of the turn in progress)
        cell.readyAt = now;
        queues[target(cell, carrier)].arrivals.offer(cell);
    }

    private int target(ActorCell cell, int carrier) {
        int n = queues.length;
        if (carrier >= 0) {
            return carrier % n;
        }
        int home = cell.homeQueue;
        if (home >= 0 && home < n) {
            return home;
        }
        int r = rotor;
        rotor = r + 1;
        return Math.floorMod(r, n);
    }

    /**
     * Placement of an actor in its group (rule 3), into queue {@code q} (its lock held; the actor is
     * held by the caller). A waking actor joining a lane that has ready actors on that queue is placed
     * against that lane's floor: the actors it competes with there (CFS places against the run queue's
     * own {@code min_vruntime} too). Active lanes of one group stay within the lag bound of each other
     * (stealing keeps them there), so the credit holds up to that bound, and placement reads no line
     * another carrier writes at every pick. Otherwise the group's floor over all carriers: a lane with
     * nothing ready may have picked nothing for a long time while the group ran elsewhere, and its old
     * floor would hand a sleeper an unbounded credit; a brand-new actor must not start behind the group
     * because its lane is new.
     */
    private void place(ActorCell cell, CarrierQueue q) {
        cell.placementDue = false;
        SchedulingGroup g = cell.group();
        GroupLane lane = g.lane(q.index, queues.length);
        long floor = cell.placed && lane.heapIndex >= 0 ? lane.floorView() : 0L;
        if (floor == 0L) {
            floor = g.floor();
        }
        if (!cell.placed) {
            cell.vtime = floor;
            cell.placed = true;
        } else if (cell.vtime < floor - credit) {
            cell.vtime = floor - credit;
        }
    }

    /**
     * Lock of {@code q} held: moves woken actors waiting in its arrivals into its heap, placed as any
     * waking actor (rule 3), at most {@value #ARRIVALS_PER_DRAIN} at a time so a burst does not hold
     * the lock against stealers; the rest wait for the next drain and are counted as ready meanwhile
     * ({@link #readyCount}). Drained by whoever takes the lock to pick, steal, check or stop.
     */
    private void drainArrivals(CarrierQueue q, long now) {
        drainArrivals(q, now, ARRIVALS_PER_DRAIN);
    }

    /** As {@link #drainArrivals(CarrierQueue, long)}, at most {@code limit} actors. */
    private void drainArrivals(CarrierQueue q, long now, int limit) {
        int moved = 0;
        ActorCell c;
        while (moved < limit && (c = q.arrivals.poll()) != null) {
            place(c, q);
            q.addUnpublished(c, now, rootFloorOnDemand, credit);
            moved++;
        }
        if (moved > 0) {
            q.publishHead(now);
        }
    }

    /**
     * Takes {@code q}'s lock and moves its arrivals into its heap ({@link #drainArrivals(CarrierQueue, long)}),
     * for {@code carrier} (a carrier index, or {@link RunQueue#OUTSIDE}): what a carrier does for its own
     * queue at a pick or preemption check, and for another carrier's queue at its preemption check. The
     * step-driven tests call it to play an owner's next pick or check.
     */
    void drainArrivals(CarrierQueue q, int carrier, long now) {
        synchronized (q) {
            if (carrier >= 0 && q.index == carrier % queues.length) {
                q.localLocks++;
                drainArrivals(q, now);
            } else {
                // for another carrier's queue only a few at a time: enough for the actors woken since the
                // last check to preempt, while a burst (thousands woken at once) is left to its owner's
                // picks instead of costing this carrier a lock held over a thousand cold actors
                q.remoteLocks++;
                drainArrivals(q, now, REMOTE_ARRIVALS_PER_DRAIN);
            }
        }
    }

    /** {@link #drainArrivals(CarrierQueue, int, long)} of carrier {@code carrier}'s own queue. */
    void drainOwnArrivals(int carrier, long now) {
        drainArrivals(queues[carrier % queues.length], carrier, now);
    }

    /** At most this many arrivals are moved into a queue's heap per drain. */
    static final int ARRIVALS_PER_DRAIN = 1024;
    /** At most this many per drain of another carrier's queue at a preemption check. */
    static final int REMOTE_ARRIVALS_PER_DRAIN = 64;

    /** {@link #rootFloor()}, for a queue that needs it only when a group's lane joins its heap. */
    private final LongSupplier rootFloorOnDemand = this::rootFloor;

    /** The root floor: the maximum of the queues' (read when a group is placed, and for a robbed turn's group). */
    long rootFloor() {
        long f = 0L;
        for (CarrierQueue q : queues) {
            f = Math.max(f, q.rootFloorView());
        }
        return f;
    }

    @Override
    public ActorCell take(int carrier, long now) {
        if (carrier < 0) {
            return takeAny();
        }
        CarrierQueue own = queues[carrier % queues.length];
        if (own.ready == 0 && !own.arrivals.isEmpty()) {
            // only arrivals here: make them visible to the look-out below before it decides to steal
            drainArrivals(own, carrier, now);
        }
        CarrierQueue victim = lookOut(own, now);
        if (victim != null) {
            ActorCell c = steal(own, victim, now);
            if (c != null) {
                return c;
            }
        }
        synchronized (own) {
            own.localLocks++;
            drainArrivals(own, now);
            ActorCell c = own.poll(now);
            if (c != null) {
                started(own, c);
                return c;
            }
        }
        return stealAny(own, now);
    }

    /** Lock of {@code q} held: counts {@code c} as running on {@code q}'s carrier. */
    private static void started(CarrierQueue q, ActorCell c) {
        q.running = q.running + 1;
        c.homeQueue = q.index;
    }

    /**
     * {@link #victim} if the owner of {@code own} is due to look at the other queues (rule 5): its queue
     * is empty, or a look interval passed since its last look, or a remote head caused a preemption
     * since; else {@code null} (pick locally). Called by {@code own}'s carrier only.
     */
    private CarrierQueue lookOut(CarrierQueue own, long now) {
        if (own.ready > 0 && now - own.nextRemoteLook < 0) {
            return null;
        }
        own.nextRemoteLook = now + lookInterval;
        return victim(own, now);
    }

    /**
     * The queue to steal from instead of picking from {@code own} (rule 5), from published heads, no
     * lock: the most-behind remote head if it is more than the steal margin behind {@code own}'s head,
     * or any non-empty queue's best head when {@code own} is empty; failing that, a queue with ready
     * actors whose head was published longer than the steal margin ago (its carrier is descheduled or
     * in a long task, and its heap's keys may have gone stale meanwhile: {@link #steal} looks under its
     * lock); {@code null} to pick locally. A stale queue costs a remote lock at most once per steal
     * margin of the clock, since the look re-publishes its head.
     */
    private CarrierQueue victim(CarrierQueue own, long now) {
        if (queues.length == 1) {
            return null;
        }
        SchedulingGroup ownGroup = own.ready > 0 ? own.headGroup() : null;
        long ownActor = own.headActorVtime();
        CarrierQueue best = null;
        CarrierQueue stale = null;
        SchedulingGroup bestGroup = ownGroup;
        long bestActor = ownActor;
        for (CarrierQueue q : queues) {
            if (q == own) {
                continue;
            }
            SchedulingGroup g = q.ready == 0 ? null : q.headGroup();
            if (g == null) {
                // nothing published, but actors may have arrived from outside the pool, which only the
                // lock shows: worth a look when this carrier has nothing, or when that queue's carrier has
                // not published for a while (parked, descheduled or in a long task)
                if (stale == null && !q.arrivals.isEmpty()
                        && (ownGroup == null || now - q.publishedAt() > stealMargin)) {
                    stale = q;
                }
                continue;
            }
            long a = q.headActorVtime();
            // against the own head: behind by more than the margin; among candidates: simply the most behind
            long margin = best == null ? stealMargin(bestGroup, g) : 0L;
            if (bestGroup == null || lead(bestGroup, bestActor, g, a) > margin) {
                best = q;
                bestGroup = g;
                bestActor = a;
            } else if (stale == null && now - q.publishedAt() > stealMargin) {
                stale = q;
            }
        }
        return best != null ? best : stale;
    }

    /**
     * How far a remote head must be behind before it is worth moving (rule 5): the steal margin between
     * actors of one group (locality first: an actor stays where its data is warm), nothing between groups
     * (a group's share is the tenant-level promise: its actor waiting on a busy carrier must not wait for
     * that carrier when another is about to run a group that is ahead).
     */
    private long stealMargin(SchedulingGroup ownGroup, SchedulingGroup candidate) {
        return ownGroup == candidate ? stealMargin : 0L;
    }

    /**
     * How far the candidate ({@code g}, actor at {@code a}) is behind the reference ({@code rg}, actor
     * at {@code ra}) in virtual time, compared where they differ: between groups, or between actors of
     * one group (comparable across queues by placement, rule 3).
     */
    private static long lead(SchedulingGroup rg, long ra, SchedulingGroup g, long a) {
        return rg != g ? rg.vtimeNow() - g.vtimeNow() : ra - a;
    }

    /**
     * Under both queues' locks (taken in index order), with both heads refreshed: takes {@code victim}'s
     * best actor if the rule says so (own queue empty, or the victim's head more than the margin behind),
     * else {@code own}'s best (the published heads that made the caller look were stale). Either runs on
     * {@code own}'s carrier.
     *
     * @return the actor, or {@code null} if both queues are empty
     */
    private ActorCell steal(CarrierQueue own, CarrierQueue victim, long now) {
        CarrierQueue first = own.index < victim.index ? own : victim;
        CarrierQueue second = first == own ? victim : own;
        synchronized (first) {
            synchronized (second) {
                own.localLocks++;
                victim.remoteLocks++;
                drainArrivals(victim, now);
                drainArrivals(own, now);
                victim.publishHead(now); // fresh keys, and the look counts as a publication
                own.publishHead(now);
                CarrierQueue from = victim;
                if (own.ready > 0) {
                    SchedulingGroup og = own.headGroup();
                    SchedulingGroup vg = victim.headGroup();
                    if (vg == null || lead(og, own.headActorVtime(), vg, victim.headActorVtime())
                            <= stealMargin(og, vg)) {
                        from = own;
                    }
                }
                ActorCell c = from.poll(now);
                if (c != null) {
                    started(own, c);
                    if (from == victim && own.ready == 0) {
                        takeShare(victim, own, now);
                    }
                }
                return c;
            }
        }
    }

    /** At most this many actors move to an idle thief's queue with the one it steals (rule 5). */
    static final int STEAL_SHARE = 32;

    /**
     * Both locks held, {@code own} empty: moves half of {@code victim}'s ready actors (at most
     * {@value #STEAL_SHARE}), the ones it would pick next, into {@code own}, so the thief's next picks
     * are local instead of one steal (both locks, both queues' arrivals and heads) per turn; Go and
     * Tokio steal half a run queue for the same reason. The moved actors keep their virtual times (they
     * did not sleep: no placement; comparable across queues by rule 3) and raise no floor on
     * {@code victim} (they were not picked there).
     */
    private void takeShare(CarrierQueue victim, CarrierQueue own, long now) {
        int n = Math.min(victim.ready / 2, STEAL_SHARE);
        if (n <= 0) {
            return;
        }
        for (int i = 0; i < n; i++) {
            ActorCell m = victim.removeForMove();
            if (m == null) {
                break;
            }
            own.addUnpublished(m, now, rootFloorOnDemand, credit);
        }
        victim.publishHead(now);
        own.publishHead(now);
    }

    /** {@code own} is empty: steals from the other queues, best published head first. */
    private ActorCell stealAny(CarrierQueue own, long now) {
        for (int attempt = 0; attempt < queues.length; attempt++) {
            CarrierQueue victim = victim(own, now);
            if (victim == null) {
                return null;
            }
            ActorCell c = steal(own, victim, now);
            if (c != null) {
                return c;
            }
        }
        return null;
    }

    /** A thread without a queue (the final drain): the first actor of any queue. */
    private ActorCell takeAny() {
        for (CarrierQueue q : queues) {
            synchronized (q) {
                q.remoteLocks++;
                drainArrivals(q, 0L);
                ActorCell c = q.poll(0L);
                if (c != null) {
                    q.running = q.running + 1;
                    return c;
                }
            }
        }
        return null;
    }

    @Override
    public ActorCell finishTurn(ActorCell cell, long elapsed, boolean requeue, long now, boolean takeNext,
            boolean chained, int carrier, CarrierCharge charge) {
        finishChainedTurn(cell, elapsed, charge);
        CarrierQueue own = queues[Math.max(0, carrier) % queues.length];
        ActorCell next = null;
        CarrierQueue victim = null;
        synchronized (own) {
            own.localLocks++;
            drainArrivals(own, now);
            if (!chained) {
                own.running = own.running - 1;
            }
            if (requeue) {
                // placed only if it came from a run-next slot (woken, never placed); otherwise it did not
                // sleep (CFS places on wake-up only) and its virtual time, just charged, is where its own
                // run time puts it: no floor to read, which is a line other carriers write at every pick
                if (cell.placementDue) {
                    place(cell, own);
                }
                own.add(cell, now, rootFloorOnDemand, credit);
            }
            if (takeNext) {
                victim = lookOut(own, now);
                if (victim == null) {
                    next = own.poll(now);
                    if (next != null) {
                        started(own, next);
                    }
                }
            }
        }
        if (victim != null) {
            // the steal re-decides under both locks; if both queues emptied meanwhile, the others are tried
            next = steal(own, victim, now);
            if (next == null) {
                next = stealAny(own, now);
            }
        }
        return next;
    }

    /** Charges a turn's run time to the actor and, in sums, to its group (also the end of a chained turn). */
    @Override
    public void finishChainedTurn(ActorCell cell, long elapsed, CarrierCharge charge) {
        SchedulingGroup g = cell.group();
        long e = Math.max(0L, elapsed);
        long stolen = cell.stolenNanos;
        long groupCharge = e;
        if (stolen <= 0) {
            cell.vtime += cell.weightedCharge(e); // the running actor is in no queue: its carrier owns its vtime
        } else {
            // the time the carrier did not run is not the actor's, made good down to the group's floor at most
            // (rule 1): below it, the robbed actor ran whole quotas ahead of a waking light actor placed at the
            // floor less the credit, which could then not preempt it
            cell.stolenNanos = 0L;
            long s = Math.min(e, stolen);
            long wall = cell.vtime + weighted(e, cell.weight());
            long cpu = cell.vtime + cell.weightedCharge(e - s);
            cell.vtime = Math.max(cpu, Math.min(wall, g.floor()));
            long host = Math.min(s, cell.hostStolenNanos);
            cell.hostStolenNanos = 0L;
            if (host > 0) {
                groupCharge = groupCharge(g, e, host, charge);
            }
        }
        charge.add(g, groupCharge, e); // to the group in sums (CarrierCharge: bounded lag), divided by its weight there
    }

    /**
     * The run time to charge a group for a turn whose carrier the host did not run for {@code stolen} ns of its
     * {@code elapsed} (rule 1, one level up): the turn less that time, but never less than what brings the group up
     * to the root floor (the largest group virtual time picked on any carrier) when the whole turn would have put
     * it above. A group charged the whole turn paid for the other load on the host: at weights 1:100 the weight-1
     * group got 1.4-3.6 times its share of the CPU next to two busy threads, where the heavy group's long turns
     * were robbed. Only the host's part ({@link StolenTime#hostStolen}: the carrier waited for a core) is taken
     * out, not the time a task blocked: made good for blocking, a tenant whose tasks sleep on the carriers took
     * 80 % of them from a busy tenant. The floor bounds the credit as it does for actors: a robbed group far
     * behind the others would otherwise run whole quotas ahead of a waking light group placed at the root floor
     * less the credit.
     *
     * @param g       the group of the actor whose turn ended (placed: its actor ran)
     * @param elapsed the turn's wall-clock length
     * @param stolen  the part of it the host took from its carrier, {@code 0 < stolen <= elapsed}
     * @param charge  the carrier's sums not yet added to groups (the group's own part of it counts as charged)
     * @return the run time to charge, between {@code elapsed - stolen} and {@code elapsed}
     */
    long groupCharge(SchedulingGroup g, long elapsed, long stolen, CarrierCharge charge) {
        long ran = elapsed - stolen;
        long v = g.vtimeNow();
        if (v == SchedulingGroup.UNPLACED) {
            return ran;
        }
        int w = g.weight();
        long gap = rootFloor() - (v + weighted(charge.pendingVtimeNanos(g), w)); // virtual ns below the root floor
        if (gap <= 0) {
            return ran;
        }
        long toFloor = gap > elapsed / w + 1 ? elapsed : gap * w; // raw ns up to the floor (saturated: no overflow)
        return Math.min(elapsed, Math.max(ran, toFloor));
    }

    /**
     * Virtual time for {@code nanos} of run time at {@code weight}: a 64-bit division, skipped for the
     * default weight 1 (two divisions per turn were a measurable part of a one-message turn).
     */
    static long weighted(long nanos, int weight) {
        return weight == 1 ? nanos : nanos / weight;
    }

    /**
     * Without a lock (rule 4). Reads the heads the queues published and the groups' virtual times, each
     * an opaque or volatile load: recent and untorn, not a consistent snapshot. A stale answer costs one
     * early or one late preemption, never fairness: the turn's end charges and re-sorts, and the quota
     * bounds any turn. It runs at most once per check interval of a turn and once per run-next
     * hand-off.
     */
    @Override
    public boolean shouldPreempt(ActorCell current, long turnElapsed, long now, int carrier) {
        SchedulingGroup mine = current.group();
        // the running actor's virtual times as if charged now (its own is its carrier's while it runs)
        long groupNow = mine.vtimeNow() + weighted(turnElapsed, mine.weight());
        long actorNow = current.vtime + weighted(turnElapsed, current.weight());
        int own = carrier < 0 ? -1 : carrier % queues.length;
        for (CarrierQueue q : queues) {
            if (!q.arrivals.isEmpty()) {
                // woken actors: into their queue's heap, so that they can preempt (a timer is how a light
                // actor comes back). Any queue's, not only this carrier's: the owner of that queue may be
                // in a long task, descheduled, or simply further from its next task boundary than this
                // carrier (leaving another owner's arrivals to it until it went silent cost the light actor
                // of the fairness suite ~80 us at p50). At most one remote lock per check interval.
                // One lock at a time, and only while arrivals wait, so the lock-free check stays lock-free.
                drainArrivals(q, carrier, now);
            }
        }
        for (CarrierQueue q : queues) {
            if (q.ready == 0) {
                continue;
            }
            SchedulingGroup g = q.headGroup();
            if (g == null) {
                continue;
            }
            long lead = g != mine ? groupNow - g.vtimeNow() : actorNow - q.headActorVtime();
            if (q.index != own) {
                lead -= stealMargin(mine, g); // only worth leaving this carrier for if a steal will follow
            }
            // run to parity: a minimum slice, unless the other is far enough behind (a waking sleeper)
            if (lead > 0 && (turnElapsed >= granularity || lead >= granularity)) {
                if (q.index != own && own >= 0) {
                    queues[own].nextRemoteLook = now; // the pick that follows looks, and steals that head
                }
                return true;
            }
        }
        return false;
    }

    @Override
    public int readyCount() {
        int n = 0;
        for (CarrierQueue q : queues) {
            n += q.ready + q.arrivals.size();
        }
        return n;
    }

    @Override
    public boolean isQuiescent() {
        return quiescentFrom(0);
    }

    /** Holds the locks of queues {@code 0..i-1}; takes {@code i}'s (index order, as steals do). */
    private boolean quiescentFrom(int i) {
        if (i == queues.length) {
            return true;
        }
        CarrierQueue q = queues[i];
        synchronized (q) {
            return q.ready == 0 && q.running == 0 && q.arrivals.isEmpty() && quiescentFrom(i + 1);
        }
    }

    @Override
    public long lockAcquisitions() {
        long n = 0;
        for (CarrierQueue q : queues) {
            n += q.localLocks + q.remoteLocks;
        }
        return n;
    }

    @Override
    public long remoteLockAcquisitions() {
        long n = 0;
        for (CarrierQueue q : queues) {
            n += q.remoteLocks;
        }
        return n;
    }
}
