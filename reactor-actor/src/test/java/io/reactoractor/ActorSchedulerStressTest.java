package io.reactoractor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Stress: millions of tasks from many threads onto many workers while other threads suspend and
 * resume workers at random. Checks the actor invariants that must hold under any interleaving:
 * no task is lost, none runs twice, tasks of one (producer, worker) pair run in submission order,
 * and no two tasks of one worker ever run at the same time. Tasks keep their bookkeeping in
 * plain (non-volatile) arrays owned by their worker, so a missing happens-before edge between two
 * consecutive turns of an actor shows up as an ordering error too.
 */
@Timeout(value = 180, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ActorSchedulerStressTest {

    private static final int PRODUCERS = 8;
    private static final int WORKERS = 64;
    private static final int TOTAL = 2_000_000;
    private static final int PER_PRODUCER = TOTAL / PRODUCERS;
    /** Bound on a producer's tasks not yet run, so queues (and the heap) stay small. */
    private static final int MAX_OUTSTANDING_PER_PRODUCER = 20_000;

    private final TestSupport.Resources resources = new TestSupport.Resources();

    @AfterEach
    void disposeAll() {
        resources.disposeAll();
    }

    /** Per-worker state; {@link #nextSeq} is plain memory touched only by the worker's tasks. */
    private static final class WorkerState {
        final ActorWorker worker;
        final AtomicInteger inFlight = new AtomicInteger();
        final int[] nextSeq = new int[PRODUCERS];

        WorkerState(ActorWorker worker) {
            this.worker = worker;
        }
    }

    private static final class Violations {
        final AtomicLong overlaps = new AtomicLong();
        final AtomicLong outOfOrder = new AtomicLong();
        final AtomicReference<String> first = new AtomicReference<>();

        void report(AtomicLong counter, String message) {
            counter.incrementAndGet();
            first.compareAndSet(null, message);
        }
    }

    private static final class StressTask implements Runnable {
        final WorkerState state;
        final int producer;
        final int seq;
        final LongAdder done;
        final Violations violations;

        StressTask(WorkerState state, int producer, int seq, LongAdder done, Violations violations) {
            this.state = state;
            this.producer = producer;
            this.seq = seq;
            this.done = done;
            this.violations = violations;
        }

        @Override
        public void run() {
            if (state.inFlight.incrementAndGet() != 1) {
                violations.report(violations.overlaps, state.worker.path() + ": two tasks ran concurrently");
            }
            int expected = state.nextSeq[producer];
            if (seq != expected) {
                violations.report(violations.outOfOrder, state.worker.path() + ": producer " + producer
                        + " task " + seq + " ran when " + expected + " was expected");
            }
            state.nextSeq[producer] = seq + 1;
            state.inFlight.decrementAndGet();
            done.increment();
        }
    }

    /** Two and four carriers: one run queue per carrier, so four exercises stealing among three others. */
    @ParameterizedTest(name = "{0} carriers")
    @ValueSource(ints = {2, 4})
    void millionsOfTasksWithRandomSuspendResumeAreNeitherLostDuplicatedReorderedNorConcurrent(int carriers) {
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(uniqueName("stress")).threads(carriers));
        WorkerState[] states = new WorkerState[WORKERS];
        for (int w = 0; w < WORKERS; w++) {
            states[w] = new WorkerState(w % 4 == 0 ? s.group("g" + (w % 3), 1 + w % 3).createWorker() : s.createWorker());
        }
        Violations violations = new Violations();
        LongAdder[] doneBy = new LongAdder[PRODUCERS];
        int[][] sentBy = new int[PRODUCERS][WORKERS];
        ConcurrentLinkedQueue<Throwable> threadErrors = new ConcurrentLinkedQueue<>();
        CyclicBarrier start = new CyclicBarrier(PRODUCERS + 2);
        AtomicInteger producersRunning = new AtomicInteger(PRODUCERS);
        AtomicLong suspendResumeCycles = new AtomicLong();

        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            int producer = p;
            doneBy[p] = new LongAdder();
            threads.add(new Thread(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                    SplittableRandom random = new SplittableRandom(42 + producer);
                    int[] sent = sentBy[producer];
                    LongAdder myDone = doneBy[producer];
                    for (int i = 0; i < PER_PRODUCER; i++) {
                        if ((i & 255) == 0) {
                            while (i - myDone.sum() > MAX_OUTSTANDING_PER_PRODUCER) {
                                LockSupport.parkNanos(100_000);
                            }
                        }
                        int w = random.nextInt(WORKERS);
                        states[w].worker.schedule(new StressTask(states[w], producer, sent[w]++, myDone, violations));
                    }
                } catch (Throwable t) {
                    threadErrors.add(t);
                } finally {
                    producersRunning.decrementAndGet();
                }
            }, "stress-producer-" + p));
        }
        for (int c = 0; c < 2; c++) {
            int churner = c;
            threads.add(new Thread(() -> {
                try {
                    start.await(30, TimeUnit.SECONDS);
                    SplittableRandom random = new SplittableRandom(7 + churner);
                    while (producersRunning.get() > 0) {
                        ActorWorker w = states[random.nextInt(WORKERS)].worker;
                        w.suspend();
                        try {
                            if (random.nextBoolean()) {
                                // sometimes nest a second suspension of the same worker
                                w.suspend();
                                w.resume();
                            }
                            LockSupport.parkNanos(random.nextInt(200_000));
                        } finally {
                            w.resume();
                        }
                        suspendResumeCycles.incrementAndGet();
                    }
                } catch (Throwable t) {
                    threadErrors.add(t);
                }
            }, "stress-churner-" + c));
        }

        long startNanos = System.nanoTime();
        assertTimeoutPreemptively(Duration.ofSeconds(150), () -> {
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join();
            }
            await(Duration.ofSeconds(60), () -> sum(doneBy) == TOTAL,
                    () -> "tasks run: " + sum(doneBy) + " of " + TOTAL + "; stats " + s.stats());
        });
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);

        assertTrue(threadErrors.isEmpty(), () -> "producer/churner failures: " + threadErrors);
        assertNull(violations.first.get(), () -> "first violation: " + violations.first.get()
                + " (overlaps " + violations.overlaps + ", out of order " + violations.outOfOrder + ")");
        assertTrue(suspendResumeCycles.get() > 0, "the churners did suspend workers");

        // read every worker's plain bookkeeping from inside the worker itself (proper happens-before)
        int[][] finalSeq = new int[WORKERS][];
        CountDownLatch collected = new CountDownLatch(WORKERS);
        for (int w = 0; w < WORKERS; w++) {
            int index = w;
            assertFalse(states[w].worker.isSuspended(), "every suspend was balanced by a resume");
            states[w].worker.schedule(() -> {
                finalSeq[index] = states[index].nextSeq.clone();
                collected.countDown();
            });
        }
        await(collected, LONG, "final bookkeeping tasks run");
        long total = 0;
        for (int w = 0; w < WORKERS; w++) {
            for (int p = 0; p < PRODUCERS; p++) {
                assertEquals(sentBy[p][w], finalSeq[w][p],
                        "tasks of producer " + p + " run on worker " + w + " (lost or duplicated)");
                total += finalSeq[w][p];
            }
        }
        assertEquals(TOTAL, total);
        assertEquals(TOTAL, sum(doneBy), "no task ran twice");
        System.out.printf("stress: %,d tasks, %,d suspend/resume cycles in %d ms%n",
                TOTAL, suspendResumeCycles.get(), elapsedMs);
    }

    private static long sum(LongAdder[] adders) {
        long sum = 0;
        for (LongAdder a : adders) {
            sum += a.sum();
        }
        return sum;
    }

    @ParameterizedTest(name = "{0} carriers")
    @ValueSource(ints = {2, 4})
    void schedulerLevelTasksFromManyThreadsRunExactlyOnce(int carriers) {
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(uniqueName("stress")).threads(carriers));
        int producers = 4;
        int perProducer = 50_000;
        AtomicIntegerArray runs = new AtomicIntegerArray(producers * perProducer);
        LongAdder done = new LongAdder();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int base = p * perProducer;
            threads.add(new Thread(() -> {
                try {
                    for (int i = 0; i < perProducer; i++) {
                        int id = base + i;
                        if ((i & 1023) == 0) {
                            while (id - base - done.sum() / producers > MAX_OUTSTANDING_PER_PRODUCER) {
                                LockSupport.parkNanos(100_000);
                            }
                        }
                        s.schedule(() -> {
                            runs.incrementAndGet(id);
                            done.increment();
                        });
                    }
                } catch (Throwable t) {
                    errors.add(t);
                }
            }, "stress-scheduler-producer-" + p));
        }
        assertTimeoutPreemptively(Duration.ofSeconds(90), () -> {
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join();
            }
            await(Duration.ofSeconds(60), () -> done.sum() >= (long) producers * perProducer,
                    () -> "ran " + done.sum() + " tasks");
        });
        assertTrue(errors.isEmpty(), () -> "producer failures: " + errors);
        TestSupport.sleepMillis(50); // a duplicate run would still have to show up
        for (int i = 0; i < runs.length(); i++) {
            int n = runs.get(i);
            if (n != 1) {
                int id = i;
                assertEquals(1, n, () -> "task " + id + " ran " + n + " times");
            }
        }
    }

    /**
     * Cancellations racing the drain (another thread disposes tasks while the worker runs them): every task either
     * runs or is skipped, once, and the worker's pending count comes back to exactly 0 (each cancelled-while-queued
     * task is counted once by its canceller and uncounted once by the drain, whichever order they take).
     */
    @org.junit.jupiter.api.Test
    void cancellationsRacingTheDrainLeaveTheWorkersPendingCountExact() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name(uniqueName("cancel-race")).threads(2).build();
        try {
            for (int round = 0; round < 5; round++) {
                ActorWorker w = s.createWorker();
                int n = 20_000;
                java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
                java.util.concurrent.BlockingQueue<reactor.core.Disposable> toCancel =
                        new java.util.concurrent.LinkedBlockingQueue<>();
                java.util.concurrent.atomic.AtomicInteger cancelledBeforeRun = new java.util.concurrent.atomic.AtomicInteger();
                Thread canceller = new Thread(() -> {
                    try {
                        for (int k = 0; k < n / 2; k++) {
                            toCancel.take().dispose();
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                canceller.start();
                java.util.List<reactor.core.Disposable> odd = new java.util.ArrayList<>();
                for (int k = 0; k < n; k++) {
                    reactor.core.Disposable d = w.schedule(ran::incrementAndGet);
                    if (k % 2 == 0) {
                        toCancel.add(d);
                    }
                }
                canceller.join(60_000);
                int r = round;
                await(LONG, () -> w.pendingTasks() == 0 && ran.get() >= n / 2, "round " + r + ": pending count back to 0");
                java.util.concurrent.CountDownLatch last = new java.util.concurrent.CountDownLatch(1);
                w.schedule(last::countDown);
                assertTrue(last.await(30, java.util.concurrent.TimeUnit.SECONDS));
                assertEquals(0, w.pendingTasks(), "round " + round);
                assertTrue(ran.get() >= n / 2 && ran.get() <= n, "round " + round + ": ran " + ran.get());
                w.dispose();
            }
        } finally {
            s.dispose();
        }
    }
}
