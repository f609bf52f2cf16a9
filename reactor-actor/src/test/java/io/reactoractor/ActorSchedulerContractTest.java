package io.reactoractor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.scheduler.NonBlocking;
import reactor.core.scheduler.Schedulers;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.awaitNoThreadsOf;
import static io.reactoractor.TestSupport.sleepMillis;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link reactor.core.scheduler.Scheduler} contract as Reactor's operators rely on it:
 * tasks run; a worker runs its tasks one at a time in FIFO order; delayed and periodic tasks run
 * and can be cancelled; disposed workers and schedulers reject with
 * {@link RejectedExecutionException}; graceful disposal is lazy, finishes queued work and stops
 * every thread; threads are named after the scheduler and are {@link NonBlocking};
 * {@link Schedulers#onScheduleHook} decorates every task; a failing task kills neither its thread
 * nor other actors; and the {@link Scannable} attributes are reported.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ActorSchedulerContractTest {

    private final TestSupport.Resources resources = new TestSupport.Resources();

    @AfterEach
    void disposeAll() {
        resources.disposeAll();
    }

    private ActorScheduler newScheduler(int threads) {
        return resources.scheduler(ActorScheduler.builder().name(uniqueName("contract")).threads(threads));
    }

    // ------------------------------------------------------------------------------------------
    // running tasks
    // ------------------------------------------------------------------------------------------

    @Test
    void tasksRunOnSchedulerWorkerAndGroup() {
        ActorScheduler s = newScheduler(2);
        CountDownLatch ran = new CountDownLatch(4);
        s.schedule(ran::countDown);
        s.createWorker().schedule(ran::countDown);
        s.group("g", 1).schedule(ran::countDown);
        s.group("g", 1).createWorker().schedule(ran::countDown);
        await(ran, LONG, "every immediate task runs");
    }

    @Test
    void workerRunsTasksInFifoOrderAndNeverConcurrentlyUnderConcurrentSubmission() throws Exception {
        ActorScheduler s = newScheduler(2);
        ActorWorker worker = s.createWorker();
        int producers = 4;
        int perProducer = 5_000;
        // plain fields, touched only by the worker's tasks: the actor must also publish memory
        // effects from one task to the next, wherever the tasks run
        int[] lastSeen = new int[producers];
        java.util.Arrays.fill(lastSeen, -1);
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger outOfOrder = new AtomicInteger();
        AtomicReference<String> firstViolation = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(producers * perProducer);
        CyclicBarrier start = new CyclicBarrier(producers);

        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            Thread t = new Thread(() -> {
                try {
                    start.await(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < perProducer; i++) {
                    int seq = i;
                    worker.schedule(() -> {
                        if (inFlight.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                            firstViolation.compareAndSet(null, "two tasks of one worker ran concurrently");
                        }
                        if (lastSeen[producer] != seq - 1) {
                            outOfOrder.incrementAndGet();
                            firstViolation.compareAndSet(null, "producer " + producer + ": got " + seq
                                    + " after " + lastSeen[producer]);
                        }
                        lastSeen[producer] = seq;
                        inFlight.decrementAndGet();
                        done.countDown();
                    });
                }
            }, "contract-producer-" + p);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(LONG.toMillis());
        }
        await(done, LONG, "all tasks of the worker ran");
        assertNull(firstViolation.get(), () -> "violation: " + firstViolation.get());
        assertEquals(0, overlaps.get(), "overlapping executions on one worker");
        assertEquals(0, outOfOrder.get(), "per-producer FIFO violations");
        for (int p = 0; p < producers; p++) {
            assertEquals(perProducer - 1, lastSeen[p], "last sequence number of producer " + p);
        }
    }

    @Test
    void taskSchedulingOnItsOwnWorkerRunsAfterItNeverInline() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        AtomicBoolean firstFinished = new AtomicBoolean();
        AtomicBoolean secondSawFirstFinished = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(1);
        w.schedule(() -> {
            w.schedule(() -> {
                secondSawFirstFinished.set(firstFinished.get());
                done.countDown();
            });
            sleepMillis(20); // give a (wrong) concurrent run of the second task time to happen
            firstFinished.set(true);
        });
        await(done, LONG, "task scheduled from inside a task of the same worker runs");
        assertTrue(secondSawFirstFinished.get(), "the nested task ran before its parent task finished");
    }

    // ------------------------------------------------------------------------------------------
    // delayed and periodic tasks
    // ------------------------------------------------------------------------------------------

    @Test
    void delayedTaskRunsOnSchedulerAndNotBeforeItsDelay() {
        ActorScheduler s = newScheduler(2);
        assertDelayedRuns(s::schedule, s.name());
    }

    @Test
    void delayedTaskRunsOnWorkerAndNotBeforeItsDelay() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        assertDelayedRuns(w::schedule, s.name());
    }

    private interface DelayedScheduling {
        Disposable schedule(Runnable task, long delay, TimeUnit unit);
    }

    private static void assertDelayedRuns(DelayedScheduling scheduling, String schedulerName) {
        CountDownLatch ran = new CountDownLatch(1);
        AtomicReference<Thread> thread = new AtomicReference<>();
        long start = System.nanoTime();
        AtomicInteger elapsedMillis = new AtomicInteger(-1);
        scheduling.schedule(() -> {
            elapsedMillis.set((int) TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            thread.set(Thread.currentThread());
            ran.countDown();
        }, 50, TimeUnit.MILLISECONDS);
        await(ran, LONG, "delayed task runs");
        // a timer may fire late on a noisy machine, never early (1 ms slack for clock rounding)
        assertTrue(elapsedMillis.get() >= 49, () -> "ran after " + elapsedMillis.get() + " ms, delay was 50 ms");
        assertCarrierThread(thread.get(), schedulerName);
    }

    @Test
    void periodicTaskOnSchedulerRunsRepeatedlyAndStopsWhenCancelled() {
        ActorScheduler s = newScheduler(2);
        assertPeriodicRunsAndStops(s::schedulePeriodically);
    }

    @Test
    void periodicTaskOnWorkerRunsRepeatedlyAndStopsWhenCancelled() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        assertPeriodicRunsAndStops(w::schedulePeriodically);
    }

    private interface PeriodicScheduling {
        Disposable schedule(Runnable task, long initialDelay, long period, TimeUnit unit);
    }

    private static void assertPeriodicRunsAndStops(PeriodicScheduling scheduling) {
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        Disposable d = scheduling.schedule(() -> {
            if (inFlight.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            runs.incrementAndGet();
            inFlight.decrementAndGet();
        }, 10, 10, TimeUnit.MILLISECONDS);
        await(LONG, () -> runs.get() >= 3, () -> "periodic task ran " + runs.get() + " times");
        d.dispose();
        assertTrue(d.isDisposed(), "periodic disposable reports disposed");
        int atCancel = runs.get();
        sleepMillis(100);   // let a run that was already in progress finish
        int settled = runs.get();
        sleepMillis(200);   // 20 more periods: none of them may run
        assertEquals(settled, runs.get(), "periodic task kept running after cancel");
        assertTrue(settled <= atCancel + 1, () -> "ran " + (settled - atCancel) + " times after cancel");
        assertEquals(0, overlaps.get(), "runs of one periodic task overlapped");
    }

    @Test
    void periodicTaskCanCancelItselfFromInsideItsRun() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        AtomicInteger runs = new AtomicInteger();
        AtomicReference<Disposable> self = new AtomicReference<>();
        CountDownLatch thirdRun = new CountDownLatch(1);
        self.set(w.schedulePeriodically(() -> {
            if (runs.incrementAndGet() == 3) {
                // the Disposable is set right after schedulePeriodically returns, long before run 3
                self.get().dispose();
                thirdRun.countDown();
            }
        }, 5, 5, TimeUnit.MILLISECONDS));
        await(thirdRun, LONG, "periodic task reaches its third run");
        sleepMillis(200);
        assertEquals(3, runs.get(), "a periodic task that disposed itself kept running");
        assertTrue(self.get().isDisposed());
    }

    // ------------------------------------------------------------------------------------------
    // cancellation
    // ------------------------------------------------------------------------------------------

    @Test
    void cancelledImmediateTaskOnSuspendedWorkerNeverRuns() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        AtomicBoolean cancelledRan = new AtomicBoolean();
        CountDownLatch marker = new CountDownLatch(1);
        w.suspend();
        Disposable d = w.schedule(() -> cancelledRan.set(true));
        assertFalse(d.isDisposed(), "a pending task is not disposed");
        d.dispose();
        assertTrue(d.isDisposed(), "cancelled task reports disposed");
        w.schedule(marker::countDown);
        w.resume();
        // FIFO: the marker runs after the slot of the cancelled task
        await(marker, LONG, "task queued after the cancelled one runs");
        assertFalse(cancelledRan.get(), "cancelled task ran");
    }

    @Test
    void cancelledDelayedTaskNeverRuns() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        AtomicBoolean schedulerTaskRan = new AtomicBoolean();
        AtomicBoolean workerTaskRan = new AtomicBoolean();
        CountDownLatch marker = new CountDownLatch(1);

        // due in 1 s: the dispose calls below come long before, even with this thread descheduled for a while
        Disposable onScheduler = s.schedule(() -> schedulerTaskRan.set(true), 1, TimeUnit.SECONDS);
        Disposable onWorker = w.schedule(() -> workerTaskRan.set(true), 1, TimeUnit.SECONDS);
        onScheduler.dispose();
        onWorker.dispose();
        assertTrue(onScheduler.isDisposed());
        assertTrue(onWorker.isDisposed());
        w.schedule(marker::countDown, 1_200, TimeUnit.MILLISECONDS);
        await(marker, LONG, "later delayed task on the same worker runs");
        sleepMillis(100);
        assertFalse(workerTaskRan.get(), "cancelled delayed worker task ran");
        assertFalse(schedulerTaskRan.get(), "cancelled delayed scheduler task ran");
    }

    @Test
    void cancelledPeriodicTaskNeverRuns() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        AtomicInteger runs = new AtomicInteger();
        // first run in 1 s: the dispose calls below come long before, even with this thread descheduled a while
        Disposable onScheduler = s.schedulePeriodically(runs::incrementAndGet, 1_000, 10, TimeUnit.MILLISECONDS);
        Disposable onWorker = w.schedulePeriodically(runs::incrementAndGet, 1_000, 10, TimeUnit.MILLISECONDS);
        onScheduler.dispose();
        onWorker.dispose();
        assertTrue(onScheduler.isDisposed());
        assertTrue(onWorker.isDisposed());
        sleepMillis(1_300);
        assertEquals(0, runs.get(), "a periodic task cancelled before its first run ran");
    }

    @Test
    void disposingWorkerCancelsItsPendingTasksAndRejectsNewOnes() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        AtomicInteger ran = new AtomicInteger();
        w.suspend();
        List<Disposable> pending = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            pending.add(w.schedule(ran::incrementAndGet));
        }
        pending.add(w.schedule(ran::incrementAndGet, 20, TimeUnit.MILLISECONDS));
        pending.add(w.schedulePeriodically(ran::incrementAndGet, 20, 20, TimeUnit.MILLISECONDS));

        w.dispose();
        assertTrue(w.isDisposed(), "worker reports disposed");
        for (Disposable d : pending) {
            assertTrue(d.isDisposed(), "tasks of a disposed worker report disposed");
        }
        w.resume(); // irrelevant, must not bring the tasks back

        // the scheduler keeps running other actors; give the cancelled tasks ample opportunity
        CountDownLatch other = new CountDownLatch(1);
        s.createWorker().schedule(other::countDown);
        await(other, LONG, "another worker still runs");
        sleepMillis(200);
        assertEquals(0, ran.get(), "tasks of a disposed worker ran");

        assertThrows(RejectedExecutionException.class, () -> w.schedule(ran::incrementAndGet));
        assertThrows(RejectedExecutionException.class, () -> w.schedule(ran::incrementAndGet, 1, TimeUnit.MILLISECONDS));
        assertThrows(RejectedExecutionException.class,
                () -> w.schedulePeriodically(ran::incrementAndGet, 1, 1, TimeUnit.MILLISECONDS));
        assertFalse(s.isDisposed(), "disposing a worker does not dispose the scheduler");
        assertTrue(s.stats().rejectedTasks() >= 3, () -> "rejections are counted: " + s.stats());
    }

    @Test
    void taskDisposingItsOwnWorkerStopsTheTasksBehindIt() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        AtomicInteger ranAfter = new AtomicInteger();
        CountDownLatch disposed = new CountDownLatch(1);
        w.suspend(); // queue everything before anything runs
        w.schedule(() -> {
            w.dispose();
            disposed.countDown();
        });
        for (int i = 0; i < 5; i++) {
            w.schedule(ranAfter::incrementAndGet);
        }
        w.resume();
        await(disposed, LONG, "the disposing task runs");
        assertTrue(w.isDisposed());
        CountDownLatch other = new CountDownLatch(1);
        s.createWorker().schedule(other::countDown);
        await(other, LONG, "the scheduler keeps running other workers");
        sleepMillis(100);
        assertEquals(0, ranAfter.get(), "tasks queued behind a task that disposed its worker ran");
    }

    @Test
    void disposingAGroupDisposesItsWorkersButNotTheScheduler() {
        ActorScheduler s = newScheduler(2);
        ActorGroup g = s.group("doomed", 1);
        ActorWorker inGroup = g.createWorker();
        ActorWorker outside = s.createWorker();
        AtomicInteger ranInGroup = new AtomicInteger();
        inGroup.suspend();
        Disposable pending = inGroup.schedule(ranInGroup::incrementAndGet);

        g.dispose();
        assertTrue(g.isDisposed(), "group reports disposed");
        assertTrue(inGroup.isDisposed(), "the group's workers are disposed with it");
        assertTrue(pending.isDisposed(), "the pending task of a disposed group's worker is disposed");
        assertFalse(s.isDisposed(), "the parent scheduler keeps running");
        Runnable noop = () -> { };
        assertThrows(RejectedExecutionException.class, () -> g.schedule(noop));
        assertThrows(RejectedExecutionException.class, () -> inGroup.schedule(noop));
        assertThrows(RejectedExecutionException.class, () -> g.createWorker().schedule(noop));

        CountDownLatch ran = new CountDownLatch(2);
        outside.schedule(ran::countDown);
        s.schedule(ran::countDown);
        await(ran, LONG, "workers outside the disposed group still run");
        sleepMillis(100);
        assertEquals(0, ranInGroup.get(), "a task of a disposed group ran");
    }

    // ------------------------------------------------------------------------------------------
    // disposal
    // ------------------------------------------------------------------------------------------

    @Test
    void schedulerRejectsAfterDispose() {
        ActorScheduler s = newScheduler(2);
        ActorWorker before = s.createWorker();
        ActorGroup group = s.group("g", 1);
        assertFalse(s.isDisposed());
        s.dispose();
        assertTrue(s.isDisposed());
        Runnable noop = () -> { };
        assertThrows(RejectedExecutionException.class, () -> s.schedule(noop));
        assertThrows(RejectedExecutionException.class, () -> s.schedule(noop, 1, TimeUnit.MILLISECONDS));
        assertThrows(RejectedExecutionException.class, () -> s.schedulePeriodically(noop, 1, 1, TimeUnit.MILLISECONDS));
        assertThrows(RejectedExecutionException.class, () -> before.schedule(noop));
        assertThrows(RejectedExecutionException.class, () -> group.schedule(noop));
        // a worker created after dispose either cannot be created or rejects its first task
        assertThrows(RejectedExecutionException.class, () -> s.createWorker().schedule(noop));
        s.dispose(); // idempotent
        assertTrue(s.isDisposed());
    }

    @Test
    void disposeStopsAllThreads() {
        ActorScheduler s = newScheduler(2);
        CountDownLatch ran = new CountDownLatch(2);
        s.schedule(ran::countDown);
        s.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
        await(ran, LONG, "tasks run");
        s.dispose();
        awaitNoThreadsOf(s.name(), Duration.ofSeconds(10));
    }

    @Test
    void disposeGracefullyIsLazy() {
        ActorScheduler s = newScheduler(2);
        var mono = s.disposeGracefully();
        assertFalse(s.isDisposed(), "disposeGracefully() must do nothing until subscribed");
        CountDownLatch ran = new CountDownLatch(1);
        s.schedule(ran::countDown);
        await(ran, LONG, "scheduler still works before the Mono is subscribed");
        assertTimeoutPreemptively(Duration.ofSeconds(40), () -> mono.block(Duration.ofSeconds(30)));
        assertTrue(s.isDisposed());
    }

    @Test
    void disposeGracefullyFinishesQueuedTasksThenStopsThreads() {
        ActorScheduler s = newScheduler(2);
        AtomicInteger ran = new AtomicInteger();
        ActorWorker w = s.createWorker();
        // half on one worker (one queue, 50 ms of sleeps), half spread over the scheduler
        for (int i = 0; i < 100; i++) {
            Runnable task = () -> {
                sleepMillis(1);
                ran.incrementAndGet();
            };
            if (i % 2 == 0) {
                s.schedule(task);
            } else {
                w.schedule(task);
            }
        }
        assertTimeoutPreemptively(Duration.ofSeconds(40), () -> s.disposeGracefully().block(Duration.ofSeconds(30)));
        assertEquals(100, ran.get(), "queued tasks completed before graceful disposal finished");
        assertTrue(s.isDisposed());
        awaitNoThreadsOf(s.name(), Duration.ofSeconds(5));
    }

    @Test
    void disposeGracefullyRejectsNewTasksOnceStarted() throws Exception {
        ActorScheduler s = newScheduler(2);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        // the first task holds a carrier until the graceful disposal has begun
        s.schedule(() -> {
            TestSupport.awaitQuietly(gate, LONG);
            ran.incrementAndGet();
        });
        for (int i = 0; i < 20; i++) {
            s.schedule(ran::incrementAndGet);
        }
        CompletableFuture<Void> disposal = s.disposeGracefully().toFuture();
        assertThrows(RejectedExecutionException.class, () -> s.schedule(() -> { }),
                "a scheduler shutting down rejects new tasks");
        gate.countDown();
        disposal.get(30, TimeUnit.SECONDS);
        assertEquals(21, ran.get(), "tasks queued before the graceful disposal all ran");
        awaitNoThreadsOf(s.name(), Duration.ofSeconds(5));
    }

    @Test
    void initAfterDisposeThrows() {
        ActorScheduler s = newScheduler(1);
        s.init(); // already started: harmless
        CountDownLatch ran = new CountDownLatch(1);
        s.schedule(ran::countDown);
        await(ran, LONG, "task runs after a redundant init()");
        s.dispose();
        assertThrows(IllegalStateException.class, s::init);
    }

    // ------------------------------------------------------------------------------------------
    // threads, hooks, failures
    // ------------------------------------------------------------------------------------------

    private static void assertCarrierThread(Thread t, String schedulerName) {
        assertNotNull(t);
        assertTrue(Pattern.matches(Pattern.quote(schedulerName) + "-(comp-)?\\d+", t.getName()),
                () -> "task ran on '" + t.getName() + "', expected a carrier of '" + schedulerName + "'");
        assertInstanceOf(NonBlocking.class, t, "carrier threads implement reactor's NonBlocking marker");
        assertTrue(t.isDaemon(), "carrier threads are daemons");
    }

    @Test
    void threadsAreNamedAfterTheSchedulerAndAreNonBlocking() {
        ActorScheduler s = newScheduler(2);
        List<Thread> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Boolean> nonBlocking = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch ran = new CountDownLatch(4);
        Runnable probe = () -> {
            threads.add(Thread.currentThread());
            nonBlocking.add(Schedulers.isInNonBlockingThread());
            ran.countDown();
        };
        s.schedule(probe);
        s.createWorker().schedule(probe);
        s.schedule(probe, 5, TimeUnit.MILLISECONDS);
        s.group("named", 1).createWorker().schedule(probe, 5, TimeUnit.MILLISECONDS);
        await(ran, LONG, "probes run");
        for (Thread t : threads) {
            assertCarrierThread(t, s.name());
        }
        assertFalse(nonBlocking.contains(Boolean.FALSE), "Schedulers.isInNonBlockingThread() inside tasks");
    }

    @Test
    void onScheduleHookDecoratesEveryTask() {
        String key = uniqueName("contract-hook");
        ThreadLocal<Boolean> insideHook = ThreadLocal.withInitial(() -> false);
        AtomicInteger decorations = new AtomicInteger();
        Schedulers.onScheduleHook(key, task -> {
            decorations.incrementAndGet();
            return () -> {
                insideHook.set(true);
                try {
                    task.run();
                } finally {
                    insideHook.set(false);
                }
            };
        });
        try {
            ActorScheduler s = newScheduler(2);
            ActorWorker w = s.createWorker();
            ActorGroup g = s.group("hooked", 1);
            AtomicInteger undecorated = new AtomicInteger();
            AtomicInteger immediateAndDelayed = new AtomicInteger();
            AtomicInteger periodicRuns = new AtomicInteger();
            Runnable once = () -> {
                if (!insideHook.get()) {
                    undecorated.incrementAndGet();
                }
                immediateAndDelayed.incrementAndGet();
            };
            Runnable periodic = () -> {
                if (!insideHook.get()) {
                    undecorated.incrementAndGet();
                }
                periodicRuns.incrementAndGet();
            };
            int before = decorations.get();
            s.schedule(once);
            s.schedule(once, 5, TimeUnit.MILLISECONDS);
            w.schedule(once);
            w.schedule(once, 5, TimeUnit.MILLISECONDS);
            g.schedule(once);
            g.createWorker().schedule(once);
            Disposable p1 = s.schedulePeriodically(periodic, 1, 5, TimeUnit.MILLISECONDS);
            Disposable p2 = w.schedulePeriodically(periodic, 1, 5, TimeUnit.MILLISECONDS);
            await(LONG, () -> immediateAndDelayed.get() == 6 && periodicRuns.get() >= 6,
                    () -> "tasks ran: " + immediateAndDelayed.get() + " once, " + periodicRuns.get() + " periodic");
            p1.dispose();
            p2.dispose();
            assertEquals(0, undecorated.get(), "tasks that ran outside the onSchedule decoration");
            assertTrue(decorations.get() - before >= 8, "the hook was applied to each scheduled task");
        } finally {
            Schedulers.resetOnScheduleHook(key);
        }
    }

    @Test
    void failingTaskKillsNeitherItsThreadNorOtherActorsAndIsCounted() {
        ActorScheduler s = newScheduler(1);
        ActorWorker failing = s.createWorker();
        ActorWorker other = s.createWorker();
        AtomicReference<Thread> before = new AtomicReference<>();
        AtomicReference<Thread> after = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(3);

        failing.schedule(() -> before.set(Thread.currentThread()));
        failing.schedule(() -> {
            throw new IllegalStateException("expected test failure: task throws on purpose");
        });
        failing.schedule(() -> {
            after.set(Thread.currentThread());
            done.countDown();
        });
        other.schedule(done::countDown);
        s.schedule(done::countDown);
        await(done, LONG, "the failing worker's next task and other actors still run");

        assertSame(before.get(), after.get(), "the single carrier survived the failing task");
        assertTrue(after.get().isAlive());
        assertFalse(failing.isDisposed(), "a failing task does not dispose its worker");
        await(Duration.ofSeconds(5), () -> s.stats().failedTasks() == 1,
                () -> "failedTasks counts the failure: " + s.stats());

        CountDownLatch again = new CountDownLatch(1);
        failing.schedule(again::countDown);
        await(again, LONG, "the worker keeps accepting and running tasks");
    }

    // ------------------------------------------------------------------------------------------
    // Scannable, now(), stats
    // ------------------------------------------------------------------------------------------

    /** Bad input first, also on a disposed group, as on its scheduler, its workers and Reactor's schedulers. */
    @Test
    void aNullUnitIsANullPointerExceptionAlsoOnADisposedGroup() {
        ActorScheduler s = newScheduler(2);
        ActorGroup g = s.group("null-unit", 1);
        g.dispose();
        assertThrows(NullPointerException.class, () -> g.schedule(() -> { }, 1, null));
        assertThrows(NullPointerException.class, () -> g.schedulePeriodically(() -> { }, 1, 1, null));
        assertThrows(RejectedExecutionException.class, () -> g.schedule(() -> { }, 1, TimeUnit.MILLISECONDS));
    }

    @Test
    void scannableAttributes() {
        ActorScheduler s = newScheduler(2);
        Scannable scannable = Scannable.from(s);
        assertTrue(scannable.isScanAvailable());
        // Reactor's conventions: NAME reads like parallel(2,"x"), CAPACITY is the thread count
        assertEquals("actor(2,\"" + s.name() + "\")", scannable.scan(Scannable.Attr.NAME));
        assertEquals(s.toString(), scannable.scan(Scannable.Attr.NAME));
        assertEquals(Boolean.FALSE, scannable.scan(Scannable.Attr.TERMINATED));
        assertEquals(2, scannable.scan(Scannable.Attr.CAPACITY), "scheduler CAPACITY");

        ActorWorker w = s.createWorker();
        Scannable worker = Scannable.from(w);
        Scannable parent = worker.scan(Scannable.Attr.PARENT);
        assertTrue(parent == s || parent == s.defaultGroup(),
                () -> "worker's PARENT is the scheduler or its default group, was " + parent);
        assertEquals(1, worker.scan(Scannable.Attr.CAPACITY), "worker CAPACITY: one task at a time");

        // name() is also Scannable#name(): the plain name (documented), where Reactor's answer their NAME
        assertEquals(s.name(), scannable.name());

        ActorGroup g = s.group("scanned", 2);
        assertEquals("actor(2,\"" + s.name() + "\").group(\"scanned\",2)", Scannable.from(g).scan(Scannable.Attr.NAME));
        assertEquals("scanned", Scannable.from(g).name());
        assertEquals(2, Scannable.from(g).scan(Scannable.Attr.CAPACITY), "group CAPACITY");
        Scannable groupWorkerParent = Scannable.from(g.createWorker()).scan(Scannable.Attr.PARENT);
        assertTrue(groupWorkerParent == g || groupWorkerParent == s,
                () -> "group worker's PARENT is its group or the scheduler, was " + groupWorkerParent);

        w.suspend();
        for (int i = 0; i < 5; i++) {
            w.schedule(() -> { });
        }
        assertEquals(5, worker.scan(Scannable.Attr.BUFFERED), "BUFFERED on a suspended worker");
        assertEquals(5, w.pendingTasks());
        w.resume();
        await(LONG, () -> w.pendingTasks() == 0, "queued tasks drain after resume");
        assertEquals(0, worker.scan(Scannable.Attr.BUFFERED));

        w.dispose();
        assertTrue(Boolean.TRUE.equals(worker.scan(Scannable.Attr.TERMINATED))
                        || Boolean.TRUE.equals(worker.scan(Scannable.Attr.CANCELLED)),
                "a disposed worker scans as TERMINATED or CANCELLED");

        s.dispose();
        assertEquals(Boolean.TRUE, scannable.scan(Scannable.Attr.TERMINATED));
    }

    @Test
    void nowStatsAndAccessors() {
        String name = uniqueName("contract-acc");
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(name).threads(3));
        assertEquals(name, s.name());
        assertEquals(3, s.threads());
        long now = s.now(TimeUnit.MILLISECONDS);
        assertTrue(Math.abs(now - System.currentTimeMillis()) < 10_000, "now() is wall-clock time in the unit");
        SchedulerStats stats = s.stats();
        assertEquals(name, stats.name());
        assertEquals(3, stats.threads());
        assertEquals(0, stats.failedTasks());
        assertEquals(0, stats.suspendedActors());
        assertNotNull(stats.groups());
        assertEquals("default", s.defaultGroup().name());
        assertEquals(1, s.defaultGroup().weight());
        assertSame(s, s.defaultGroup().scheduler());

        CountDownLatch ran = new CountDownLatch(10);
        for (int i = 0; i < 10; i++) {
            s.schedule(ran::countDown);
        }
        await(ran, LONG, "tasks run");
        await(Duration.ofSeconds(5), () -> s.stats().tasksRun() >= 10, () -> "tasksRun counts: " + s.stats());
    }
}
