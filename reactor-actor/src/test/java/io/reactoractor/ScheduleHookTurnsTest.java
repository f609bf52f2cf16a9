package io.reactoractor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.reactoractor.actor.Actor;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * README, "Hooks": Schedulers.onScheduleHook decorates what runs on the carriers. Reactor decorates each
 * scheduling of an operator's drain (publishOn + map runs the map inside the hook); here each turn of an
 * actor, a ring consumer and a pull consumer group, as the fair publishOn's turns already were. User code
 * in a behaviour, a ring handler or consume()'s onNext ran outside the hook.
 */
class ScheduleHookTurnsTest {

    private static final ThreadLocal<String> IN_HOOK = new ThreadLocal<>();
    private static final String KEY = "schedule-hook-turns-test";

    private final ActorScheduler scheduler = ActorScheduler.builder().name("hook-turns").threads(2).build();

    @AfterEach
    void tearDown() {
        Schedulers.resetOnScheduleHook(KEY);
        scheduler.dispose();
    }

    private static void installHook() {
        Schedulers.onScheduleHook(KEY, r -> () -> {
            IN_HOOK.set("hooked");
            try {
                r.run();
            } finally {
                IN_HOOK.remove();
            }
        });
    }

    @Test
    void reactorsPublishOnRunsUserCodeInsideTheHook() {
        installHook();
        reactor.core.scheduler.Scheduler single = Schedulers.newSingle("hook-peer");
        try {
            assertEquals("hooked", Flux.just(1).publishOn(single).map(x -> String.valueOf(IN_HOOK.get()))
                    .blockLast(Duration.ofSeconds(10)));
        } finally {
            single.dispose();
        }
    }

    @Test
    void anActorsBehaviourRunsInsideTheHook() {
        installHook();
        Actor<Integer, String> a = Actor.<Integer, String>builder(scheduler).behaviour((m, ctx) -> {
            ctx.emit(String.valueOf(IN_HOOK.get()));
            return true;
        }).build();
        a.tell(1);
        a.complete();
        assertEquals("hooked", Flux.from(a).blockLast(Duration.ofSeconds(10)));
    }

    @Test
    void aRingHandlerRunsInsideTheHook() {
        installHook();
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RingConsumer<Integer, String> c = ring.publishedConsumer("c", (e, s, eob) -> String.valueOf(IN_HOOK.get()));
        ring.handleEventsWith(c);
        ring.start();
        ring.tryPublish(1);
        assertEquals("hooked", Flux.from(c).blockFirst(Duration.ofSeconds(10)));
        ring.complete();
    }

    @Test
    void aPullConsumersOnNextRunsInsideTheHook() {
        installHook();
        PullConsumer consumer = PullConsumer.builder(scheduler).build();
        try {
            consumer.append("s", "m".getBytes(StandardCharsets.UTF_8));
            assertEquals("hooked", consumer.consume("s", "g").map(d -> String.valueOf(IN_HOOK.get()))
                    .blockFirst(Duration.ofSeconds(10)));
        } finally {
            consumer.dispose();
        }
    }

    /**
     * A worker's task is decorated once, when scheduled (as Reactor's workers do), and its turn is not
     * decorated again: the carrier decorates the turns of the other actor kinds only (Turn, "Reactor's
     * schedule hook"). A hook that nests (wraps what is already wrapped) must see one level.
     */
    @Test
    void aWorkersTaskIsDecoratedOnceNotAgainPerTurn() throws InterruptedException {
        java.util.concurrent.atomic.AtomicInteger decorations = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger maxDepth = new java.util.concurrent.atomic.AtomicInteger();
        ThreadLocal<Integer> depth = ThreadLocal.withInitial(() -> 0);
        Schedulers.onScheduleHook(KEY, r -> {
            decorations.incrementAndGet();
            return () -> {
                depth.set(depth.get() + 1);
                try {
                    r.run();
                } finally {
                    depth.set(depth.get() - 1);
                }
            };
        });
        ActorWorker w = scheduler.createWorker();
        java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(3);
        for (int i = 0; i < 3; i++) {
            w.schedule(() -> {
                maxDepth.accumulateAndGet(depth.get(), Math::max);
                ran.countDown();
            });
        }
        org.junit.jupiter.api.Assertions.assertTrue(ran.await(10, java.util.concurrent.TimeUnit.SECONDS));
        w.dispose();
        assertEquals(1, maxDepth.get(), "decoration levels around a worker's task");
        assertEquals(3, decorations.get(), "one decoration per scheduled task, none per turn");
    }
    /**
     * A hook that keeps failing on the carriers (it throws, returns null, or its Runnable does not run the
     * turn) backs the actor off, doubling from 1 ms to 1 s, instead of queuing it again at once: Reactor
     * reports such a failure once per scheduling, and the library used to re-run the turn thousands of times
     * a second, each failure reported and logged, one carrier spinning. Nothing is lost: once the hook works
     * again, the actor's messages are handled.
     */
    @Test
    void aHookThatKeepsFailingBacksTheActorOffAndLosesNothing() throws InterruptedException {
        for (String mode : java.util.List.of("throw", "null", "swallow")) {
            java.util.concurrent.atomic.AtomicBoolean broken = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.atomic.AtomicInteger failures = new java.util.concurrent.atomic.AtomicInteger();
            Schedulers.onScheduleHook(KEY, r -> {
                if (!broken.get() || !(Thread.currentThread() instanceof reactor.core.scheduler.NonBlocking)) {
                    return r;
                }
                failures.incrementAndGet();
                switch (mode) {
                    case "throw":
                        throw new IllegalStateException("test: the hook's backend is down");
                    case "null":
                        return null;
                    default:
                        return () -> { }; // never runs the turn
                }
            });
            java.util.List<Integer> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
            Actor<Integer, Void> a = Actor.<Integer, Void>builder(scheduler).capacity(8).behaviour((m, c) -> {
                handled.add(m);
                return true;
            }).build();
            Flux.from(a).subscribe(); // demand: an actor without a subscriber holds its messages
            long failedBefore = scheduler.stats().failedTasks();
            a.tell(1);
            Thread.sleep(500);
            int during = failures.get();
            // 1 + 2 + 4 + ... + 256 ms: about 9 attempts in 500 ms (and a few for a busy machine's timer)
            org.junit.jupiter.api.Assertions.assertTrue(during >= 2 && during <= 15, mode + ": " + during
                    + " attempts in 500 ms");
            org.junit.jupiter.api.Assertions.assertEquals(java.util.List.of(), handled);
            // each failure is reported, after the hook returned (a busy machine may hold a report back a while)
            long reportedBy = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (scheduler.stats().failedTasks() - failedBefore < during && System.nanoTime() < reportedBy) {
                Thread.sleep(5);
            }
            org.junit.jupiter.api.Assertions.assertTrue(scheduler.stats().failedTasks() - failedBefore >= during,
                    mode + ": each failure is reported: " + (scheduler.stats().failedTasks() - failedBefore) + " of " + during);
            broken.set(false);
            long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (handled.isEmpty() && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            assertEquals(java.util.List.of(1), handled, mode + ": the message waited, not lost");
            Schedulers.resetOnScheduleHook(KEY);
            a.complete();
            until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (!a.isTerminated() && System.nanoTime() < until) {
                Thread.sleep(5); // its last turns before the next mode's hook counts them
            }
        }
    }
}
