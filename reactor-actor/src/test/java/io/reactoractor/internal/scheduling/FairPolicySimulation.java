package io.reactoractor.internal.scheduling;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.ToLongFunction;

/**
 * A step-driven, single-threaded simulation of carriers running actors through a {@link RunQueue},
 * on a virtual clock: the fairness <em>policy</em> (picking, placement, preemption, group shares)
 * without threads, so its properties are exact, repeatable unit tests.
 *
 * <p>Events are processed in time order (ties: insertion order): a task ends on a carrier, or a
 * sleeping actor wakes. At a task end the carrier asks the same questions a real {@link Turn} asks
 * (more work? quota used? {@link RunQueue#shouldPreempt}), then either starts the actor's next task
 * or ends the turn with {@link RunQueue#finishTurn} and starts the next actor. Tasks have a fixed
 * virtual cost; nothing else costs time (the per-turn overhead of the real engine is what the
 * benchmarks measure).
 */
final class FairPolicySimulation {

    /** An actor whose work is a fixed-cost task repeated {@code burst} times, then a sleep. */
    static final class SimActor extends ActorCell {
        final String name;
        final long taskCost;
        final int burst;          // tasks per wake-up; Integer.MAX_VALUE = always busy
        final long sleep;         // virtual ns asleep between bursts
        int left;
        long cpu;
        long tasks;
        long turns;
        long readySince = -1;
        final List<Long> wakeDelays = new ArrayList<>();

        SimActor(SchedulerEngine engine, SchedulingGroup group, String name, int weight, long taskCost, int burst,
                long sleep) {
            super(engine, group, name, weight);
            this.name = name;
            this.taskCost = taskCost;
            this.burst = burst;
            this.sleep = sleep;
            this.left = burst;
            joinGroup();
        }

        @Override
        protected boolean hasWork() {
            return left > 0;
        }

        @Override
        protected void runTurn(Turn turn) {
            throw new UnsupportedOperationException("simulated");
        }

        @Override
        protected void drainTerminated() {
        }

        long maxWakeDelay() {
            return wakeDelays.stream().mapToLong(Long::longValue).max().orElse(0);
        }

        long percentileWakeDelay(double p) {
            long[] d = wakeDelays.stream().mapToLong(Long::longValue).sorted().toArray();
            return d.length == 0 ? 0 : d[Math.min(d.length - 1, (int) Math.ceil(p * d.length) - 1)];
        }
    }

    private record Event(long time, long seq, int carrier, SimActor waking) {
    }

    private final RunQueue queue;
    private final long quota;
    private final SimActor[] running;
    private final long[] turnStart;
    /** Each carrier's group charges, as a real carrier sums them (flushed when it takes empty-handed). */
    private final CarrierCharge[] charges;
    private final PriorityQueue<Event> events = new PriorityQueue<>(
            (a, b) -> a.time != b.time ? Long.compare(a.time, b.time) : Long.compare(a.seq, b.seq));
    private long seq;
    private long now;
    /** Wall time the carrier does not run during each task of an actor (the host's other load), 0 by default. */
    private ToLongFunction<SimActor> robbery = a -> 0L;
    /** Wall time each task of an actor spends blocked on its carrier (sleeping, not runnable), 0 by default. */
    private ToLongFunction<SimActor> blocking = a -> 0L;
    /** Per carrier, the wall time taken from the turn in progress: by the host, and in all. */
    private final long[] turnHostStolen;
    private final long[] turnStolen;
    private long preemptions;

    FairPolicySimulation(RunQueue queue, int carriers, long quota) {
        this.queue = queue;
        this.quota = quota;
        this.running = new SimActor[carriers];
        this.turnStart = new long[carriers];
        this.turnStolen = new long[carriers];
        this.turnHostStolen = new long[carriers];
        this.charges = new CarrierCharge[carriers];
        for (int i = 0; i < carriers; i++) {
            charges[i] = new CarrierCharge();
        }
    }

