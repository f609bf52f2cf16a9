package io.reactoractor.benchmarks.fairness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * The QMQ-style baseline must be a correct scheduler before it can be a fair comparison: no task lost or
 * run twice, tasks of a worker one at a time in submission order, lowest cumulative time first.
 * Ordering is checked with a single thread held by a gate task, so no assertion depends on timing.
 */
class QmqStyleSchedulerTest {

    private final List<Scheduler> schedulers = new ArrayList<>();

    private QmqStyleScheduler scheduler(int threads) {
        QmqStyleScheduler s = new QmqStyleScheduler("qmq-test", threads);
        schedulers.add(s);
        return s;
    }

    @AfterEach
    void disposeAll() {
        schedulers.forEach(Scheduler::dispose);
    }

    @Test
    @Timeout(60)
    void concurrentSubmittersLoseNothingRunNothingTwiceAndKeepPerWorkerOrder() throws Exception {
        QmqStyleScheduler s = scheduler(2);
        int producers = 4;
        int workers = 8;
        int perPair = 3_000; // tasks per (producer, worker)
        int chain = 3_000; // tasks each worker re-schedules on itself from its own thread
        int direct = 5_000; // tasks per producer given to the scheduler itself
        List<Scheduler.Worker> ws = new ArrayList<>();
        int[][] next = new int[workers][producers + 1]; // written only inside the worker's own tasks
        AtomicInteger[] running = new AtomicInteger[workers];
        AtomicBoolean violation = new AtomicBoolean();
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        int total = workers * (producers * perPair + chain) + producers * direct;
        CountDownLatch done = new CountDownLatch(total);
        AtomicIntegerArray directRuns = new AtomicIntegerArray(producers * direct);
        for (int w = 0; w < workers; w++) {
            ws.add(s.createWorker());
            running[w] = new AtomicInteger();
        }

        class Step implements Runnable {
            final int worker;
            final int source;
            final int seq;

            Step(int worker, int source, int seq) {
                this.worker = worker;
                this.source = source;
                this.seq = seq;
            }

            @Override
            public void run() {
                if (running[worker].incrementAndGet() != 1) {
                    violation.set(true);
                    problems.add("two tasks of worker " + worker + " at once");
                }
                if (next[worker][source] != seq) {
                    violation.set(true);
                    problems.add("worker " + worker + " source " + source + ": expected " + next[worker][source]
                            + " got " + seq);
                }
                next[worker][source] = seq + 1;
                if (source == producers && seq + 1 < chain) {
                    ws.get(worker).schedule(new Step(worker, source, seq + 1));
                }
                running[worker].decrementAndGet();
                done.countDown();
            }
        }

        for (int w = 0; w < workers; w++) {
            ws.get(w).schedule(new Step(w, producers, 0));
        }
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            Thread t = new Thread(() -> {
                for (int i = 0; i < perPair; i++) {
                    for (int w = 0; w < workers; w++) {
                        ws.get(w).schedule(new Step(w, producer, i));
                    }
                    if (i < direct) {
                        int id = producer * direct + i;
                        s.schedule(() -> {
                            directRuns.incrementAndGet(id);
                            done.countDown();
                        });
                    }
                }
                for (int i = perPair; i < direct; i++) {
                    int id = producer * direct + i;
                    s.schedule(() -> {
                        directRuns.incrementAndGet(id);
                        done.countDown();
                    });
                }
            }, "producer-" + p);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(done.await(45, TimeUnit.SECONDS), () -> done.getCount() + " tasks never ran");
        assertFalse(violation.get(), () -> problems.subList(0, Math.min(10, problems.size())).toString());
        for (int w = 0; w < workers; w++) {
            for (int p = 0; p < producers; p++) {
                assertEquals(perPair, next[w][p]);
            }
            assertEquals(chain, next[w][producers]);
        }
        for (int i = 0; i < directRuns.length(); i++) {
            assertEquals(1, directRuns.get(i), "direct task " + i);
        }
        // nothing more may run after the count reached 0 (a duplicate would show up here)
        Thread.sleep(50);
        assertEquals(0, done.getCount());
    }

    @Test
    @Timeout(10)
    void aNewActorRunsAheadOfOneWithMoreCumulativeTime() throws Exception {
        QmqStyleScheduler s = scheduler(1);
        Scheduler.Worker old = s.createWorker();
        CountDownLatch warmed = new CountDownLatch(1);
        old.schedule(() -> {
            Busy.burn(TimeUnit.MILLISECONDS.toNanos(20));
            warmed.countDown();
        });
        assertTrue(warmed.await(5, TimeUnit.SECONDS));

        CountDownLatch release = holdTheOnlyThread(s);
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch both = new CountDownLatch(2);
        // queued first, but 20 ms of cumulative time behind it
        old.schedule(() -> {
            order.add("old");
            both.countDown();
        });
        s.createWorker().schedule(() -> {
            order.add("new");
            both.countDown();
        });
        release.countDown();
        assertTrue(both.await(5, TimeUnit.SECONDS));
        assertEquals(List.of("new", "old"), order);
    }

