package io.reactoractor.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import io.reactoractor.SchedulerHold;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * While its scheduler closes gracefully a ring refuses new events (RingBuffer's class doc, "Graceful disposal"),
 * as the closing scheduler refuses new tasks: without that, a producer that never pauses kept the consumers, and
 * so the disposal, running for good.
 */
class RingGracefulDisposalTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-graceful").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    @Test
    void aNeverPausingUpstreamGetsNoNewDemandWhileClosingAndEveryEventItSentIsHandled() throws Exception {
        RingBuffer<Long> ring = RingBuffer.<Long>builder(scheduler).size(64).build();
        AtomicLong handled = new AtomicLong();
        RingConsumer<Long, Long> c = ring.publishedConsumer("c", (e, seq, eob) -> {
            handled.incrementAndGet();
            return e;
        });
        ring.handleEventsWith(c);
        ring.start();
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        Flux.from(c).subscribe(x -> { }, e -> {
            error.set(e);
            ended.countDown();
        }, ended::countDown);
        AtomicLong emitted = new AtomicLong();
        // each request answered at once on the requesting thread (the ring's drain, run as consumers advance)
        Flux.<Long, Long>generate(() -> 0L, (n, sink) -> {
            sink.next(n);
            return n + 1;
        }).doOnNext(x -> emitted.incrementAndGet()).hide().subscribe(ring);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (handled.get() < 1_000) {
            assertTrue(System.nanoTime() < deadline, "traffic never flowed");
            Thread.onSpinWait();
        }

        scheduler.disposeGracefully().block(Duration.ofSeconds(30)); // never ended before the change

        assertTrue(ended.await(10, TimeUnit.SECONDS));
        assertInstanceOf(RejectedExecutionException.class, error.get());
        assertEquals(emitted.get(), handled.get(), "every event the upstream sent was handled before the end");
    }

    @Test
    void anActorFedByAConsumerDrainsTheEventsTheRingHeld() throws Exception {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(128).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, seq, eob) -> e);
        ring.handleEventsWith(c);
        ring.start();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        io.reactoractor.actor.Actor<Integer, Integer> slow = io.reactoractor.actor.Actor.<Integer, Integer>builder(
                scheduler).capacity(8).behaviour((m, ctx) -> {
                    if (m == 0) {
                        entered.countDown();
                        try {
                            gate.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    ctx.emit(m);
                    return true;
                }).build();
        List<Integer> got = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        Flux.from(slow).subscribe(got::add, e -> {
            error.set(e);
            ended.countDown();
        }, ended::countDown);
        Flux.from(c).subscribe(slow);
        for (int i = 0; i < 100; i++) {
            assertTrue(ring.tryPublish(i));
        }
        assertTrue(entered.await(10, TimeUnit.SECONDS));

        CompletableFuture<Void> closed = scheduler.disposeGracefully().toFuture();
        gate.countDown();

        closed.orTimeout(30, TimeUnit.SECONDS).join();
        assertTrue(ended.await(10, TimeUnit.SECONDS));
        assertEquals(100, got.size(), "the events the ring held went on through the actor");
        assertInstanceOf(RejectedExecutionException.class, error.get());
    }

    @Test
    void tryPublishAndPublishAreRefusedWhileClosingAndEarlierEventsAreHandled() throws Exception {
        CountDownLatch release = SchedulerHold.holdOpen(scheduler); // keeps the disposal open until released
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, seq, eob) -> e);
        ring.handleEventsWith(c);
        ring.start();
        List<Integer> got = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        Flux.from(c).subscribe(got::add, e -> {
            error.set(e);
            ended.countDown();
        }, ended::countDown);
        assertTrue(ring.tryPublish(1));
        assertEquals(1L, ring.publish(2).block(Duration.ofSeconds(10)), "the second event's sequence");

        CompletableFuture<Void> closed = scheduler.disposeGracefully().toFuture();

        assertFalse(ring.tryPublish(3), "a new event while the scheduler closes is refused");
        assertThrows(RejectedExecutionException.class, () -> ring.publish(4).block(Duration.ofSeconds(10)));
        assertFalse(ring.isClosed(), "refusing is not closing: the consumers still drain");
        release.countDown();
        closed.orTimeout(10, TimeUnit.SECONDS).join();
        assertTrue(ended.await(10, TimeUnit.SECONDS));
        assertEquals(List.of(1, 2), got);
        assertInstanceOf(RejectedExecutionException.class, error.get());
    }
}
