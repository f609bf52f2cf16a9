package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ActorWorker;
import org.junit.jupiter.api.Test;

/**
 * The run-next slot's rules ({@link RunNext}) on a virtual clock, with carrier threads that are never
 * started (the test thread plays the carrier) and the real fair run queue: exact and repeatable. The
 * last test checks, on a real scheduler, that a message exchange actually goes through the slot.
 */
class RunNextTest {

    private static final long US = 1_000L;
    private static final long QUOTA = 5_000 * US;
    private static final long GRANULARITY = 500 * US;

    private final SchedulerEngine engine = new SchedulerEngine(new SchedulerEngine.Config("runnext", 2, QUOTA,
            GRANULARITY, true, 10 * QUOTA, 0, SchedulerMetrics.NONE));
    private final RunQueue queue = engine.runQueue();
    private long now = 1_000_000 * US;
    private final RunNext runNext = new RunNext(engine, queue, () -> now, visit -> visit.accept(this.carrier));
    private final CarrierThread carrier = new CarrierThread(engine, "runnext-1", false, 0);
    private final SchedulingGroup group = engine.group("g", 1);

    /** An actor whose only state is whether it has work. */
    private final class Cell extends ActorCell {
        boolean work;

        Cell(String name) {
            super(engine, group, name, 1);
            joinGroup();
        }

        @Override
        protected boolean hasWork() {
            return work;
        }

        @Override
        protected void runTurn(Turn turn) {
            throw new UnsupportedOperationException("not run in these tests");
        }

        @Override
        protected void drainTerminated() {
        }
    }

    private final Cell running = new Cell("running");

    /** The carrier is inside a task of {@code running} that started {@code age} ago. */
    private void inTask(long age) {
        carrier.turn().begin(running, now - age);
        carrier.taskStarted(now - age);
    }

    @Test
    void anActorWokenByAYoungLastTaskRunsNextOnTheSameCarrier() {
        Cell woken = new Cell("woken");
        inTask(10 * US);
        assertTrue(runNext.tryPlace(carrier, woken));
        assertSame(woken, carrier.peekRunNext());
        assertFalse(runNext.isEmpty(), "an occupant keeps the scheduler from looking quiescent");
        assertEquals(0, queue.readyCount(), "no run-queue traffic for the hand-off");

        carrier.taskEnded();
        assertSame(woken, runNext.next(carrier, 20 * US, now, true));
        assertNull(carrier.peekRunNext());
        assertTrue(runNext.isEmpty());
    }

    @Test
    void theRunQueueTakesTheWokenActorWhenTheTurnGoesOnOrNoTaskRuns() {
        Cell woken = new Cell("woken");
        assertFalse(runNext.tryPlace(carrier, woken), "outside a task (the carrier loop re-signalling)");

        inTask(10 * US);
        running.work = true;
        assertFalse(runNext.tryPlace(carrier, woken), "the waker's turn goes on after this task");

        running.work = false;
        assertFalse(runNext.tryPlace(carrier, running), "an actor never chains to itself");
        assertNull(carrier.peekRunNext());
        assertTrue(runNext.isEmpty());
    }

    @Test
    void aNewerOccupantDisplacesTheOlderOneToTheRunQueue() {
        Cell first = new Cell("first");
        Cell second = new Cell("second");
        inTask(10 * US);
        assertTrue(runNext.tryPlace(carrier, first));
        assertTrue(runNext.tryPlace(carrier, second));
        assertSame(second, carrier.peekRunNext());
        assertEquals(1, queue.readyCount());
        assertSame(first, queue.take(0, now));
    }

    @Test
    void whileOthersAreReadyAtMostThreeTurnsInARowComeFromTheSlot() {
        Cell waiting = new Cell("waiting");
        queue.enqueue(waiting, now, RunQueue.OUTSIDE);
        Cell ping = new Cell("ping");
        for (int i = 1; i <= RunNext.MAX_STREAK; i++) {
            inTask(10 * US);
            assertTrue(runNext.tryPlace(carrier, ping));
            carrier.taskEnded();
            // a short chain: the fair order alone would not preempt it yet (run to parity)
            assertSame(ping, runNext.next(carrier, 10 * US, now, true), "chained turn " + i);
        }
        inTask(10 * US);
        assertTrue(runNext.tryPlace(carrier, ping));
        carrier.taskEnded();
        assertNull(runNext.next(carrier, 10 * US, now, true), "the streak is capped: the queue gets its turn");
        assertEquals(2, queue.readyCount(), "the occupant competes in the run queue");
        assertTrue(runNext.isEmpty());
    }

