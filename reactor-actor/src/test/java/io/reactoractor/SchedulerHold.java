package io.reactoractor;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import reactor.core.scheduler.Scheduler;

/** Test support shared by packages: keeps a scheduler's graceful disposal open while a test looks at it closing. */
public final class SchedulerHold {

    private SchedulerHold() {
    }

    /**
     * Runs a task that blocks one carrier of {@code scheduler} until the returned latch is released (at most
     * 30 s): a graceful disposal cannot end before, so the test sees the scheduler closing.
     *
     * @return the latch that releases the task
     */
    public static CountDownLatch holdOpen(Scheduler scheduler) throws InterruptedException {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        scheduler.schedule(() -> {
            running.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(running.await(10, TimeUnit.SECONDS), "the holding task never started");
        return release;
    }
}
