package io.reactoractor.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Behaviour of the ring: graph order, gating, backpressure, publish paths, terminal signals, parking. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RingBufferTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-test").threads(2).build();

    @AfterEach
    void tearDown() {
        reactor.core.publisher.Hooks.resetOnOperatorError();
        scheduler.dispose();
    }

    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not reached within " + LONG + ": " + what);
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
        }
    }

    @Test
    void diamondDeliversEveryEventToTheJoinAfterBothBranches() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        RingConsumer<Integer, Void> a = ring.consumer("a", (e, s, eob) -> null);
        RingConsumer<Integer, Void> b = ring.consumer("b", (e, s, eob) -> null);
        List<String> violations = new CopyOnWriteArrayList<>();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> {
            if (a.sequence() < s || b.sequence() < s) {
                violations.add("c saw " + s + " before a=" + a.sequence() + " b=" + b.sequence());
            }
            return e * 10;
        });
        ring.handleEventsWith(a, b).then(c);
        ring.start();
        Flux.range(0, 1000).subscribeOn(Schedulers.single()).subscribe(ring);
        StepVerifier.create(c)
                .expectNextSequence(IntStream.range(0, 1000).map(i -> i * 10).boxed().collect(Collectors.toList()))
                .expectComplete()
                .verify(LONG);
        ring.whenTerminated().block(LONG);
        assertEquals(List.of(), violations);
        assertEquals(1000, a.processedEvents());
        assertEquals(1000, b.processedEvents());
        assertEquals(999, c.sequence());
        assertEquals(0, c.lag());
        assertEquals(List.of("a", "b"), c.dependencyNames());
    }

    @Test
    void aConsumerWithoutDemandGatesTheProducerAndTryPublishSaysFalse() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        for (int i = 0; i < 4; i++) {
            assertTrue(ring.tryPublish(i), "event " + i + " fits");
        }
        assertFalse(ring.tryPublish(4), "the ring is full: the slowest consumer has no demand");
        assertEquals(0, ring.remainingCapacity());
        assertEquals(4, c.lag());
        r.subscription.request(1);
        await(() -> ring.tryPublish(4), "one slot freed after request(1)");
        assertEquals(List.of(0), r.values);
        assertFalse(ring.tryPublish(5));
        r.subscription.request(Long.MAX_VALUE);
        await(() -> r.values.size() == 5, "the rest delivered");
        assertEquals(List.of(0, 1, 2, 3, 4), r.values);
    }

    @Test
    void monoPublishWaitsForSpaceWithoutAThreadAndTryPublishDoesNotOvertakeIt() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(2).build();
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
        await(() -> seq.get() == 2, "the waiting publish got sequence 2 once a slot was freed");
        r.subscription.request(10);
        await(() -> r.values.size() == 3, "all three delivered");
        assertEquals(List.of(10, 11, 12), r.values);
    }

    @Test
    void aCancelledWaitingPublishIsWithdrawn() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(1).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        assertTrue(ring.tryPublish(1));
        ring.publish(2).subscribe().dispose();
        Mono<Long> third = ring.publish(3);
        AtomicLong seq = new AtomicLong(-1);
        third.subscribe(seq::set);
        r.subscription.request(3);
        await(() -> seq.get() == 1, "the third event took sequence 1: the cancelled one was withdrawn");
        await(() -> r.values.size() == 2, "delivered");
        assertEquals(List.of(1, 3), r.values);
    }

    /** A mutable event for the event-factory test. */
    static final class Slot {
        long value;
    }

    @Test
    void anEventFactoryRingReusesItsSlotsAndFillsThemInPlace() {
        AtomicInteger created = new AtomicInteger();
        RingBuffer<Slot> ring = RingBuffer.<Slot>builder(scheduler).size(8).eventFactory(() -> {
            created.incrementAndGet();
            return new Slot();
        }).build();
        assertEquals(8, created.get(), "one event per slot, at build time");
        Set<Slot> seenObjects = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Long> values = new CopyOnWriteArrayList<>();
        RingConsumer<Slot, Void> a = ring.consumer("a", (e, s, eob) -> {
            seenObjects.add(e);
            values.add(e.value);
            return null;
        });
        ring.start();
        for (int i = 0; i < 100; i++) {
            final long v = i * 3L;
            await(() -> ring.tryPublishEvent(slot -> slot.value = v), "event " + v);
        }
        await(() -> a.sequence() == 99, "all handled");
        assertEquals(LongStream.range(0, 100).map(i -> i * 3).boxed().collect(Collectors.toList()), values);
        assertEquals(8, seenObjects.size(), "only the 8 pre-allocated events were used");
        assertEquals(8, created.get());
        // a translator that throws: the event is still published (no hole), the exception reaches the caller
        IllegalStateException boom = new IllegalStateException("translator failed");
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> ring.tryPublishEvent(slot -> {
                    slot.value = -1;
                    throw boom;
                }));
        assertSame(boom, thrown);
        await(() -> a.sequence() == 100, "the sequence claimed by the failing translator was published");
    }

    @Test
    void tryPublishEventNeedsAnEventFactory() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        ring.consumer("a", (e, s, eob) -> null);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> ring.tryPublishEvent(x -> { }));
        assertTrue(e.getMessage().contains("no event factory"), e.getMessage());
        assertThrows(NullPointerException.class, () -> ring.tryPublishEvent(null));
        assertThrows(NullPointerException.class,
                () -> RingBuffer.<Integer>builder(scheduler).eventFactory(null));
        assertThrows(NullPointerException.class,
                () -> RingBuffer.<Integer>builder(scheduler).size(2).eventFactory(() -> null).build());
    }

    @Test
    void theSubscriberSideRequestsExactlyTheFreeSpace() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        List<Long> requests = new CopyOnWriteArrayList<>();
        Flux.range(0, 100).doOnRequest(requests::add).subscribe(ring);
        // at most 6 outstanding at once (8 - 8/4: room kept for imperative producers while the upstream is quiet);
        // this synchronous upstream filled them inside the request, so the other 2 are asked for right after
        assertEquals(List.of(6L, 2L), requests, "initial demand = the whole free ring, in two requests");
        assertEquals(0, ring.remainingCapacity());
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        for (int i = 1; i <= 5; i++) {
            final int n = i;
            r.subscription.request(1);
            await(() -> r.values.size() == n, n + " delivered");
            // the upstream delivers synchronously: once nothing is outstanding, every freed slot is re-requested
            await(() -> requests.stream().mapToLong(Long::longValue).sum() == 8 + n, "slot " + n + " re-requested");
            assertEquals(0, ring.remainingCapacity(), "demand never exceeds the free space");
        }
        r.subscription.request(Long.MAX_VALUE);
        assertTrue(r.awaitTerminal(LONG));
        assertTrue(r.completed);
        assertEquals(100, r.values.size());
        long total = requests.stream().mapToLong(Long::longValue).sum();
        assertTrue(total >= 100, "demand covers the events: " + requests);
    }

    @Test
    void imperativeProducersFindRoomNextToAQuietUpstream() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        AtomicLong handled = new AtomicLong();
        ring.consumer("c", (e, s, eob) -> {
            handled.incrementAndGet();
            return null;
        });
        ring.start();
        reactor.core.publisher.Sinks.Many<Integer> hot =
                reactor.core.publisher.Sinks.many().multicast().directBestEffort();
        AtomicLong requested = new AtomicLong();
        hot.asFlux().doOnRequest(requested::addAndGet).subscribe(ring);
        await(() -> requested.get() > 0, "the upstream asked for events");
        assertEquals(6, requested.get(), "at most size - size/4 outstanding");
        assertEquals(2, ring.remainingCapacity(), "the rest stays free for the imperative producers");
        // the upstream says nothing: the imperative producers the multi-producer ring allows get the rest
        assertTrue(ring.tryPublish(1), "tryPublish next to a quiet upstream");
        assertEquals(1L, ring.publish(2).block(LONG), "publish next to a quiet upstream");
        await(() -> handled.get() == 2, "both handled");
        // the upstream's granted demand still fits whenever it speaks
        for (int i = 0; i < 6; i++) {
            hot.tryEmitNext(100 + i).orThrow();
        }
        await(() -> handled.get() == 8, "the upstream's events handled");
    }

    @Test
    void imperativeProducersFindRoomAfterAnUpstreamsBurst() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        AtomicLong handled = new AtomicLong();
        ring.consumer("c", (e, s, eob) -> {
            handled.incrementAndGet();
            return null;
        });
        ring.start();
        Flux.range(0, 100).concatWith(Flux.never()).subscribeOn(Schedulers.single()).subscribe(ring);
        await(() -> handled.get() == 100, "the burst handled");
        await(() -> ring.tryPublish(1), "a tryPublish accepted after the burst, the upstream still open");
        await(() -> handled.get() == 101, "the imperative event handled");
    }

    @Test
    void anUpstreamThatOverflowsItsDemandFailsTheRing() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(2).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Publisher<Integer> rogue = s -> {
            s.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                }

                @Override
                public void cancel() {
                }
            });
            for (int i = 0; i < 3; i++) {
                s.onNext(i);
            }
        };
        rogue.subscribe(ring); // granted 1 (a 2-slot multi-producer ring keeps one slot back while demand is out)
        StepVerifier.create(c).expectNext(0)
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalStateException.class, e);
                    assertTrue(e.getMessage().contains("beyond the demand"), e.getMessage());
                })
                .verify(LONG);
    }

    @Test
    void anUpstreamErrorArrivesAfterTheEventsPublishedBeforeIt() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(64).build();
        RingConsumer<Integer, Integer> a = ring.consumer("a", (e, s, eob) -> null);
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.handleEventsWith(a).then(c);
        ring.start();
        IllegalStateException boom = new IllegalStateException("boom");
        Flux.range(0, 10).concatWith(Mono.error(boom)).subscribe(ring);
        StepVerifier.create(c).expectNextCount(10).expectErrorMatches(e -> e == boom).verify(LONG);
        StepVerifier.create(ring.whenTerminated()).expectErrorMatches(e -> e == boom).verify(LONG);
        assertFalse(ring.tryPublish(1), "closed");
        StepVerifier.create(ring.publish(1)).expectError(IllegalStateException.class).verify(LONG);
    }

    @Test
    void stopPolicyStopsTheWholeRingOnAHandlerFailure() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RuntimeException boom = new RuntimeException("handler failed");
        RingConsumer<Integer, Integer> a = ring.consumer("a", (e, s, eob) -> {
            if (e == 5) {
                throw boom;
            }
            return null;
        });
        RingConsumer<Integer, Integer> b = ring.publishedConsumer("b", (e, s, eob) -> e);
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.handleEventsWith(a, b).then(c);
        ring.start();
        List<Boolean> cancelled = new CopyOnWriteArrayList<>();
        Flux.range(0, 1_000_000).doOnCancel(() -> cancelled.add(true)).subscribeOn(Schedulers.single())
                .subscribe(ring);
        // the failure stops the ring at once: c got a prefix of 0..4 (how much depends on timing), never 5
        StepVerifier.create(c).thenConsumeWhile(x -> x < 5).expectErrorMatches(e -> e == boom).verify(LONG);
        StepVerifier.create(b).thenConsumeWhile(x -> true).expectErrorMatches(e -> e == boom).verify(LONG);
        StepVerifier.create(ring.whenTerminated()).expectErrorMatches(e -> e == boom).verify(LONG);
        await(() -> !cancelled.isEmpty(), "upstream cancelled");
        assertEquals(4, a.sequence(), "a stopped before the failing event");
        assertFalse(ring.tryPublish(99));
    }

    @Test
    void skipPolicySkipsTheFailingEventAndDependentsStillSeeIt() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8)
                .errorPolicy(RingErrorPolicy.SKIP).build();
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", (e, s, eob) -> {
            if (e % 3 == 0) {
                throw new IllegalStateException("no multiples of 3");
            }
            return e;
        });
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.handleEventsWith(a).then(c);
        ring.start();
        Recorder<Integer> cs = new Recorder<>();
        c.subscribe(cs);
        cs.subscription.request(Long.MAX_VALUE); // c gates the ring: it must consume while a is collected
        Flux.range(0, 30).subscribe(ring);
        StepVerifier.create(Flux.from(a).collectList())
                .expectNext(IntStream.range(0, 30).filter(i -> i % 3 != 0).boxed().collect(Collectors.toList()))
                .expectComplete()
                .verify(LONG);
        assertTrue(cs.awaitTerminal(LONG));
        assertTrue(cs.completed);
        assertEquals(IntStream.range(0, 30).boxed().collect(Collectors.toList()), cs.values);
        assertEquals(10, a.skippedEvents());
        assertEquals(30, a.processedEvents());
    }

    @Test
    void cancellingADownstreamRemovesItsConsumerFromGatingAndFromItsDependentsBarrier() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
        RingConsumer<Integer, Integer> slow = ring.publishedConsumer("slow", (e, s, eob) -> e);
        RingConsumer<Integer, Integer> fast = ring.publishedConsumer("fast", (e, s, eob) -> e);
        RingConsumer<Integer, Integer> join = ring.publishedConsumer("join", (e, s, eob) -> e);
        ring.handleEventsWith(slow, fast).then(join);
        ring.start();
        Recorder<Integer> slowSub = new Recorder<>();
        slow.subscribe(slowSub);
        Recorder<Integer> joinSub = new Recorder<>();
        join.subscribe(joinSub);
        joinSub.subscription.request(Long.MAX_VALUE);
        Flux.from(fast).subscribe();
        for (int i = 0; i < 4; i++) {
            assertTrue(ring.tryPublish(i));
        }
        assertFalse(ring.tryPublish(4), "slow has no demand: it gates");
        assertEquals(List.of(), joinSub.values, "join waits for slow");
        slowSub.subscription.cancel();
        await(() -> slow.isTerminated(), "slow removed");
        // a cancelled consumer terminates first, then leaves the gating set (RingConsumer.runTurn): wait for both
        await(() -> slow.sequence() == Long.MAX_VALUE, "slow out of the gating set");
        assertEquals(Long.MAX_VALUE, slow.sequence());
        await(() -> joinSub.values.size() == 4, "join no longer waits for slow");
        for (int i = 4; i < 100; i++) {
            final int v = i;
            await(() -> ring.tryPublish(v), "event " + v);
        }
        ring.complete();
        assertTrue(joinSub.awaitTerminal(LONG));
        assertTrue(joinSub.completed);
        assertEquals(IntStream.range(0, 100).boxed().collect(Collectors.toList()), joinSub.values);
        StepVerifier.create(ring.whenTerminated()).verifyComplete();
    }

    @Test
    void whenTheLastConsumerLeavesTheRingCancelsItsUpstreamAndCloses() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        List<Boolean> cancelled = new CopyOnWriteArrayList<>();
        Flux.<Integer>never().doOnCancel(() -> cancelled.add(true)).subscribe(ring);
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        assertFalse(ring.isClosed());
        r.subscription.cancel();
        await(() -> !cancelled.isEmpty(), "upstream cancelled once nobody reads");
        assertTrue(ring.isClosed());
        assertFalse(ring.tryPublish(1));
        StepVerifier.create(ring.whenTerminated()).verifyComplete();
    }

    @Test
    void aPublishWaitingForSpaceFailsWhenTheLastConsumerCancelsInsteadOfLandingInAClosingRing() {
        for (int round = 0; round < 20; round++) {
            RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(2).build();
            RingConsumer<Integer, Integer> c = ring.publishedConsumer("c" + round, (e, s, eob) -> e);
            ring.start();
            Recorder<Integer> r = new Recorder<>(); // no demand: the consumer handles nothing, the ring fills
            c.subscribe(r);
            assertTrue(ring.tryPublish(0));
            assertTrue(ring.tryPublish(1));
            List<Object> outcome = new CopyOnWriteArrayList<>();
            ring.publish(2).subscribe(outcome::add, outcome::add);
            assertTrue(outcome.isEmpty(), "the ring is full: the publish waits");
            r.subscription.cancel();
            await(() -> !outcome.isEmpty(), "the waiting publish settles");
            // nobody is left to handle event 2: the publish fails, as the Javadoc promises for a closing ring
            assertInstanceOf(IllegalStateException.class, outcome.get(0), "round " + round + ": " + outcome);
            assertTrue(ring.isClosed());
            assertEquals(0, ring.remainingCapacity(), "a closed ring has no room");
            StepVerifier.create(ring.whenTerminated()).expectComplete().verify(LONG);
        }
    }

    @Test
    void theLastConsumerCancellingAsksTheUpstreamForNothingMore() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Recorder<Integer> r = new Recorder<>(); // no demand
        c.subscribe(r);
        AtomicLong requested = new AtomicLong();
        List<Boolean> cancelled = new CopyOnWriteArrayList<>();
        Flux.range(0, 1_000_000)
                .doOnRequest(requested::addAndGet)
                .doOnCancel(() -> cancelled.add(true))
                .subscribe(ring);
        await(() -> requested.get() == 16, "the ring asked for its size");
        r.subscription.cancel();
        await(() -> !cancelled.isEmpty(), "upstream cancelled");
        // Flux.publish().refCount() style: the last subscriber leaving cancels without asking for more;
        // a request here would bring 16 events into a ring nobody reads any more
        assertEquals(16, requested.get());
    }

    @Test
    void anUpstreamErrorAfterTheRingClosedGoesToOnErrorDropped() {
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        reactor.core.publisher.Hooks.onErrorDropped(dropped::add);
        try {
            RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
            ring.consumer("c", (e, s, eob) -> null);
            ring.start();
            reactor.test.publisher.TestPublisher<Integer> up = reactor.test.publisher.TestPublisher
                    .createNoncompliant(reactor.test.publisher.TestPublisher.Violation.CLEANUP_ON_TERMINATE);
            up.subscribe(ring);
            ring.complete(); // cancels the upstream, whose error was already on its way
            IllegalStateException late = new IllegalStateException("late");
            up.error(late);
            assertEquals(List.of(late), dropped);
            StepVerifier.create(ring.whenTerminated()).expectComplete().verify(LONG);
        } finally {
            reactor.core.publisher.Hooks.resetOnErrorDropped();
        }
    }

    @Test
    void anElementAfterTheUpstreamsOwnCompletionGoesToOnNextDropped() {
        List<Object> dropped = new CopyOnWriteArrayList<>();
        reactor.core.publisher.Hooks.onNextDropped(dropped::add);
        try {
            RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
            RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
            ring.start();
            reactor.test.publisher.TestPublisher<Integer> up = reactor.test.publisher.TestPublisher
                    .createNoncompliant(reactor.test.publisher.TestPublisher.Violation.CLEANUP_ON_TERMINATE);
            up.subscribe(ring);
            up.complete();
            up.next(42); // rule 1.7 broken upstream
            assertEquals(List.of(42), dropped);
            StepVerifier.create(c).expectComplete().verify(LONG);
        } finally {
            reactor.core.publisher.Hooks.resetOnNextDropped();
        }
    }

    @Test
    void aSubscriberWhoseOnCompleteThrowsStillLetsTheRingTerminate() {
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        reactor.core.publisher.Hooks.onErrorDropped(dropped::add);
        try {
            RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
            RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
            ring.start();
            List<Integer> seen = new CopyOnWriteArrayList<>();
            IllegalStateException boom = new IllegalStateException("onComplete failed");
            c.subscribe(new org.reactivestreams.Subscriber<Integer>() {
                @Override
                public void onSubscribe(Subscription s) {
                    s.request(Long.MAX_VALUE);
                }

                @Override
                public void onNext(Integer value) {
                    seen.add(value);
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onComplete() {
                    throw boom; // rule 2.13 broken
                }
            });
            Flux.range(1, 5).subscribe(ring);
            // the ring's completion handle is the shutdown sequence's: it must not hang on a broken subscriber
            StepVerifier.create(ring.whenTerminated()).expectComplete().verify(LONG);
            assertEquals(List.of(1, 2, 3, 4, 5), seen);
            await(() -> dropped.contains(boom), "the subscriber's error dropped as Reactor's subscribers drop it");
        } finally {
            reactor.core.publisher.Hooks.resetOnErrorDropped();
        }
    }

    @Test
    void aSubscriberWhoseOnErrorThrowsAFatalErrorLeavesTheGatingSetAnyway() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
        RingConsumer<Integer, Integer> broken = ring.publishedConsumer("broken", (e, s, eob) -> e);
        List<Integer> other = new CopyOnWriteArrayList<>();
        ring.consumer("other", (e, s, eob) -> {
            other.add(e);
            return null;
        });
        ring.start();
        org.reactivestreams.Subscriber<Integer> throwing = new org.reactivestreams.Subscriber<>() {
            @Override
            public void onSubscribe(Subscription subscription) {
                subscription.request(0); // rule 3.9: onError(IllegalArgumentException) ...
            }

            @Override
            public void onNext(Integer value) {
            }

            @Override
            public void onError(Throwable throwable) {
                // ... which this subscriber breaks on, with a JVM-fatal error (not an OutOfMemoryError, which
                // JUnit would take for the test JVM's own)
                throw new InternalError("test: thrown from onError");
            }

            @Override
            public void onComplete() {
            }
        };
        try {
            broken.subscribe(throwing); // a raw Subscriber: a BaseSubscriber catches what its hooks throw
        } catch (InternalError e) {
            // the error is delivered from subscribe when the consumer terminated before onSubscribe returned:
            // a JVM-fatal error goes on to the caller
        }
        await(broken::isTerminated, "the consumer with the bad request terminated");
        // it left the gating set although its onError threw a JVM-fatal error: the producer is not held at
        // its sequence, so many ring sizes of events reach the other consumer
        for (int i = 0; i < 40; i++) {
            assertTrue(ring.publish(i).block(LONG) >= 0);
        }
        await(() -> other.size() == 40, "every event reached the other consumer");
    }

    @Test
    void aSubscriberAfterTheFirstOneFinishedIsRejectedNotCompleted() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Flux.range(1, 3).subscribe(ring);
        StepVerifier.create(c).expectNext(1, 2, 3).expectComplete().verify(LONG);
        // unicast: a second subscriber is told so, also once the first one is done (as an Actor's and
        // Reactor's unicast sink's are); only a first subscriber arriving late learns how the consumer ended
        StepVerifier.create(c).expectErrorSatisfies(e -> {
            assertInstanceOf(IllegalStateException.class, e);
            assertTrue(e.getMessage().contains("only one subscriber"), e.getMessage());
        }).verify(LONG);

        RingBuffer<Integer> other = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RingConsumer<Integer, Integer> late = other.publishedConsumer("late", (e, s, eob) -> e);
        other.start();
        other.complete();
        await(late::isTerminated, "terminated with nobody subscribed");
        StepVerifier.create(late).expectComplete().verify(LONG);
    }

    @Test
    void aSubscriberWhoseOnSubscribeThrowsGetsTheErrorAndTheConsumerLeaves() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
        RingConsumer<Integer, Integer> broken = ring.publishedConsumer("broken", (e, s, eob) -> e);
        List<Integer> other = new CopyOnWriteArrayList<>();
        ring.consumer("other", (e, s, eob) -> {
            other.add(e);
            return null;
        });
        ring.start();
        IllegalStateException boom = new IllegalStateException("onSubscribe failed");
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        // rule 1.9: subscribe returns normally; rule 2.13: the subscription counts as cancelled
        broken.subscribe(new org.reactivestreams.Subscriber<Integer>() {
            @Override
            public void onSubscribe(Subscription subscription) {
                throw boom;
            }

            @Override
            public void onNext(Integer value) {
                errors.add(new AssertionError("onNext " + value));
            }

            @Override
            public void onError(Throwable throwable) {
                errors.add(throwable);
            }

            @Override
            public void onComplete() {
                errors.add(new AssertionError("onComplete"));
            }
        });
        assertEquals(List.of(boom), errors);
        await(broken::isTerminated, "the consumer ended as if cancelled");
        for (int i = 0; i < 20; i++) {
            assertTrue(ring.publish(i).block(LONG) >= 0);
        }
        await(() -> other.size() == 20, "it left the gating set: every event reached the other consumer");
        assertEquals(List.of(boom), errors);
    }

    @Test
    void theRingItsConsumersAndTheProcessorAreScannableAfterReactorsConventions() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).name("scan").size(8).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        Recorder<Integer> r = new Recorder<>(); // no demand: the events stay buffered
        c.subscribe(r);
        reactor.test.publisher.TestPublisher<Integer> up = reactor.test.publisher.TestPublisher.create();
        up.subscribe(ring);
        up.next(1, 2, 3);
        Scannable sr = Scannable.from(ring);
        assertTrue(sr.isScanAvailable());
        assertEquals("scan", sr.name());
        assertEquals(8, sr.scan(Scannable.Attr.CAPACITY));
        assertEquals(8, sr.scan(Scannable.Attr.PREFETCH));
        assertNotNull(sr.scan(Scannable.Attr.PARENT), "the upstream's subscription");
        assertEquals(3, sr.scan(Scannable.Attr.BUFFERED));
        assertSame(ring.group(), sr.scan(Scannable.Attr.RUN_ON));
        assertEquals(Scannable.Attr.RunStyle.ASYNC, sr.scan(Scannable.Attr.RUN_STYLE));
        assertEquals(List.of(c), sr.inners().collect(Collectors.toList()));
        Scannable sc = Scannable.from(c);
        assertEquals("c", sc.name());
        assertSame(ring, sc.scan(Scannable.Attr.PARENT));
        assertSame(r, c.scanUnsafe(Scannable.Attr.ACTUAL));
        assertEquals(3, sc.scan(Scannable.Attr.BUFFERED));
        assertEquals(0L, sc.scan(Scannable.Attr.REQUESTED_FROM_DOWNSTREAM));
        r.subscription.request(5);
        await(() -> r.values.size() == 3, "three handled");
        assertEquals(0, sc.scan(Scannable.Attr.BUFFERED));
        assertEquals(2L, sc.scan(Scannable.Attr.REQUESTED_FROM_DOWNSTREAM));
        assertFalse(sr.scan(Scannable.Attr.TERMINATED));
        up.complete();
        await(() -> r.completed, "completed");
        assertTrue(sr.scan(Scannable.Attr.TERMINATED));
        assertFalse(sr.scan(Scannable.Attr.CANCELLED));
        assertTrue(sc.scan(Scannable.Attr.TERMINATED));
        assertFalse(sc.scan(Scannable.Attr.CANCELLED));

        RingProcessor<Integer> p = RingProcessor.create(scheduler, 4);
        Recorder<Integer> pr = new Recorder<>();
        p.subscribe(pr);
        Scannable sp = Scannable.from(p);
        assertEquals(4, sp.scan(Scannable.Attr.CAPACITY));
        assertSame(pr, p.scanUnsafe(Scannable.Attr.ACTUAL));
        pr.subscription.cancel();
        await(() -> Boolean.TRUE.equals(Scannable.from(p.consumer()).scan(Scannable.Attr.CANCELLED)), "cancelled");
        assertFalse(Scannable.from(p.consumer()).scan(Scannable.Attr.TERMINATED));
    }

    @Test
    void disposingTheSchedulerFailsEveryConsumerInsteadOfLeavingThemHanging() {
        ActorScheduler own = ActorScheduler.builder().name("ring-dispose").threads(1).build();
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(own).size(4).build();
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", (e, s, eob) -> e);
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.handleEventsWith(a).then(c);
        ring.start();
        Recorder<Integer> ra = new Recorder<>();
        a.subscribe(ra);
        Recorder<Integer> rc = new Recorder<>();
        c.subscribe(rc);
        assertTrue(ring.tryPublish(1)); // a has no demand: both consumers park
        assertTrue(turnsSettle(own.defaultGroup()), "consumers parked");
        own.dispose();
        Throwable ea = ra.awaitError(LONG);
        Throwable ec = rc.awaitError(LONG);
        assertInstanceOf(java.util.concurrent.RejectedExecutionException.class, ea);
        assertSame(ea, ec, "the ring failed with one error");
        StepVerifier.create(ring.whenTerminated()).expectErrorMatches(e -> e == ea).verify(LONG);
        assertTrue(ring.isClosed());
        assertFalse(ring.tryPublish(2));
    }

    @Test
    void endOfBatchMarksTheLastEventBeforeTheBarrierIsReadAgain() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(256).build();
        List<long[]> seen = new CopyOnWriteArrayList<>();
        ring.consumer("a", (e, s, eob) -> {
            seen.add(new long[] {s, eob ? 1 : 0});
            return null;
        });
        for (int i = 0; i < 200; i++) {
            assertTrue(ring.tryPublish(i), "publishing before start is allowed");
        }
        ring.start();
        ring.complete();
        ring.whenTerminated().block(LONG);
        assertEquals(200, seen.size());
        assertEquals(1, seen.get(199)[1], "the last event ends a batch");
        long batches = seen.stream().filter(x -> x[1] == 1).count();
        assertTrue(batches >= 1 && batches < 200, "events were batched: " + batches + " batches");
    }

    @Test
    void aCompletedRingDeliversTheTerminalSignalToALateSubscriber() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        ring.complete();
        await(c::isTerminated, "c completes without events and without a subscriber");
        StepVerifier.create(c).verifyComplete();
    }

    @Test
    void anIdleConsumerParksAndIsWokenByTheNextEvent() {
        ActorGroup g = scheduler.group("ring-idle", 1);
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(g).size(16).build();
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
     * Whether the group's turn count stops moving: sampled 100 ms apart up to 50 times, so a slow
     * machine only needs more samples, while a consumer that polls would never settle.
     */
    static boolean turnsSettle(ActorGroup g) {
        long last = g.turns();
        for (int i = 0; i < 50; i++) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            long now = g.turns();
            if (now == last) {
                return true;
            }
            last = now;
        }
        return false;
    }

    @Test
    void manyProducersWithTryPublishAndPublishLoseNothing() throws Exception {
        RingBuffer<long[]> ring = RingBuffer.<long[]>builder(scheduler).size(32).build();
        int producers = 4;
        int perProducer = 20_000;
        long[] next = new long[producers];
        List<String> errors = new CopyOnWriteArrayList<>();
        RingConsumer<long[], Void> a = ring.consumer("a", (e, s, eob) -> {
            int p = (int) e[0];
            if (e[1] != next[p]) {
                errors.add("producer " + p + ": expected " + next[p] + " got " + e[1]);
            }
            next[p] = e[1] + 1;
            return null;
        });
        ring.start();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            final int id = p;
            Thread t = new Thread(() -> {
                for (int i = 0; i < perProducer; i++) {
                    long[] ev = {id, i};
                    if (id % 2 == 0) {
                        while (!ring.tryPublish(ev)) {
                            Thread.onSpinWait();
                        }
                    } else {
                        ring.publish(ev).block(LONG);
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(LONG.toMillis());
            assertFalse(t.isAlive(), "producer stuck");
        }
        ring.complete();
        ring.whenTerminated().block(LONG);
        assertEquals(List.of(), errors);
        for (int p = 0; p < producers; p++) {
            assertEquals(perProducer, next[p], "producer " + p);
        }
        assertEquals((long) producers * perProducer, a.processedEvents());
        assertNull(ring.whenTerminated().block(LONG));
        assertSame(ring, a.ring());
    }

    /**
     * A handler's error goes through Hooks.onOperatorError before the policy, as the errors of Reactor's
     * operators' user code do; a bubbling error fails the ring whatever the policy (a skip policy swallowed
     * it) and goes on to the carrier.
     */
    @Test
    void aHandlersErrorGoesThroughOnOperatorErrorAndABubblingOneIsNeverSkipped() {
        reactor.core.publisher.Hooks.onOperatorError((e, data) -> new IllegalStateException("hooked:" + data));
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", (e, s, eob) -> {
            throw new IllegalArgumentException("boom");
        });
        ring.handleEventsWith(a);
        ring.start();
        assertTrue(ring.tryPublish(7));
        StepVerifier.create(a).expectErrorMessage("hooked:7").verify(LONG);

        RingBuffer<Integer> skipping = RingBuffer.<Integer>builder(scheduler).size(8)
                .errorPolicy(RingErrorPolicy.SKIP).build();
        RingConsumer<Integer, Integer> b = skipping.publishedConsumer("b", (e, s, eob) -> {
            throw reactor.core.Exceptions.bubble(new IllegalStateException("escape"));
        });
        skipping.handleEventsWith(b);
        skipping.start();
        assertTrue(skipping.tryPublish(1));
        StepVerifier.create(b).expectErrorMatches(reactor.core.Exceptions::isBubbling).verify(LONG);
        assertEquals(0, b.skippedEvents());
    }

    /**
     * RingProcessor is a CoreSubscriber, as Reactor's processors are: Flux.subscribe hands over the processor
     * itself (it got Reactor's StrictSubscriber, whose context is empty), and its upstream sees the context
     * of the processor's subscriber.
     */
    @Test
    void aRingProcessorExposesItsSubscribersContextToItsUpstream() {
        RingProcessor<String> p = RingProcessor.create(scheduler, 8);
        List<String> got = new CopyOnWriteArrayList<>();
        Flux.from(p).contextWrite(reactor.util.context.Context.of("tenant", "t-3")).subscribe(got::add);
        List<org.reactivestreams.Subscriber<?>> seen = new CopyOnWriteArrayList<>();
        Flux.deferContextual(c -> Flux.just(c.getOrDefault("tenant", "none")))
                .transform(f -> Flux.<String>from(s -> {
                    seen.add(s);
                    f.subscribe(s);
                }))
                .subscribe(p);
        await(() -> got.contains("t-3"), "the upstream saw the subscriber's context: " + got);
        assertTrue(seen.get(0) == p, "the processor itself, not a wrapper: " + seen);
    }

    /**
     * A chain built before its last subscriber ({@code Flux.from(processor).map(f).subscribe(actor)}, then the
     * actor subscribed with a {@code contextWrite}): the ring's upstream sees that context, as Reactor's
     * processors ask their subscriber for it each time; the consumer had copied it once, at subscription, when
     * the actor had none yet (probe actorops, on the actor's side).
     */
    @Test
    void aChainBuiltBeforeItsSubscriberExposesTheContextItWritesLater() {
        RingProcessor<Integer> p = RingProcessor.create(scheduler, 8);
        io.reactoractor.actor.Actor<Integer, Integer> b = io.reactoractor.actor.Actor.identity(scheduler, 4);
        Flux.from(p).map(v -> v * 10).subscribe(b);
        assertTrue(p.currentContext().isEmpty(), "no context before the actor's subscriber");

        Mono<List<Integer>> got = Flux.from(b).contextWrite(reactor.util.context.Context.of("k", "v")).collectList()
                .cache();
        got.subscribe();
        Flux.deferContextual(c -> Flux.just(c.getOrDefault("k", "-").equals("v") ? 1 : -1)).subscribe(p);

        assertEquals(List.of(10), got.block(Duration.ofSeconds(30)), "the ring's upstream saw k=v");
        assertEquals("v", p.currentContext().getOrDefault("k", "-"), "after the end: the last context, kept");
    }
}