    @Test
    void withNobodyReadyTheChainGoesOnPastTheStreakCap() {
        Cell ping = new Cell("ping");
        for (int i = 1; i <= 10 * RunNext.MAX_STREAK; i++) {
            inTask(10 * US);
            assertTrue(runNext.tryPlace(carrier, ping));
            carrier.taskEnded();
            assertSame(ping, runNext.next(carrier, 10 * US, now, true), "chained turn " + i);
        }
    }

    @Test
    void aChainThatUsedItsSliceYieldsToAWaitingActorThatIsBehind() {
        Cell waiting = new Cell("waiting");
        queue.enqueue(waiting, now, RunQueue.OUTSIDE);
        Cell ping = new Cell("ping");
        inTask(10 * US);
        assertTrue(runNext.tryPlace(carrier, ping));
        carrier.taskEnded();
        // the chain inherited a slice that is used up: the waiting actor (same virtual time) goes first
        assertNull(runNext.next(carrier, GRANULARITY, now, true));
        assertEquals(2, queue.readyCount());
        assertSame(waiting, queue.take(0, now), "the fair order, not the slot, picks the next actor");
    }

    @Test
    void betweenPreemptionChecksAChainGoesOnUpToTheStreakCapWithoutConsultingTheFairOrder() {
        Cell waiting = new Cell("waiting");
        queue.enqueue(waiting, now, RunQueue.OUTSIDE);
        Cell ping = new Cell("ping");
        for (int i = 1; i <= RunNext.MAX_STREAK; i++) {
            inTask(10 * US);
            assertTrue(runNext.tryPlace(carrier, ping));
            carrier.taskEnded();
            // the slice is used up, but no check is due: the chain goes on
            assertSame(ping, runNext.next(carrier, GRANULARITY, now, false), "chained turn " + i);
        }
        inTask(10 * US);
        assertTrue(runNext.tryPlace(carrier, ping));
        carrier.taskEnded();
        assertNull(runNext.next(carrier, GRANULARITY, now, false), "the cap holds whether or not a check is due");
        assertEquals(2, queue.readyCount());
    }

    @Test
    void anotherThreadRescuesAnOccupantOnlyAfterItWaitedTheRescueDelay() {
        Cell woken = new Cell("woken");
        inTask(10 * US);
        assertTrue(runNext.tryPlace(carrier, woken));
        // the waking task goes on running (e.g. a publishOn drain loop): the occupant is stranded; its
        // wait counts from the waking task's start (placement reads no clock)
        long taskStart = now - 10 * US;
        assertFalse(runNext.rescue(carrier, taskStart + RunNext.RESCUE_AFTER_NANOS - 1));
        assertSame(woken, carrier.peekRunNext());
        assertTrue(runNext.rescue(carrier, taskStart + RunNext.RESCUE_AFTER_NANOS));
        assertNull(carrier.peekRunNext());
        assertEquals(1, queue.readyCount());
        assertTrue(runNext.isEmpty());
        assertEquals(1, runNext.rescues());
    }

    @Test
    void anOccupantWokenByATaskThatHadRunLongIsRescuableAtOnce() {
        // placement reads no clock: the waking task's start is the occupant's stamp, so a waker that had
        // already run for the rescue delay leaves its occupant to the first rescuer that looks
        Cell woken = new Cell("woken");
        inTask(RunNext.RESCUE_AFTER_NANOS);
        assertTrue(runNext.tryPlace(carrier, woken));
        assertTrue(runNext.rescue(carrier, now));
        assertEquals(1, queue.readyCount());
        assertTrue(runNext.isEmpty());
    }

    @Test
    void aCarrierRescuesTheOtherCarriersOccupantsButNeverItsOwn() {
        CarrierThread other = new CarrierThread(engine, "runnext-2", false, 1);
        Cell woken = new Cell("woken");
        inTask(10 * US);
        assertTrue(runNext.tryPlace(carrier, woken));
        assertFalse(runNext.rescueOthers(carrier, now + RunNext.RESCUE_AFTER_NANOS), "the owner chains or flushes it");
        assertFalse(runNext.rescueOthers(other, now), "not before the rescue delay");
        assertSame(woken, carrier.peekRunNext());
        assertTrue(runNext.rescueOthers(other, now + RunNext.RESCUE_AFTER_NANOS));
        assertNull(carrier.peekRunNext());
        assertEquals(1, queue.readyCount());
    }

