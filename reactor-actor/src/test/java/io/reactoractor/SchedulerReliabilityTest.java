package io.reactoractor;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.micrometer.MicrometerActorMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/** Issue 10, items 2 (scheduler groups), 7, 8 and 9. */
class SchedulerReliabilityTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ActorScheduler scheduler = ActorScheduler.builder().name("reliability").threads(2)
            .metrics(MicrometerActorMetrics.of(registry)).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    // ------------------------------------------------------------------ item 9

    @Test
    void disposingAWorkerDisposesItsQueuedTasksAtOnce() throws InterruptedException {
        Scheduler.Worker w = scheduler.createWorker();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Disposable first = w.schedule(() -> {
            running.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Disposable queued = w.schedule(() -> { });
        Disposable delayed = w.schedule(() -> { }, 1, TimeUnit.HOURS);
        Disposable periodic = w.schedulePeriodically(() -> { }, 0, 1, TimeUnit.HOURS);
        assertTrue(running.await(30, TimeUnit.SECONDS));
        try {
            w.dispose();
            // Reactor's AbstractSchedulerTest.workerScheduleAndDispose: disposed at once, while the first still runs
            assertTrue(first.isDisposed(), "running task");
            assertTrue(queued.isDisposed(), "queued task");
            assertTrue(delayed.isDisposed(), "delayed task");
            assertTrue(periodic.isDisposed(), "periodic task");
        } finally {
            release.countDown();
        }
    }

    // ------------------------------------------------------------------ item 8

    @Test
    void periodicTasksDisposedRightAfterTheirFirstRunNeverStayArmed() throws InterruptedException {
        int tasks = 100_000;
        ConcurrentLinkedQueue<AtomicReference<Disposable>> ran = new ConcurrentLinkedQueue<>();
        AtomicInteger disposed = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        Thread disposer = new Thread(() -> {
            while (!stop.get() || !ran.isEmpty()) {
                AtomicReference<Disposable> r = ran.poll();
                if (r == null) {
                    Thread.onSpinWait();
                    continue;
                }
                Disposable d;
                while ((d = r.get()) == null) {
                    Thread.onSpinWait();
                }
                d.dispose(); // races the re-arm that follows the first run
                disposed.incrementAndGet();
            }
        });
        disposer.start();
        List<Scheduler.Worker> workers = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            workers.add(scheduler.createWorker());
        }
        for (int i = 0; i < tasks; i++) {
            AtomicReference<Disposable> self = new AtomicReference<>();
            AtomicBoolean first = new AtomicBoolean(true);
            self.set(workers.get(i % workers.size()).schedulePeriodically(() -> {
                if (first.compareAndSet(true, false)) {
                    ran.add(self);
                }
            }, 0, 1, TimeUnit.HOURS));
        }
        await(LONG.multipliedBy(3), () -> disposed.get() == tasks, () -> "disposed " + disposed.get());
        stop.set(true);
        disposer.join();
        await(LONG, () -> TestHooks.engine(scheduler).pendingTimers() == 0,
                () -> "timers still armed: " + TestHooks.engine(scheduler).pendingTimers());
    }

    // ------------------------------------------------------------------ item 7

    @Test
    void aGroupsGracefulDisposeRunsEveryAcceptedTask() {
        ActorGroup group = scheduler.group("graceful", 1);
        int tasks = 20_000;
        AtomicInteger ran = new AtomicInteger();
        List<Scheduler.Worker> workers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            workers.add(group.createWorker());
        }
        AtomicInteger periodicRuns = new AtomicInteger();
        group.schedulePeriodically(periodicRuns::incrementAndGet, 1, 1, TimeUnit.HOURS);
        for (int i = 0; i < tasks; i++) {
            Runnable slow = () -> {
                long end = System.nanoTime() + 2_000;
                while (System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
                ran.incrementAndGet();
            };
            if (i % 2 == 0) {
                group.schedule(slow);
            } else {
                workers.get(i % workers.size()).schedule(slow);
            }
        }
        group.schedule(ran::incrementAndGet, 20, TimeUnit.MILLISECONDS); // a one-shot delayed task still runs
        group.disposeGracefully().block(LONG.multipliedBy(3));
        assertEquals(tasks + 1, ran.get(), "every accepted task ran");
        assertEquals(0, periodicRuns.get(), "periodic tasks are cancelled");
        assertTrue(group.isDisposed());
        assertThrows(RejectedExecutionException.class, () -> group.schedule(() -> { }));
        assertThrows(RejectedExecutionException.class, () -> workers.get(0).schedule(() -> { }));
        assertFalse(scheduler.isDisposed(), "the scheduler keeps running");
    }

    @Test
    void aGroupsGracefulDisposeRejectsNewTasksAtOnce() {
        ActorGroup group = scheduler.group("closing", 1);
        Scheduler.Worker w = group.createWorker();
        CountDownLatch release = new CountDownLatch(1);
        w.schedule(() -> {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        var done = group.disposeGracefully().toFuture();
        try {
            assertThrows(RejectedExecutionException.class, () -> w.schedule(() -> { }));
            assertFalse(done.isDone(), "waits for the running task");
        } finally {
            release.countDown();
        }
        done.orTimeout(30, TimeUnit.SECONDS).join();
    }

    // ------------------------------------------------------------------ item 2 (scheduler groups)

    @Test
    void disposedGroupsLeaveEveryRegistryAndTheirNamesCanBeReused() {
        int meterBaseline = registry.getMeters().size();
        int groupBaseline = scheduler.groups().size();
        for (int i = 0; i < 10_000; i++) {
            ActorGroup g = scheduler.group("tenant-" + i, 1);
            g.schedule(() -> { });
            g.dispose();
        }
        assertEquals(groupBaseline, scheduler.groups().size(), "groups()");
        assertEquals(groupBaseline, scheduler.stats().groups().size(), "stats().groups()");
        assertEquals(meterBaseline, registry.getMeters().size(), "meters");

        ActorGroup first = scheduler.group("reused", 1);
        first.dispose();
        ActorGroup second = scheduler.group("reused", 2); // a new group: even another weight is fine
        assertNotSame(first, second);
        assertFalse(second.isDisposed());
        CountDownLatch ran = new CountDownLatch(1);
        second.schedule(ran::countDown);
        TestSupport.await(ran, LONG, "a task on the reused name runs");
    }
}