    /** Makes {@code actor} ready at the current virtual time (a new actor, or one woken by the test). */
    void start(SimActor actor) {
        actor.readySince = now;
        queue.enqueue(actor, now, RunQueue.OUTSIDE);
        dispatchIdle();
    }

    /**
     * Makes {@code actor} ready as if woken by a task on carrier {@code carrier}: it goes to that
     * carrier's queue (how a fan-out from one actor lands on one queue).
     */
    void startOn(SimActor actor, int carrier) {
        actor.readySince = now;
        queue.enqueue(actor, now, carrier);
        dispatchIdle();
    }

    /** Makes {@code actor} ready at {@code time}. */
    void startAt(SimActor actor, long time) {
        events.add(new Event(time, seq++, -1, actor));
    }

    /**
     * From now on each task of an actor takes {@code robbery(actor)} ns more wall time than its cost, time its
     * carrier did not run (as another thread on the host took the core), reported at the end of a turn of
     * {@link StolenTime#LONG_TURN_NANOS} or more as a real carrier's {@link StolenTime} does.
     */
    void rob(ToLongFunction<SimActor> robbery) {
        this.robbery = robbery;
    }

    /**
     * From now on each task of an actor takes {@code blocking(actor)} ns more wall time than its cost, time its
     * carrier spent blocked in it: stolen time ({@link StolenTime}) that is not the host's part.
     */
    void block(ToLongFunction<SimActor> blocking) {
        this.blocking = blocking;
    }

    long now() {
        return now;
    }

    long preemptions() {
        return preemptions;
    }

    /** Runs every event up to {@code until} (virtual ns). */
    void runUntil(long until) {
        while (!events.isEmpty() && events.peek().time <= until) {
            Event e = events.poll();
            now = e.time;
            if (e.waking != null) {
                SimActor a = e.waking;
                a.left = a.burst;
                a.readySince = now;
                queue.enqueue(a, now, RunQueue.OUTSIDE);
                dispatchIdle();
            } else {
                taskEnded(e.carrier);
            }
        }
        now = Math.max(now, until);
    }

    private void dispatchIdle() {
        for (int c = 0; c < running.length; c++) {
            if (running[c] == null) {
                charges[c].flush(); // an empty-handed take, as CarrierThread does
                ActorCell next = queue.take(c, now); // its own queue, else a steal
                if (next != null) {
                    begin(c, (SimActor) next);
                }
            }
        }
    }

    private void begin(int c, SimActor a) {
        running[c] = a;
        turnStart[c] = now;
        turnStolen[c] = 0L;
        turnHostStolen[c] = 0L;
        a.turns++;
        if (a.readySince >= 0) {
            a.wakeDelays.add(now - a.readySince);
            a.readySince = -1;
        }
        runTask(c, a);
    }

    private void runTask(int c, SimActor a) {
        a.left--;
        a.tasks++;
        a.cpu += a.taskCost;
        long robbed = robbery.applyAsLong(a);
        long blocked = blocking.applyAsLong(a);
        turnHostStolen[c] += robbed;
        turnStolen[c] += robbed + blocked;
        events.add(new Event(now + a.taskCost + robbed + blocked, seq++, c, null));
    }

    private void taskEnded(int c) {
        SimActor a = running[c];
        long elapsed = now - turnStart[c];
        boolean more = a.left > 0;
        if (more && elapsed < quota) {
            if (!queue.shouldPreempt(a, elapsed, now, c)) {
                runTask(c, a);
                return;
            }
            preemptions++;
        }
        if (!more && a.sleep >= 0 && a.burst != Integer.MAX_VALUE) {
            startAt(a, now + a.sleep);
        }
        if (more) {
            a.readySince = -1; // a preempted actor's wait is not a wake-up delay
        }
        if (elapsed >= StolenTime.LONG_TURN_NANOS) {
            a.stolenNanos = turnStolen[c];
            a.hostStolenNanos = turnHostStolen[c];
        }
        ActorCell next = queue.finishTurn(a, elapsed, more, now, true, false, c, charges[c]);
        running[c] = null;
        if (next != null) {
            begin(c, (SimActor) next);
        } else {
            dispatchIdle();
        }
    }
}
