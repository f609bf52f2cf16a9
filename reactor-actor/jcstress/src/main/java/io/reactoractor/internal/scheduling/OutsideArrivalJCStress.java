package io.reactoractor.internal.scheduling;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress tests of the lock-free hand-off from outside the pool ({@link FairRunQueue}'s arrivals, see
 * {@link CarrierQueue#arrivals}): the idle handshake of {@link CarrierPool} with an arrival as the
 * "make ready" side, and exactly-once delivery of an arrival to the carriers that drain it.
 */
public final class OutsideArrivalJCStress {

    private OutsideArrivalJCStress() {
    }

    /** An engine that is never started: the cells only need its counters. */
    private static final SchedulerEngine ENGINE = new SchedulerEngine(new SchedulerEngine.Config("jcstress", 2,
            5_000_000L, 500_000L, true, 50_000_000L, 0, SchedulerMetrics.NONE));

    /** A cell that is only queued and taken here, never run. */
    static final class QueuedCell extends ActorCell {
        QueuedCell(SchedulingGroup group) {
            super(ENGINE, group, "arrival/cell", 1);
            joinGroup();
        }

        @Override
        protected boolean hasWork() {
            return true;
        }

        @Override
        protected void runTurn(Turn turn) {
            throw new UnsupportedOperationException("never run");
        }

        @Override
        protected void drainTerminated() {
        }
    }

    private static FairRunQueue newQueue() {
        return new FairRunQueue(2, 5_000_000L, 500_000L);
    }

    @JCStressTest
    @Description("an outside thread hands an actor to a carrier queue and then reads whether a carrier is "
            + "parked, while a carrier registers as parked and then reads the ready count: one of them must "
            + "see the other (else the actor waits for the park timeout)")
    @Outcome(id = {"1, 1", "0, 1", "1, 0"}, expect = ACCEPTABLE, desc = "one side saw the other")
    @Outcome(id = "0, 0", expect = FORBIDDEN, desc = "lost wake-up: no wake-up sent, and the carrier parks")
    @State
    public static class ArrivalVersusPark {
        private static final VarHandle PARKED;

        static {
            try {
                PARKED = MethodHandles.lookup().findVarHandle(ArrivalVersusPark.class, "parked", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final FairRunQueue queue = newQueue();
        final QueuedCell cell = new QueuedCell(new SchedulingGroup("arrival", 1));
        @SuppressWarnings("unused") // through PARKED
        private int parked;

        @Actor
        public void enqueuer(II_Result r) {
            queue.enqueue(cell, 0L, RunQueue.OUTSIDE);
            r.r1 = (int) PARKED.getVolatile(this); // CarrierPool.onWork reads 'parked' (volatile)
        }

        @Actor
        public void idler(II_Result r) {
            PARKED.setVolatile(this, 1); // CarrierPool.idle: parked.incrementAndGet()
            r.r2 = queue.readyCount() > 0 ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("an outside thread hands an actor to carrier 1's queue while carrier 0, with nothing of its "
            + "own, takes: the actor is taken exactly once, by carrier 0 now or by carrier 1 afterwards")
    @Outcome(id = {"1, 0", "0, 1"}, expect = ACCEPTABLE, desc = "taken once")
    @Outcome(id = "0, 0", expect = FORBIDDEN, desc = "lost: neither take found it")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "taken twice")
    @State
    public static class ArrivalVersusSteal {
        final FairRunQueue queue = newQueue();
        final QueuedCell cell = new QueuedCell(new SchedulingGroup("arrival", 1));

        {
            cell.homeQueue = 1; // ran on carrier 1 last: an outside wake-up goes to its queue
        }

        @Actor
        public void outside() {
            queue.enqueue(cell, 0L, RunQueue.OUTSIDE);
        }

        @Actor
        public void carrier0(II_Result r) {
            r.r1 = queue.take(0, 0L) == cell ? 1 : 0;
        }

        @Arbiter
        public void carrier1(II_Result r) {
            r.r2 = queue.take(1, 0L) == cell ? 1 : 0;
        }
    }
}
