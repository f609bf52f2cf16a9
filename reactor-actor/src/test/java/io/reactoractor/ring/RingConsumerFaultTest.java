package io.reactoractor.ring;

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
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Hooks;
import reactor.test.StepVerifier;

/**
 * Faults a ring consumer must survive without an endless loop: a JVM-fatal error in the handler fails
 * the ring whatever its policy (the event is never handled again), and a subscriber whose
 * {@code onNext} throws (rule 2.13 broken) is treated as having cancelled; its events are not handled
 * twice and the ring goes on for everyone else.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RingConsumerFaultTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-consumer-fault").threads(2).build();

    @AfterEach
    void tearDown() {
        Hooks.resetOnErrorDropped();
        scheduler.dispose();
    }

    @Test
    void aJvmFatalErrorInTheHandlerFailsTheRingOnceWhateverThePolicy() {
        for (RingErrorPolicy policy : List.of(RingErrorPolicy.stop(), RingErrorPolicy.skip(),
                RingErrorPolicy.retry(3, Duration.ofMillis(1)))) {
            RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).errorPolicy(policy).build();
            AtomicInteger calls = new AtomicInteger();
            RingConsumer<Integer, Integer> c = ring.publishedConsumer("fatal", (e, s, eob) -> {
                if (e == 2) {
                    calls.incrementAndGet();
                    throw new StackOverflowError("fatal in the handler");
                }
                return e;
            });
            ring.handleEventsWith(c);
            ring.start();
            for (int i = 0; i < 4; i++) {
                assertTrue(ring.tryPublish(i));
            }
            StepVerifier.create(c)
                    .expectNext(0, 1)
                    .expectErrorSatisfies(e -> assertTrue(e instanceof StackOverflowError, e.toString()))
                    .verify(Duration.ofSeconds(20));
            assertEquals(1, calls.get(), policy + ": the failing event was handled once");
        }
    }

    @Test
    void aSubscriberWhoseOnNextThrowsIsCancelledAndNoEventIsHandledTwice() throws InterruptedException {
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        Hooks.onErrorDropped(dropped::add);
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        List<Integer> handled = new CopyOnWriteArrayList<>();
        RingConsumer<Integer, Integer> bad = ring.publishedConsumer("bad", (e, s, eob) -> {
            handled.add(e);
            return e;
        });
        RingConsumer<Integer, Integer> good = ring.publishedConsumer("good", (e, s, eob) -> e);
        ring.handleEventsWith(bad, good);
        ring.start();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        bad.subscribe(new Subscriber<Integer>() {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(Integer v) {
                seen.add(v);
                if (v == 3) {
                    throw new IllegalStateException("subscriber broke rule 2.13");
                }
            }

            @Override
            public void onError(Throwable t) {
                seen.add(-1);
            }

            @Override
            public void onComplete() {
                seen.add(-2);
            }
        });
        CountDownLatch goodDone = new CountDownLatch(1);
        AtomicInteger goodCount = new AtomicInteger();
        good.subscribe(new Subscriber<Integer>() {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(Integer v) {
                goodCount.incrementAndGet();
            }

            @Override
            public void onError(Throwable t) {
                goodDone.countDown();
            }

            @Override
            public void onComplete() {
                goodDone.countDown();
            }
        });
        for (int i = 0; i < 20; i++) {
            ring.publish(i).block(Duration.ofSeconds(10));
        }
        ring.complete();
        assertTrue(goodDone.await(20, TimeUnit.SECONDS), "the other consumer goes on and completes");
        assertEquals(20, goodCount.get());
        assertEquals(List.of(0, 1, 2, 3), seen, "no signal after the throwing onNext");
        assertEquals(List.of(0, 1, 2, 3), handled.subList(0, 4), "events 0..3 handled once each");
        assertEquals(handled.size(), handled.stream().distinct().count(), "no event handled twice: " + handled);
        assertEquals(1, dropped.size(), "the subscriber's error is reported: " + dropped);
    }

    /**
     * RingBuffer's doc: "STOP stops the ring at once (upstream cancelled, every consumer signals onError ...)"; the
     * state table: "handler failure under STOP, or ring failed | terminated: onError(failure), nothing more handled".
     * A consumer inside a batch when a sibling fails stops after the event in hand. It used to handle and emit the
     * rest of its batch first (a probe: 3 to 138 more events, some the failing consumer never reached).
     */
    @Test
    void aConsumerInsideABatchStopsAfterTheEventInHandWhenASiblingFails() throws InterruptedException {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(1024)
                .errorPolicy(RingErrorPolicy.STOP).build();
        CountDownLatch busyAt21 = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger busyHandled = new AtomicInteger();
        RingConsumer<Integer, Integer> busy = ring.publishedConsumer("busy", (e, s, eob) -> {
            busyHandled.incrementAndGet();
            if (e == 21) {
                busyAt21.countDown();
                await(release); // inside the batch that began at event 1 (the first batch takes 64 events)
            }
            return e;
        });
        RingConsumer<Integer, Void> failing = ring.consumer("failing", (e, s, eob) -> {
            if (e == 50) {
                await(busyAt21);
                throw new IllegalStateException("the sibling fails");
            }
            return null;
        });
        ring.handleEventsWith(busy, failing);
        ring.start();
        for (int i = 1; i <= 700; i++) {
            assertTrue(ring.tryPublish(i)); // all published before busy's subscriber asks: one big first batch
        }
        Recorder<Integer> rec = new Recorder<>();
        busy.subscribe(rec);
        rec.subscription.request(Long.MAX_VALUE);
        assertTrue(busyAt21.await(20, TimeUnit.SECONDS), "busy reached event 21");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (ring.failure() == null && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertTrue(ring.failure() != null, "the ring failed");
        release.countDown();
        assertEquals("the sibling fails", rec.awaitError(Duration.ofSeconds(20)).getMessage());
        assertEquals(21, busyHandled.get(), "nothing handled after the event in hand");
        assertEquals(21, rec.values.size(), "the event in hand is emitted, nothing after it");
    }

    /** Rule 3.7: a cancel after the terminal signal is a no-op: the consumer still reports TERMINATED, as publishOn does. */
    @Test
    void aCancelAfterCompletionLeavesTheConsumerTerminated() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.handleEventsWith(c);
        ring.start();
        Recorder<Integer> rec = new Recorder<>();
        c.subscribe(rec);
        rec.subscription.request(Long.MAX_VALUE);
        assertTrue(ring.tryPublish(1));
        ring.complete();
        assertTrue(rec.awaitTerminal(Duration.ofSeconds(20)) && rec.completed, "completed");
        reactor.core.Scannable scan = reactor.core.Scannable.from(rec.subscription);
        assertEquals(Boolean.TRUE, scan.scanUnsafe(reactor.core.Scannable.Attr.TERMINATED));
        rec.subscription.cancel();
        assertEquals(Boolean.TRUE, scan.scanUnsafe(reactor.core.Scannable.Attr.TERMINATED), "still terminated");
        assertEquals(Boolean.TRUE, reactor.core.Scannable.from(c).scanUnsafe(reactor.core.Scannable.Attr.TERMINATED));
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(20, TimeUnit.SECONDS), "latch opened");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
