package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * No internal thread (carriers, the timer, the hog monitor that runs on it) dies from a Throwable, even
 * one that makes the error reporting throw again (what an {@code OutOfMemoryError} does to logging).
 */
class InternalThreadFaultTest {

    /**
     * An error whose every use by a logger or handler throws another such error: reporting it fails
     * each time, like logging under an {@code OutOfMemoryError}.
     */
    static final class HostileError extends Error {
        HostileError() {
            super(null, null, false, false);
        }

        @Override
        public String getMessage() {
            throw new HostileError();
        }

        @Override
        public String toString() {
            throw new HostileError();
        }
    }

    private final ActorScheduler scheduler = ActorScheduler.builder().name("faults").threads(2)
            .hogThreshold(Duration.ofMillis(50)).build();
    private final List<Throwable> hooked = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
        Schedulers.resetOnHandleError("fault-test");
    }

    private SchedulerEngine engine() {
        return io.reactoractor.TestHooks.engine(scheduler);
    }

    private void assertStillServing() {
        // tasks run on both carriers and timers still fire
        for (int i = 0; i < 20; i++) {
            assertEquals(0L, Mono.delay(Duration.ofMillis(1), scheduler).block(Duration.ofSeconds(30)));
        }
        CountDownLatch both = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < 2; i++) {
            scheduler.createWorker().schedule(() -> {
                both.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        try {
            assertTrue(both.await(30, TimeUnit.SECONDS), "two carriers run tasks at once");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            release.countDown();
        }
    }

    @Test
    void carriersSurviveTasksWhoseErrorsCannotBeReported() {
        for (int i = 0; i < 10; i++) {
            scheduler.schedule(() -> {
                throw new HostileError();
            });
            scheduler.schedule(() -> {
                throw new OutOfMemoryError("injected");
            });
        }
        io.reactoractor.TestHooks.await(() -> engine().failedTasks() == 20, "20 failed tasks counted");
        assertStillServing();
        assertTrue(scheduler.stats().internalErrors() > 0, "failed reports are counted");
    }

    @Test
    void theTimerThreadSurvivesAnEntryWhoseErrorCannotBeReported() {
        AtomicInteger fired = new AtomicInteger();
        for (int i = 0; i < 5; i++) {
            engine().scheduleTimer(new TimerEntry() {
                @Override
                protected void fire() {
                    fired.incrementAndGet();
                    throw new HostileError();
                }

                @Override
                protected boolean awaitedOnShutdown() {
                    return false;
                }
            }, System.nanoTime());
        }
        io.reactoractor.TestHooks.await(() -> fired.get() == 5, "5 entries fired");
        assertStillServing();
        assertTrue(scheduler.stats().internalErrors() >= 5, "internal errors " + scheduler.stats().internalErrors());
    }

    @Test
    void theHogMonitorSurvivesAnErrorInItsCheck() {
        AtomicInteger checks = new AtomicInteger();
        engine().hogMonitor().beforeCheck = () -> {
            if (checks.incrementAndGet() <= 3) {
                throw new HostileError();
            }
        };
        // the monitor checks while a carrier runs tasks (an idle pool disarms it): a worker keeps one busy
        java.util.concurrent.atomic.AtomicBoolean busy = new java.util.concurrent.atomic.AtomicBoolean(true);
        io.reactoractor.ActorWorker w = scheduler.createWorker();
        Runnable[] spin = new Runnable[1];
        spin[0] = () -> {
            if (busy.get()) {
                w.schedule(spin[0]);
            }
        };
        w.schedule(spin[0]);
        try {
            io.reactoractor.TestHooks.await(() -> checks.get() > 5, "the monitor keeps checking");
        } finally {
            busy.set(false);
        }
        // and it still detects a hog
        CountDownLatch release = new CountDownLatch(1);
        scheduler.schedule(() -> {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            io.reactoractor.TestHooks.await(() -> scheduler.stats().hogsDetected() > 0, "hog detected");
        } finally {
            release.countDown();
        }
        assertStillServing();
    }

    /**
     * An idle pool (every carrier parked) stops the monitor's tick, so the timer thread sleeps (it woke every
     * interval, 80-940 times a second, on a scheduler with nothing to do); the first carrier to take work re-arms
     * it, and a hog is still detected.
     */
    @Test
    void theHogMonitorSleepsWhileThePoolIsIdleAndWakesWithWork() throws Exception {
        AtomicInteger checks = new AtomicInteger();
        engine().hogMonitor().beforeCheck = checks::incrementAndGet;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int quiet = 0;
        while (quiet < 3) { // three 200 ms windows without a check (the interval is 12.5 ms here)
            assertTrue(System.nanoTime() < deadline, "the monitor kept checking an idle pool: " + checks.get());
            int before = checks.get();
            Thread.sleep(200);
            quiet = checks.get() == before ? quiet + 1 : 0;
        }
        int idleChecks = checks.get();
        CountDownLatch release = new CountDownLatch(1);
        scheduler.schedule(() -> {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            io.reactoractor.TestHooks.await(() -> scheduler.stats().hogsDetected() > 0, "hog detected");
            assertTrue(checks.get() > idleChecks, "checking again");
        } finally {
            release.countDown();
        }
        assertStillServing();
    }

    @Test
    void aFailedTaskGoesThroughReactorsOnHandleErrorHook() {
        Schedulers.onHandleError("fault-test", (thread, error) -> hooked.add(error));
        IllegalStateException boom = new IllegalStateException("boom");
        scheduler.schedule(() -> {
            throw boom;
        });
        io.reactoractor.TestHooks.await(() -> hooked.contains(boom), "the hook saw the task's error");
        assertEquals(1, engine().failedTasks());
    }
}
