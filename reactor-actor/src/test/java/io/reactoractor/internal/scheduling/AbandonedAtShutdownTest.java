package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ActorWorker;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * An actor that is <em>queued</em> (ready, waiting for a carrier) when the scheduler is disposed gets
 * its terminal drain too, like an idle one: its pending task is cancelled and leaves the mailbox, instead
 * of staying there (with everything it references) forever.
 * (The run queue holds such an actor's {@code SCHEDULED} bit for a carrier that never comes.)
 */
class AbandonedAtShutdownTest {

    @Test
    void aTaskQueuedBehindARunningOneIsCancelledWhenTheSchedulerIsDisposed() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("abandoned").threads(1).build();
        ActorWorker busy = s.createWorker();
        ActorWorker queued = s.createWorker();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        busy.schedule(() -> {
            running.countDown();
            try {
                release.await(10, TimeUnit.SECONDS); // holds the only carrier
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(running.await(10, TimeUnit.SECONDS), "the carrier runs the busy task");
        AtomicBoolean ran = new AtomicBoolean();
        Disposable pending = queued.schedule(() -> ran.set(true)); // ready, queued behind the busy one
        s.dispose();
        release.countDown();
        s.disposeGracefully().timeout(Duration.ofSeconds(10)).block(); // completes once terminated
        assertFalse(ran.get(), "nothing runs after dispose()");
        assertTrue(pending.isDisposed(), "a disposed worker's task reports disposed at once (Reactor's contract)");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (queued.pendingTasks() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        // drained, not just reported: the mailbox no longer holds the task (and what it references)
        assertTrue(queued.pendingTasks() == 0, "the queued actor was drained: " + queued.pendingTasks()
                + " task(s) left in its mailbox");
    }
}
