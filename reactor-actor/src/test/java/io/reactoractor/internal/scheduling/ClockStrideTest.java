package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ActorWorker;
import io.reactoractor.internal.Internals;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Turn}'s clock reads between tasks (its class doc, "Clock reads between tasks"): a turn of tiny
 * tasks reads the clock after a fraction of them; a turn of tasks longer than
 * {@link Turn#TINY_TASK_NANOS} reads it after every one (from its second on, when the actor's previous
 * turn had tiny ones). Counted with the engine's clock-read counter,
 * never timed: a tiny task that the OS deschedules only makes the turn read more often, which the
 * bound for tiny tasks leaves room for.
 */
class ClockStrideTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("clock-stride").threads(1)
            .quota(java.time.Duration.ofMillis(1)).hogThreshold(java.time.Duration.ofSeconds(10)).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    private long clockReads() {
        return Internals.engine(scheduler.defaultGroup()).engineCounters()[7];
    }

    /**
     * Runs a task on {@code w} that holds the scheduler's one carrier until the returned gate opens, and
     * returns once it runs: whatever is scheduled meanwhile waits, and runs back to back after.
     */
    private static CountDownLatch blockTheCarrier(ActorWorker w) throws InterruptedException {
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch gateRunning = new CountDownLatch(1);
        w.schedule(() -> {
            gateRunning.countDown();
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(gateRunning.await(30, TimeUnit.SECONDS), "the gate task runs");
        return gate;
    }

    /**
     * Runs {@code tasks} tasks queued behind a gate on one worker, so they run as long turns, and
     * returns the clock reads they cost.
     */
    private long readsFor(int tasks, Runnable task) throws InterruptedException {
        ActorWorker w = scheduler.createWorker();
        CountDownLatch gate = blockTheCarrier(w);
        CountDownLatch done = new CountDownLatch(tasks);
        for (int i = 0; i < tasks; i++) {
            w.schedule(() -> {
                task.run();
                done.countDown();
            });
        }
        long before = clockReads();
        gate.countDown();
        assertTrue(done.await(30, TimeUnit.SECONDS), "tasks ran");
        // the last turn's end: its closing read and overrun are counted when its carrier ends it, which the
        // one carrier does before it runs another actor's task (one read of its own); a sleep here would
        // assume the test thread runs again only after that, which a busy machine does not promise
        ActorWorker marker = scheduler.createWorker();
        CountDownLatch markerRan = new CountDownLatch(1);
        marker.schedule(markerRan::countDown);
        assertTrue(markerRan.await(30, TimeUnit.SECONDS), "the marker ran");
        marker.dispose();
        long reads = clockReads() - before;
        w.dispose();
        return reads;
    }

    /**
     * Tiny only once compiled: interpreted, the engine's own per-task code takes microseconds, and the
     * turn rightly reads after each task. So rounds repeat until the JIT has done its work; at most 15.
     */
    @Test
    void tinyTasksReadTheClockAfterAFractionOfThem() throws Exception {
        int tasks = 10_000;
        java.util.List<Long> rounds = new java.util.ArrayList<>();
        for (int round = 0; round < 15; round++) {
            long reads = readsFor(tasks, () -> { });
            rounds.add(reads);
            // with the stride at its maximum of 4 after two reads: about tasks / 4 plus a few per turn;
            // tasks / 2 leaves room for reads after descheduled tasks (each resets the stride)
            if (reads <= tasks / 2) {
                return;
            }
        }
        throw new AssertionError(tasks + " tiny tasks per round cost these clock reads: " + rounds);
    }

    /**
     * A task over the quota right after tiny ones, whose end no read of its own measures (the stride
     * skipped it, and it is the turn's last): the turn's closing read still counts its overrun. Its
     * stretch averages over the quota whatever the tiny tasks before it took.
     */
    @Test
    void aLongTaskAfterTinyOnesIsCountedAsAQuotaOverrun() throws Exception {
        for (int round = 0; round < 15; round++) {
            AtomicInteger n = new AtomicInteger();
            long[] before = new long[1];
            readsFor(4_001, () -> {
                int i = n.incrementAndGet();
                if (i == 1) {
                    // after the gate task (a long wait: an overrun of its own, counted when it ended)
                    before[0] = Internals.engine(scheduler.defaultGroup()).quotaOverruns();
                } else if (i == 4_001) {
                    long end = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(6);
                    while (System.nanoTime() < end) {
                        Thread.onSpinWait();
                    }
                }
            });
            long overruns = Internals.engine(scheduler.defaultGroup()).quotaOverruns() - before[0];
            assertTrue(overruns >= 1, "round " + round + ": the 6 ms task was not counted");
        }
    }

    @Test
    void tasksLongerThanTinyReadTheClockAfterEachOne() throws Exception {
        int tasks = 50;
        long reads = readsFor(tasks, () -> {
            long end = System.nanoTime() + 20 * Turn.TINY_TASK_NANOS;
            while (System.nanoTime() < end) {
                Thread.onSpinWait();
            }
        });
        assertTrue(reads >= tasks, tasks + " tasks of 20 us cost only " + reads + " clock reads");
    }

    /**
     * Gives each of {@code workers} one turn of 4 tasks (a task that schedules the next on its own worker,
     * so the 4 run in one turn; {@code body} runs in each), all queued behind a gate so that the turns
     * run back to back, and returns the clock reads per turn.
     */
    private double readsPerTurnOf4(ActorWorker[] workers, Runnable body) throws InterruptedException {
        ActorWorker gateWorker = scheduler.createWorker();
        CountDownLatch gate = blockTheCarrier(gateWorker);
        CountDownLatch done = new CountDownLatch(workers.length);
        for (ActorWorker w : workers) {
            w.schedule(new Runnable() {
                int left = 4;

                @Override
                public void run() {
                    body.run();
                    if (--left > 0) {
                        w.schedule(this);
                    } else {
                        done.countDown();
                    }
                }
            });
        }
        long before = clockReads();
        gate.countDown();
        assertTrue(done.await(30, TimeUnit.SECONDS), "the turns ran");
        double perTurn = (double) (clockReads() - before) / workers.length;
        gateWorker.dispose();
        return perTurn;
    }

    /**
     * A turn starts at the stride its actor's previous turn ended with, capped at
     * {@link Turn#CARRIED_STRIDE}: turns of 4 tiny tasks cost two reads each (after the second task, and
     * the closing one after the fourth), where starting every turn at 1 cost 3 (after the first, the third
     * and the fourth). And the cap holds: right after such turns, turns of 4 tasks of 20 us read after the
     * second, third and fourth task (3 reads; a carried stride of 4 would have read once). From the second
     * round on every actor has a previous turn. Rounds repeat until the JIT has done its work, as above;
     * a descheduled task only adds reads.
     */
    @Test
    void aTurnStartsAtTheStrideItsActorsLastTurnEndedWithCapped() throws Exception {
        ActorWorker[] workers = new ActorWorker[1_000];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = scheduler.createWorker();
        }
        java.util.List<Double> rounds = new java.util.ArrayList<>();
        readsPerTurnOf4(workers, () -> { }); // every actor's first turn starts at 1
        for (int round = 0; round < 15; round++) {
            double tiny = readsPerTurnOf4(workers, () -> { });
            rounds.add(tiny);
            if (tiny <= 2.5) {
                double longer = readsPerTurnOf4(workers, () -> {
                    long end = System.nanoTime() + 20 * Turn.TINY_TASK_NANOS;
                    while (System.nanoTime() < end) {
                        Thread.onSpinWait();
                    }
                });
                assertTrue(longer >= 3.0 - 1e-9, "turns of 4 tasks of 20 us right after tiny turns cost only "
                        + longer + " clock reads each: the carried stride is not capped");
                for (ActorWorker w : workers) {
                    w.dispose();
                }
                return;
            }
        }
        throw new AssertionError("turns of 4 tiny tasks cost these clock reads per turn: " + rounds);
    }
}
