package io.reactoractor;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;
import reactor.test.util.TestLogger;
import reactor.util.Loggers;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.sleepMillis;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where Reactor's own schedulers ({@code Schedulers.parallel()}, {@code single()}, their workers)
 * define a behaviour beyond the {@code Scheduler} interface, an {@link ActorScheduler} behaves the same:
 * a fixed-rate task survives its own errors, errors are logged like Reactor's, zero delays keep FIFO
 * order, a disposed running task reports it at once, a graceful disposal always completes, and the
 * default group cannot be disposed apart from its scheduler.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReactorSchedulerParityTest {

    private final TestSupport.Resources resources = new TestSupport.Resources();

    @AfterEach
    void disposeAll() {
        Schedulers.resetOnHandleError();
        Loggers.resetLoggerFactory();
        resources.disposeAll();
    }

    private ActorScheduler newScheduler() {
        return resources.scheduler(ActorScheduler.builder().name(uniqueName("parity")).threads(2));
    }

    // ------------------------------------------------------------------ errors of periodic tasks

    @Test
    void aFixedRateTaskKeepsItsScheduleAfterThrowingAndEachErrorIsReported() {
        ActorScheduler s = newScheduler();
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Schedulers.onHandleError((t, e) -> reported.add(e));
        for (PeriodicScheduling where : List.<PeriodicScheduling>of(s::schedulePeriodically,
                s.createWorker()::schedulePeriodically, s.group("g", 1)::schedulePeriodically)) {
            reported.clear();
            AtomicInteger runs = new AtomicInteger();
            Disposable d = where.schedule(() -> {
                if (runs.incrementAndGet() % 2 == 1) {
                    throw new IllegalStateException("run " + runs.get());
                }
            }, 1, 2, TimeUnit.MILLISECONDS);
            // Reactor's PeriodicWorkerTask catches the error and its scheduleAtFixedRate goes on
            await(LONG, () -> runs.get() >= 5, () -> "runs after errors: " + runs.get());
            d.dispose();
            await(LONG, () -> reported.size() >= 3, () -> "errors reported through the hook: " + reported);
            assertTrue(reported.stream().allMatch(e -> e instanceof IllegalStateException), reported::toString);
        }
    }

    @Test
    void aFixedRateTaskStopsWhenTheReportOfItsErrorThrowsAsOnReactorsParallelScheduler() {
        ActorScheduler s = newScheduler();
        reactor.core.scheduler.Scheduler reactors = Schedulers.newParallel(uniqueName("peer"), 1);
        try {
            AtomicInteger hookCalls = new AtomicInteger();
            Schedulers.onHandleError((t, e) -> {
                hookCalls.incrementAndGet();
                throw new IllegalStateException("the hook fails");
            });
            // Reactor's executor sees the run fail when its error handling throws, and stops the schedule
            AtomicInteger peerRuns = new AtomicInteger();
            Disposable peer = reactors.schedulePeriodically(() -> {
                peerRuns.incrementAndGet();
                throw new IllegalArgumentException("task");
            }, 0, 2, TimeUnit.MILLISECONDS);
            for (PeriodicScheduling where : List.<PeriodicScheduling>of(s::schedulePeriodically,
                    s.createWorker()::schedulePeriodically, s.group("g", 1)::schedulePeriodically)) {
                AtomicInteger runs = new AtomicInteger();
                where.schedule(() -> {
                    runs.incrementAndGet();
                    throw new IllegalArgumentException("task");
                }, 0, 2, TimeUnit.MILLISECONDS);
                await(LONG, () -> runs.get() >= 1, () -> "first run");
                sleepMillis(60);
                assertEquals(1, runs.get(), "no run after the failed report");
            }
            assertEquals(1, peerRuns.get(), "Reactor's periodic task ran once");
            peer.dispose();
            // the scheduler goes on: later tasks run (the failed report is an internal error, counted)
            CountDownLatch later = new CountDownLatch(1);
            s.schedule(later::countDown);
            await(LONG, () -> later.getCount() == 0, () -> "a later task ran");
            assertTrue(hookCalls.get() >= 4, () -> "hook calls: " + hookCalls.get());
        } finally {
            reactors.dispose();
        }
    }

    @Test
    void aPeriodZeroTaskStopsAfterThrowingAsReactorsInstantPeriodicTask() {
        ActorScheduler s = newScheduler();
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Schedulers.onHandleError((t, e) -> reported.add(e));
        AtomicInteger runs = new AtomicInteger();
        Disposable d = s.createWorker().schedulePeriodically(() -> {
            if (runs.incrementAndGet() == 3) {
                throw new IllegalStateException("third run");
            }
        }, 0, 0, TimeUnit.MILLISECONDS);
        await(LONG, () -> reported.size() == 1, () -> "the error reported: " + reported);
        sleepMillis(50);
        assertEquals(3, runs.get(), "no run after the error");
        // Reactor's InstantPeriodicWorkerTask stops too but keeps answering isDisposed() false (it answers true
        // only once dispose() was called); a task that will never run again reports disposed here, which
        // Disposable's contract allows ("true only when there's a guarantee the task is disposed")
        assertTrue(d.isDisposed(), "the task is done");
    }

    @Test
    void carriersLogUncaughtTaskErrorsThroughReactorsSchedulersLogger() {
        TestLogger log = new TestLogger(false);
        Loggers.useCustomLoggers(name -> log);
        try {
            ActorScheduler s = newScheduler();
            s.schedule(() -> {
                throw new IllegalStateException("boom-for-the-log");
            });
            await(LONG, () -> log.getErrContent().contains("boom-for-the-log"),
                    () -> "logged as Reactor's thread factories do: " + log.getErrContent());
            assertTrue(log.getErrContent().contains("failed with an uncaught exception"), log.getErrContent());
        } finally {
            Loggers.resetLoggerFactory(); // loggers created by later tests of this JVM log as before
        }
    }

    // ------------------------------------------------------------------ zero delays

    @Test
    void zeroAndNegativeDelaysKeepFifoOrderWithImmediateTasks() {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        List<String> order = new CopyOnWriteArrayList<>();
        w.suspend();
        w.schedule(() -> order.add("a"), 0, TimeUnit.MILLISECONDS);
        w.schedule(() -> order.add("b"));
        w.schedule(() -> order.add("c"), -5, TimeUnit.SECONDS);
        Disposable p = w.schedulePeriodically(() -> order.add("p"), 0, 1, TimeUnit.HOURS);
        w.schedule(() -> order.add("d"));
        // all five are in the mailbox now, in submission order (Reactor submits a delay <= 0 at once)
        assertEquals(5, w.pendingTasks(), "queued while suspended, none waits in the timer");
        w.resume();
        await(LONG, () -> order.size() == 5, order::toString);
        assertEquals(List.of("a", "b", "c", "p", "d"), order);
        assertFalse(p.isDisposed(), "the periodic task waits for its next run");
        p.dispose();
    }

    @Test
    void aHugePeriodNeitherOverflowsNorDisturbsTheTimer() {
        ActorScheduler s = newScheduler();
        AtomicInteger runs = new AtomicInteger();
        Disposable p = s.schedulePeriodically(runs::incrementAndGet, 0, Long.MAX_VALUE, TimeUnit.NANOSECONDS);
        Disposable q = s.schedulePeriodically(runs::incrementAndGet, 1_000_000, Long.MAX_VALUE, TimeUnit.NANOSECONDS);
        await(LONG, () -> runs.get() == 2, () -> "first runs: " + runs.get());
        CountDownLatch later = new CountDownLatch(1);
        s.schedule(later::countDown, 5, TimeUnit.MILLISECONDS);
        await(later, LONG, "a short delay still fires after the huge periods were re-armed");
        sleepMillis(20);
        assertEquals(2, runs.get(), "no second run");
        assertFalse(p.isDisposed(), "still armed for its next run (an overflowed deadline ended it)");
        assertFalse(q.isDisposed(), "still armed for its next run (an overflowed deadline ended it)");
        p.dispose();
        q.dispose();
    }

    // ------------------------------------------------------------------ disposal

    @Test
    void disposingARunningTaskReportsItDisposedAtOnce() throws InterruptedException {
        ActorScheduler s = newScheduler();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Disposable d = s.createWorker().schedule(() -> {
            started.countDown();
            TestSupport.awaitQuietly(release, LONG);
        });
        await(started, LONG, "the task runs");
        assertFalse(d.isDisposed(), "running, not disposed");
        d.dispose();
        assertTrue(d.isDisposed(), "disposed at once, as Reactor's WorkerTask (the run is not interrupted)");
        release.countDown();
        sleepMillis(20);
        assertTrue(d.isDisposed(), "still disposed after the run ended");
    }

    @Test
    void aGroupsGracefulDisposalCompletesWhenTheSchedulerIsDisposedFirst() {
        ActorScheduler s = newScheduler();
        ActorGroup g = s.group("closing", 1);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        g.schedule(() -> {
            started.countDown();
            TestSupport.awaitQuietly(release, LONG);
        });
        await(started, LONG, "the group's task runs");
        AtomicReference<String> outcome = new AtomicReference<>();
        g.disposeGracefully().subscribe(null, e -> outcome.set("error " + e), () -> outcome.set("complete"));
        s.dispose();
        release.countDown();
        await(LONG, () -> outcome.get() != null, "the group's graceful Mono terminates after the forced dispose");
        assertEquals("complete", outcome.get());
        assertTrue(g.isDisposed());
    }

    @Test
    void disposingTheDefaultGroupDisposesItsScheduler() {
        ActorScheduler s = newScheduler();
        s.defaultGroup().dispose();
        assertTrue(s.isDisposed(), "a scheduler whose default group is gone cannot accept work: it is disposed");
        assertThrows(RejectedExecutionException.class, () -> s.schedule(() -> { }));
    }

    @Test
    void disposingTheDefaultGroupGracefullyDisposesItsSchedulerGracefully() {
        ActorScheduler s = newScheduler();
        AtomicInteger ran = new AtomicInteger();
        s.schedule(() -> {
            sleepMillis(20);
            ran.incrementAndGet();
        });
        s.defaultGroup().disposeGracefully().block(LONG);
        assertEquals(1, ran.get(), "queued work finished first");
        assertTrue(s.isDisposed());
        assertTrue(s.defaultGroup().isDisposed());
    }

    @Test
    void aPeriodicTaskAlreadyDueIsNotRunOnceMoreByAGracefulShutdown() {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        // a task that holds the scheduler until w is resumed: a graceful shutdown does not wait for the work
        // of a suspended worker, so without it the shutdown could end (and cancel the one-shot task) when the
        // test thread is descheduled between the subscription and the resume below
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch resumed = new CountDownLatch(1);
        s.createWorker().schedule(() -> {
            holding.countDown();
            TestSupport.awaitQuietly(resumed, LONG);
        });
        await(holding, LONG, "the holding task runs");
        AtomicInteger runs = new AtomicInteger();
        w.suspend();
        Disposable p = w.schedulePeriodically(runs::incrementAndGet, 0, 1, TimeUnit.MILLISECONDS);
        CountDownLatch oneShot = new CountDownLatch(1);
        w.schedule(oneShot::countDown);
        s.disposeGracefully().subscribe();
        w.resume();
        resumed.countDown();
        await(oneShot, LONG, "a queued one-shot task still runs in a graceful shutdown");
        sleepMillis(20);
        assertEquals(0, runs.get(), "periodic tasks are cancelled by a graceful shutdown, also a due one");
        assertTrue(p.isDisposed());
    }

    @FunctionalInterface
    private interface PeriodicScheduling {
        Disposable schedule(Runnable task, long initialDelay, long period, TimeUnit unit);
    }
}
