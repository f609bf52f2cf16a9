package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * A group's graceful disposal waits for its actors' timed work as the scheduler's does ({@code ActorGroup}'s and
 * {@code ActorScheduler}'s {@code disposeGracefully} Javadoc): a timed suspension (an error policy's retry
 * back-off, {@code ActorContext.resumeAfter}) and a task of {@code ActorContext.schedule} are one-shot delayed
 * tasks, so the messages queued behind them are processed before the group closes. The group's shutdown counted
 * a suspended actor as done: it closed within a few milliseconds, discarding the queued messages (a black-box
 * probe, 10 of 10 for each kind), while the scheduler's shutdown delivered them.
 */
class GroupGracefulTimedWorkTest {

    private static final Duration DELAY = Duration.ofMillis(30);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("group-graceful-timed").threads(2).build();

    @AfterEach
    void tearDown() {
        assertTrue(ActorTestSupport.disposeBounded(scheduler));
    }

    @Test
    void aRetryBackOffAndTheMessagesBehindItRunBeforeTheGroupCloses() throws InterruptedException {
        AtomicBoolean failOnce = new AtomicBoolean(true);
        assertDeliveredBeforeClosing(ErrorPolicy.retry(1, DELAY), (m, ctx) -> {
            if (m == 0 && failOnce.getAndSet(false)) {
                throw new IllegalStateException("fails once: the retry backs off");
            }
            ctx.emit(m);
            return true;
        }, List.of(0, 1));
    }

    @Test
    void aResumeAfterAndTheMessagesBehindItRunBeforeTheGroupCloses() throws InterruptedException {
        AtomicBoolean pauseOnce = new AtomicBoolean(true);
        assertDeliveredBeforeClosing(ErrorPolicy.stop(), (m, ctx) -> {
            if (m == 0 && pauseOnce.getAndSet(false)) {
                ctx.resumeAfter(DELAY);
                return false; // message 0 again after the pause
            }
            ctx.emit(m);
            return true;
        }, List.of(0, 1));
    }

    @Test
    void aScheduledTaskRunsBeforeTheGroupCloses() throws InterruptedException {
        assertDeliveredBeforeClosing(ErrorPolicy.stop(), (m, ctx) -> {
            ctx.emit(m);
            if (m == 1) {
                ctx.schedule(DELAY, () -> ctx.emit(100));
            }
            return true;
        }, List.of(0, 1, 100));
    }

    private void assertDeliveredBeforeClosing(ErrorPolicy policy, Behaviour<Integer, Integer> behaviour,
            List<Integer> expected) throws InterruptedException {
        boolean timerTask = expected.size() > 2; // a scheduled task: the actor is idle, not suspended, meanwhile
        ActorGroup group = scheduler.group("closing", 1);
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(group).capacity(8).errorPolicy(policy)
                .behaviour(behaviour).build();
        List<Object> discarded = new CopyOnWriteArrayList<>();
        ActorTestSupport.ValueRecorder<Integer> rec = new ActorTestSupport.ValueRecorder<>();
        Flux.from(a).doOnDiscard(Object.class, discarded::add).subscribe(rec);
        assertTrue(a.tell(0));
        assertTrue(a.tell(1));
        // the actor is now waiting for its timer (the back-off, the pause, or the scheduled task)
        long waitFrom = System.nanoTime();
        while (!(timerTask ? a.processedMessages() == 2 : a.isSuspended())) {
            assertTrue(System.nanoTime() - waitFrom < TimeUnit.SECONDS.toNanos(10), "the actor never armed its timer");
            Thread.onSpinWait();
        }

        group.disposeGracefully().block(Duration.ofSeconds(10));

        assertEquals(expected, rec.received, "delivered before the group closed; discarded " + discarded);
        assertEquals(List.of(), discarded);
        assertTrue(rec.awaitTerminal(10), "the subscriber got no terminal signal");
        assertTrue(rec.error.get() instanceof RejectedExecutionException,
                "the group's end reaches the subscriber as Reactor's rejection: " + rec.error.get());
    }
}
