package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

/** Issue 10, items 5 (send racing termination) and 6 (user resume vs the actor's own suspensions). */
class ActorReliabilityTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-reliability").threads(2).build();

    @AfterEach
    void tearDown() {
        assertTrue(ActorTestSupport.disposeBounded(scheduler));
    }

    /** A downstream that requests only what the test asks for. */
    static final class Downstream extends BaseSubscriber<Integer> {
        final AtomicInteger received = new AtomicInteger();
        final CountDownLatch subscribed = new CountDownLatch(1);

        @Override
        protected void hookOnSubscribe(Subscription s) {
            subscribed.countDown();
        }

        @Override
        protected void hookOnNext(Integer v) {
            received.incrementAndGet();
        }
    }

    @Test
    void everySendCompletesEvenWhenItRacesTheActorsTermination() throws InterruptedException {
        int rounds = 2_000;
        int sendsPerRound = 300;
        AtomicLong settled = new AtomicLong();
        long issued = 0;
        for (int round = 0; round < rounds; round++) {
            Actor<Integer, Integer> actor = Actor.identity(scheduler, 1);
            Downstream d = new Downstream(); // never requests: the mailbox fills, sends wait
            actor.subscribe(d);
            CountDownLatch go = new CountDownLatch(1);
            Thread canceller = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                d.dispose(); // cancels: the actor terminates and fails its waiting sends
            });
            canceller.start();
            for (int i = 0; i < sendsPerRound; i++) {
                if (i == sendsPerRound / 3) {
                    go.countDown();
                }
                actor.send(i).subscribe(v -> { }, e -> settled.incrementAndGet(), settled::incrementAndGet);
                issued++;
            }
            canceller.join();
        }
        long expected = issued;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (settled.get() < expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(expected, settled.get(), "send() Monos that never completed: " + (expected - settled.get()));
    }

    @Test
    void resumeDoesNotLiftTheBackpressureSuspension() throws InterruptedException {
        Actor<Integer, Integer> actor = Actor.identity(scheduler, 16);
        Downstream d = new Downstream();
        actor.subscribe(d);
        assertTrue(d.subscribed.await(10, TimeUnit.SECONDS));
        for (int i = 0; i < 10; i++) {
            assertTrue(actor.tell(i));
        }
        io.reactoractor.TestHooks.await(actor::isSuspended, "suspended for lack of demand");
        long turns = actor.group().turns();

        assertFalse(actor.resume(), "no user suspension to lift");
        Thread.sleep(100);
        assertTrue(actor.isSuspended(), "still waiting for demand");
        assertTrue(actor.group().turns() - turns < 10,
                "the actor spun: " + (actor.group().turns() - turns) + " turns without demand");

        d.request(10);
        io.reactoractor.TestHooks.await(() -> d.received.get() == 10, "demand resumes it");
    }

    @Test
    void resumeDoesNotCutAnErrorPolicysBackOffShort() throws InterruptedException {
        AtomicInteger attempts = new AtomicInteger();
        Actor<Integer, Integer> actor = Actor.<Integer, Integer>builder(scheduler)
                .capacity(4)
                .errorPolicy(ErrorPolicy.retry(5, Duration.ofSeconds(30)))
                .behaviour((m, ctx) -> {
                    attempts.incrementAndGet();
                    throw new IllegalStateException("fails");
                })
                .build();
        Downstream d = new Downstream();
        actor.subscribe(d);
        d.request(Long.MAX_VALUE);
        assertTrue(actor.tell(1));
        io.reactoractor.TestHooks.await(() -> attempts.get() == 1 && actor.isSuspended(), "backing off");

        assertFalse(actor.resume(), "no user suspension to lift");
        Thread.sleep(100);
        assertEquals(1, attempts.get(), "the back-off of 30 s was cut short");
        assertTrue(actor.isSuspended());
    }

    @Test
    void resumeLiftsExactlyTheUserSuspensions() {
        Actor<Integer, Integer> actor = Actor.identity(scheduler, 4);
        actor.suspend();
        actor.suspend();
        assertTrue(actor.resume());
        assertTrue(actor.isSuspended(), "re-entrant: one suspension left");
        assertTrue(actor.resume());
        assertFalse(actor.resume(), "none left");
    }
}
