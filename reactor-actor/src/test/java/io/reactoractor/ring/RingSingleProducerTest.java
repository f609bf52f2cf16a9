package io.reactoractor.ring;

import static io.reactoractor.ring.RingBufferTest.await;
import static io.reactoractor.ring.RingBufferTest.turnsSettle;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The single-producer mode ({@link RingBuffer.Builder#singleProducer()}): the producer-kind contract,
 * gating and demand as in the multi-producer ring, no lost wake-up, and the close racing the producer
 * (the final count is exactly the events published: a {@code tryPublish} that returned {@code true}
 * is always delivered). No timing assertion: bounded waits only detect hangs.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RingSingleProducerTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-sp-test").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    private RingBuffer.Builder<Integer> sp(int size) {
        return RingBuffer.<Integer>builder(scheduler).size(size).singleProducer();
    }

    @Test
    void theModeIsDeclaredAndVisible() {
        assertTrue(sp(4).build().isSingleProducer());
        assertFalse(RingBuffer.<Integer>builder(scheduler).build().isSingleProducer());
    }

    @Test
    void theImperativeMethodsAreRejectedOnceTheRingIsSubscribed() {
        RingBuffer<Integer> ring = sp(4).eventFactory(() -> 0).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Flux.<Integer>never().subscribe(ring);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ring.tryPublish(1));
        assertTrue(e.getMessage().contains("single-producer"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> ring.tryPublishEvent(x -> { }));
        StepVerifier.create(ring.publish(1)).expectError(IllegalStateException.class).verify(LONG);
        assertFalse(ring.isClosed(), "a rejected call does not close the ring");
        assertEquals(-1, ring.cursor());
        assertFalse(c.isTerminated());
    }

    @Test
    void anUpstreamAfterAnImperativeProducerIsCancelledAndClosesTheRingWithAnError() {
        RingBuffer<Integer> ring = sp(4).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        assertTrue(ring.tryPublish(1));
        AtomicBoolean cancelled = new AtomicBoolean();
        Flux.just(2, 3).doOnCancel(() -> cancelled.set(true)).subscribe(ring);
        assertTrue(cancelled.get(), "the second producer's subscription is cancelled");
        StepVerifier.create(c).expectNext(1)
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalStateException.class, e);
                    assertTrue(e.getMessage().contains("imperative producer"), e.getMessage());
                })
                .verify(LONG);
    }

    @Test
    void anUpstreamThatOverflowsItsDemandFailsTheRing() {
        RingBuffer<Integer> ring = sp(2).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        AtomicBoolean cancelled = new AtomicBoolean();
        Publisher<Integer> rogue = s -> {
            s.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                }

                @Override
                public void cancel() {
                    cancelled.set(true);
                }
            });
            for (int i = 0; i < 3; i++) {
                s.onNext(i);
            }
        };
        rogue.subscribe(ring);
        assertTrue(cancelled.get());
        StepVerifier.create(c).expectNext(0, 1)
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalStateException.class, e);
                    assertTrue(e.getMessage().contains("beyond the demand"), e.getMessage());
                })
                .verify(LONG);
    }

    @Test
    void onNextWithoutOnSubscribeFailsTheRing() {
        RingBuffer<Integer> ring = sp(4).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        ring.onNext(7);
        StepVerifier.create(c).expectError(IllegalStateException.class).verify(LONG);
    }

    @Test
    void aConsumerWithoutDemandGatesTheProducerAndTryPublishSaysFalse() {
        RingBuffer<Integer> ring = sp(4).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        for (int i = 0; i < 4; i++) {
            assertTrue(ring.tryPublish(i), "event " + i + " fits");
        }
        assertFalse(ring.tryPublish(4), "the ring is full: the slowest consumer has no demand");
        assertEquals(0, ring.remainingCapacity());
        assertEquals(3, ring.cursor());
        r.subscription.request(1);
        await(() -> ring.tryPublish(4), "one slot freed after request(1)");
        assertFalse(ring.tryPublish(5));
        r.subscription.request(Long.MAX_VALUE);
        await(() -> r.values.size() == 5, "the rest delivered");
        assertEquals(List.of(0, 1, 2, 3, 4), r.values);
    }

    @Test
    void monoPublishWaitsForSpaceAndTryPublishDoesNotOvertakeIt() {
        RingBuffer<Integer> ring = sp(2).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        assertEquals(0L, ring.publish(10).block(LONG));
        assertEquals(1L, ring.publish(11).block(LONG));
        AtomicLong seq = new AtomicLong(-1);
        ring.publish(12).subscribe(seq::set);
        assertEquals(-1, seq.get(), "must wait: the ring is full");
        assertFalse(ring.tryPublish(13), "a waiting publish goes first");
        r.subscription.request(1);
        // served by the drain on a consumer's carrier: the hand-over back to this thread is `waiters`
        await(() -> seq.get() == 2, "the waiting publish got sequence 2 once a slot was freed");
        r.subscription.request(1);
        await(() -> ring.tryPublish(13), "then tryPublish continues after it");
        r.subscription.request(10);
        await(() -> r.values.size() == 4, "all four delivered");
        assertEquals(List.of(10, 11, 12, 13), r.values);
    }

    @Test
    void anEventFactoryRingFillsItsSlotsInPlace() {
        RingBuffer<long[]> ring = RingBuffer.<long[]>builder(scheduler).size(4).singleProducer()
                .eventFactory(() -> new long[1]).build();
        List<Long> seen = new CopyOnWriteArrayList<>();
        ring.consumer("c", (e, s, eob) -> {
            seen.add(e[0]);
            return null;
        });
        ring.start();
        for (int i = 0; i < 20; i++) {
            final long v = i;
            await(() -> ring.tryPublishEvent(e -> e[0] = v), "event " + v + " fits");
        }
        await(() -> seen.size() == 20, "all delivered");
        for (int i = 0; i < 20; i++) {
            assertEquals(i, seen.get(i));
        }
    }

    @Test
    void theSubscriberSideRequestsExactlyTheFreeSpace() {
        RingBuffer<Integer> ring = sp(8).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        List<Long> requests = new CopyOnWriteArrayList<>();
        Flux.range(0, 100).doOnRequest(requests::add).subscribe(ring);
        assertEquals(List.of(8L), requests, "initial demand = the whole free ring");
        assertEquals(0, ring.remainingCapacity());
        assertEquals(7, ring.cursor(), "the burst was published when request(8) returned");
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        for (int i = 1; i <= 5; i++) {
            final int n = i;
            r.subscription.request(1);
            await(() -> r.values.size() == n, n + " delivered");
            await(() -> requests.stream().mapToLong(Long::longValue).sum() == 8 + n, "slot " + n + " re-requested");
            assertEquals(0, ring.remainingCapacity(), "demand never exceeds the free space");
        }
        r.subscription.request(Long.MAX_VALUE);
        assertTrue(r.awaitTerminal(LONG));
        assertTrue(r.completed);
        assertEquals(100, r.values.size());
        for (int i = 0; i < 100; i++) {
            assertEquals(i, r.values.get(i));
        }
    }

    @Test
    void anIdleConsumerParksAndIsWokenByTheNextEvent() {
        ActorGroup g = scheduler.group("ring-sp-idle", 1);
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(g).size(16).singleProducer().build();
        AtomicInteger handled = new AtomicInteger();
        RingConsumer<Integer, Void> a = ring.consumer("a", (e, s, eob) -> {
            handled.incrementAndGet();
            return null;
        });
        RingConsumer<Integer, Void> b = ring.consumer("b", (e, s, eob) -> null);
        ring.handleEventsWith(a).then(b);
        ring.start();
        for (int round = 1; round <= 5; round++) {
            final int expected = round;
            assertTrue(ring.tryPublish(round));
            await(() -> handled.get() == expected && b.sequence() == expected - 1, "round " + expected);
            assertTrue(turnsSettle(g), "an idle consumer runs no turn (it is parked, not polling): turns="
                    + g.turns());
        }
    }

    /**
     * 1 → 3 independent consumers (all roots, woken by the producer), a synchronous upstream (bursts)
     * and an asynchronous one, with random consumer pauses: each consumer sees every event once, in order.
     */
    @Test
    void oneToThreeDeliversEveryEventOnceInOrderToEachConsumer() {
        for (boolean async : new boolean[] {false, true}) {
            int events = 200_000;
            RingBuffer<Integer> ring = sp(16).build();
            AtomicReference<String> violation = new AtomicReference<>();
            List<long[]> next = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                long[] n = {0};
                next.add(n);
                SplittableRandom rnd = new SplittableRandom(i);
                String name = "c" + i;
                ring.consumer(name, (e, s, eob) -> {
                    if (e != s || s != n[0]) {
                        violation.compareAndSet(null, name + ": event " + e + " at " + s + ", expected " + n[0]);
                    }
                    n[0]++;
                    if (rnd.nextInt(500) == 0) {
                        Thread.yield();
                    }
                    return null;
                });
            }
            ring.start();
            Flux<Integer> source = Flux.range(0, events);
            (async ? source.subscribeOn(Schedulers.single()) : source).subscribe(ring);
            try {
                ring.whenTerminated().block(Duration.ofSeconds(120));
            } catch (IllegalStateException timeout) {
                fail("no completion (lost wake-up?): cursor=" + ring.cursor() + " consumers="
                        + ring.consumers().stream().map(RingConsumer::sequence).toList());
            }
            assertNull(violation.get());
            for (long[] n : next) {
                assertEquals(events, n[0]);
            }
        }
    }

    /**
     * complete() from another thread while the imperative producer publishes: every {@code tryPublish}
     * that returned {@code true} is delivered exactly once and in order, none that returned
     * {@code false} is, and the consumers then complete. Repeated with random close points.
     */
    @Test
    void aCloseRacingTheImperativeProducerNeverLosesAnAcceptedEvent() throws Exception {
        SplittableRandom rnd = new SplittableRandom(42);
        for (int round = 0; round < 200; round++) {
            RingBuffer<Integer> ring = sp(8).build();
            AtomicReference<String> violation = new AtomicReference<>();
            AtomicLong delivered = new AtomicLong();
            ring.consumer("c", (e, s, eob) -> {
                if (e != s || s != delivered.get()) {
                    violation.compareAndSet(null, "event " + e + " at " + s + ", expected " + delivered.get());
                }
                delivered.incrementAndGet();
                return null;
            });
            ring.start();
            int closeAfter = rnd.nextInt(2_000);
            CountDownLatch go = new CountDownLatch(1);
            AtomicLong accepted = new AtomicLong();
            Thread producer = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                int i = 0;
                while (!ring.isClosed()) {
                    if (ring.tryPublish(i)) {
                        i++;
                        accepted.set(i);
                    } else {
                        Thread.yield();
                    }
                }
            });
            producer.start();
            go.countDown();
            while (accepted.get() < closeAfter && producer.isAlive()) {
                Thread.onSpinWait();
            }
            ring.complete();
            producer.join(LONG.toMillis());
            assertFalse(producer.isAlive(), "the producer saw the close");
            try {
                ring.whenTerminated().block(LONG);
            } catch (IllegalStateException timeout) {
                fail("round " + round + ": no completion; cursor=" + ring.cursor() + " delivered=" + delivered);
            }
            assertNull(violation.get(), "round " + round);
            assertEquals(accepted.get(), delivered.get(), "round " + round + ": accepted events delivered");
            assertEquals(accepted.get() - 1, ring.cursor(), "round " + round + ": the final count");
        }
    }

    /**
     * complete() from another thread while an asynchronous upstream emits: the consumers see a gap-free
     * prefix of the events, exactly the ones published before the close (the cursor), then complete.
     */
    @Test
    void aCloseRacingTheUpstreamDeliversAGapFreePrefix() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int round = 0; round < 100; round++) {
            RingBuffer<Integer> ring = sp(16).build();
            AtomicReference<String> violation = new AtomicReference<>();
            AtomicLong delivered = new AtomicLong();
            ring.consumer("c", (e, s, eob) -> {
                if (e != s || s != delivered.get()) {
                    violation.compareAndSet(null, "event " + e + " at " + s + ", expected " + delivered.get());
                }
                delivered.incrementAndGet();
                return null;
            });
            ring.start();
            Flux.range(0, 1_000_000).subscribeOn(Schedulers.single()).subscribe(ring);
            long closeAt = rnd.nextInt(5_000);
            while (ring.cursor() + 1 < closeAt && !ring.isClosed()) {
                Thread.onSpinWait();
            }
            ring.complete();
            try {
                ring.whenTerminated().block(LONG);
            } catch (IllegalStateException timeout) {
                fail("round " + round + ": no completion; cursor=" + ring.cursor() + " delivered=" + delivered);
            }
            assertNull(violation.get(), "round " + round);
            assertEquals(ring.cursor() + 1, delivered.get(), "round " + round + ": every published event delivered");
        }
    }
}