    /**
     * End to end: a task wakes an actor as the last task of its turn (so into its carrier's slot) and then
     * runs on for a long time, while the other carrier is busy (never idle, so it never rescues as an idler
     * does) and the hog monitor looks only every 150 s. The busy carrier's periodic look moves the stranded
     * actor to its own queue, so the actor runs while the long task is still running. Not timed: the long
     * task ends as soon as the woken actor ran, and fails only if that took 10 s.
     */
    @Test
    void aBusyCarrierRunsAnActorStrandedInTheSlotBehindALongTask() throws InterruptedException {
        ActorScheduler scheduler = ActorScheduler.builder().name("stranded").threads(2)
                .hogThreshold(Duration.ofMinutes(10)).build();
        try {
            ActorWorker busy = scheduler.createWorker();
            ActorWorker waker = scheduler.createWorker();
            ActorWorker stranded = scheduler.createWorker();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            AtomicInteger busyRuns = new AtomicInteger();
            Runnable[] spin = new Runnable[1];
            spin[0] = () -> {
                busyRuns.incrementAndGet();
                if (!stop.get()) {
                    busy.schedule(spin[0]);
                }
            };
            busy.schedule(spin[0]);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (busyRuns.get() < 1_000 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            CountDownLatch ran = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicBoolean ranDuringTheLongTask = new java.util.concurrent.atomic.AtomicBoolean();
            CountDownLatch longTaskOver = new CountDownLatch(1);
            waker.schedule(() -> {
                stranded.schedule(ran::countDown); // the last task of its turn: into this carrier's slot
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (ran.getCount() > 0 && System.nanoTime() < end) {
                    Thread.onSpinWait(); // a long task: its carrier cannot run the occupant
                }
                ranDuringTheLongTask.set(ran.getCount() == 0);
                longTaskOver.countDown();
            });
            assertTrue(longTaskOver.await(60, TimeUnit.SECONDS));
            stop.set(true);
            assertTrue(ranDuringTheLongTask.get(), "the woken actor waited for the long task to end");
        } finally {
            scheduler.disposeGracefully().block(Duration.ofSeconds(10));
        }
    }

    @Test
    void theNextTaskOfAGoingOnTurnFlushesTheOccupantToTheRunQueue() {
        Cell woken = new Cell("woken");
        inTask(10 * US);
        assertTrue(runNext.tryPlace(carrier, woken));
        runNext.flush(carrier, now);
        assertNull(carrier.peekRunNext());
        assertEquals(1, queue.readyCount());
        assertTrue(runNext.isEmpty());
    }

    /**
     * Two workers hand a task back and forth: each hand-off wakes the other worker from inside a task
     * that is the last of its turn, so it goes through the slot. Without the slot every hand-off takes
     * the run-queue lock at least twice (enqueue, then end of turn with take); with it, not at all (the
     * turn is charged lock-free, {@code finishChainedTurn}). Counted, not timed: a rare rescue on a busy
     * machine costs a lock or two, far below the bound.
     */
    @Test
    void aMessageExchangeTakesNoRunQueueLockOnTheLocalPath() throws InterruptedException {
        ActorScheduler scheduler = ActorScheduler.builder().name("pingpong").threads(2).build();
        try {
            int handOffs = 50_000;
            ActorWorker a = scheduler.createWorker();
            ActorWorker b = scheduler.createWorker();
            AtomicInteger left = new AtomicInteger(handOffs);
            CountDownLatch done = new CountDownLatch(1);
            Runnable[] toA = new Runnable[1];
            Runnable toB = () -> {
                if (left.decrementAndGet() <= 0) {
                    done.countDown();
                } else {
                    a.schedule(toA[0]);
                }
            };
            toA[0] = () -> {
                if (left.decrementAndGet() <= 0) {
                    done.countDown();
                } else {
                    b.schedule(toB);
                }
            };
            SchedulerEngine e = io.reactoractor.internal.Internals.engine(scheduler.defaultGroup());
            long[] before = e.engineCounters();
            a.schedule(toA[0]);
            assertTrue(done.await(60, TimeUnit.SECONDS), "the exchange finished");
            long[] after = e.engineCounters();
            double locksPerHandOff = (after[0] - before[0]) / (double) handOffs;
            long chained = after[2] - before[2];
            System.out.printf("ping-pong: %.2f run-queue locks per hand-off, %d of %d turns chained, %d rescues,"
                    + " %d wake-ups%n", locksPerHandOff, chained, handOffs, after[3] - before[3], after[1] - before[1]);
            assertTrue(chained >= handOffs / 2, "most hand-offs went through the slot: " + chained);
            assertTrue(locksPerHandOff < 0.25, "run-queue locks per hand-off: " + locksPerHandOff);
        } finally {
            scheduler.disposeGracefully().block(Duration.ofSeconds(10));
        }
    }
}