    @Test
    @Timeout(10)
    void aTurnEndsAtTheQuotaSoAnotherActorRunsBeforeABusyMailboxIsEmpty() throws Exception {
        QmqStyleScheduler s = scheduler(1);
        Scheduler.Worker busy = s.createWorker();
        Scheduler.Worker other = s.createWorker();
        CountDownLatch release = holdTheOnlyThread(s);
        int tasks = 100; // 100 ms of work: twenty quotas
        AtomicInteger busyRan = new AtomicInteger();
        CountDownLatch all = new CountDownLatch(tasks + 1);
        for (int i = 0; i < tasks; i++) {
            busy.schedule(() -> {
                Busy.burn(TimeUnit.MILLISECONDS.toNanos(1));
                busyRan.incrementAndGet();
                all.countDown();
            });
        }
        AtomicInteger seenByOther = new AtomicInteger(-1);
        other.schedule(() -> {
            seenByOther.set(busyRan.get());
            all.countDown();
        });
        release.countDown();
        assertTrue(all.await(5, TimeUnit.SECONDS));
        // busy was queued first with equal totals (0), so it ran first, but only for one turn
        assertTrue(seenByOther.get() > 0 && seenByOther.get() < tasks, () -> "other ran after " + seenByOther.get());
    }

    @Test
    @Timeout(10)
    void disposingATaskOrAWorkerCancelsWhatHasNotStarted() throws Exception {
        QmqStyleScheduler s = scheduler(1);
        CountDownLatch release = holdTheOnlyThread(s);
        Scheduler.Worker w = s.createWorker();
        Scheduler.Worker doomed = s.createWorker();
        AtomicInteger ran = new AtomicInteger();
        Disposable cancelled = w.schedule(() -> ran.addAndGet(100));
        CountDownLatch kept = new CountDownLatch(1);
        w.schedule(() -> {
            ran.incrementAndGet();
            kept.countDown();
        });
        doomed.schedule(() -> ran.addAndGet(1000));
        cancelled.dispose();
        doomed.dispose();
        assertTrue(cancelled.isDisposed() && doomed.isDisposed());
        assertThrows(RejectedExecutionException.class, () -> doomed.schedule(() -> ran.addAndGet(10_000)));
        release.countDown();
        assertTrue(kept.await(5, TimeUnit.SECONDS));
        // the doomed worker is queued behind w (same total, later); one more round trip lets it drain
        CountDownLatch after = new CountDownLatch(1);
        s.createWorker().schedule(after::countDown);
        assertTrue(after.await(5, TimeUnit.SECONDS));
        assertEquals(1, ran.get());
    }

    @Test
    @Timeout(10)
    void gracefulDisposeRunsQueuedTasksThenRejectsAndStops() throws Exception {
        QmqStyleScheduler s = scheduler(2);
        Scheduler.Worker w = s.createWorker();
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 100; i++) {
            w.schedule(ran::incrementAndGet);
        }
        s.disposeGracefully().block(Duration.ofSeconds(5));
        assertTrue(s.isDisposed());
        assertEquals(100, ran.get());
        assertThrows(RejectedExecutionException.class, () -> w.schedule(ran::incrementAndGet));
        assertThrows(RejectedExecutionException.class, () -> s.schedule(ran::incrementAndGet));
        assertThrows(RejectedExecutionException.class, () -> s.createWorker().schedule(ran::incrementAndGet));
        assertThrows(RejectedExecutionException.class, () -> w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS));
    }

    @Test
    @Timeout(10)
    void aFailingTaskDoesNotStopTheActorOrTheThread() throws Exception {
        QmqStyleScheduler s = scheduler(1);
        Scheduler.Worker w = s.createWorker();
        CountDownLatch after = new CountDownLatch(1);
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        AtomicInteger reported = new AtomicInteger();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> reported.incrementAndGet());
        try {
            w.schedule(() -> {
                throw new IllegalStateException("expected by the test");
            });
            w.schedule(after::countDown);
            assertTrue(after.await(5, TimeUnit.SECONDS));
            assertEquals(1, reported.get());
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
    }

    /**
     * Occupies the single thread of {@code s} with a task that waits for the returned latch, so that
     * everything scheduled meanwhile is queued and the order in which it then runs is the scheduler's
     * choice alone.
     */
    private static CountDownLatch holdTheOnlyThread(QmqStyleScheduler s) throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        s.createWorker().schedule(() -> {
            entered.countDown();
            await(release);
        });
        assertTrue(entered.await(5, TimeUnit.SECONDS));
        return release;
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
