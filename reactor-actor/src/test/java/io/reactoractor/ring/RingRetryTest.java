package io.reactoractor.ring;

import static io.reactoractor.ring.RingBufferTest.await;
import static io.reactoractor.ring.RingBufferTest.turnsSettle;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * {@link RingErrorPolicy#retry} and {@link RingErrorPolicy#retryThenSkip}: the failing consumer backs
 * off suspended (its sequence, and so its dependents and the producer, wait), then calls its handler
 * again on the same event. Timing is only ever checked as a lower bound (the back-off really waits);
 * liveness waits are generous. A back-off that must be cut short asks for ten minutes and gets the
 * 30 s cap: an early end is recognised by a reaction within {@link #BEFORE_CAP} (20 s, still a
 * liveness bound, not a timing claim), which a back-off that ran out could not give.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RingRetryTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final Duration FOREVER = Duration.ofMinutes(10);
    private static final Duration BEFORE_CAP = Duration.ofSeconds(20);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-retry").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    /** A handler that fails on {@code failOn} for its first {@code failures} calls, and records its calls. */
    private static final class Flaky implements RingHandler<Integer, Integer> {
        final int failOn;
        final int failures;
        final List<Long> callTimes = new CopyOnWriteArrayList<>();
        final CountDownLatch firstFailure = new CountDownLatch(1);
        final RuntimeException boom = new RuntimeException("flaky");

        Flaky(int failOn, int failures) {
            this.failOn = failOn;
            this.failures = failures;
        }

        @Override
        public Integer onEvent(Integer e, long sequence, boolean endOfBatch) {
            if (e == failOn) {
                callTimes.add(System.nanoTime());
                if (callTimes.size() <= failures) {
                    firstFailure.countDown();
                    throw boom;
                }
            }
            return e;
        }

        void awaitFirstFailure() throws InterruptedException {
            assertTrue(firstFailure.await(LONG.toMillis(), TimeUnit.MILLISECONDS), "no failure within " + LONG);
        }
    }

    private static void awaitWithin(Duration d, java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + d.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "not reached within " + d + ": " + what);
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }

    /** Subscribes a recorder with unbounded demand to {@code c}. */
    private static Recorder<Integer> recordAll(RingConsumer<Integer, Integer> c) {
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        r.subscription.request(Long.MAX_VALUE);
        return r;
    }

    /** Publishes 0 .. n-1 with {@code tryPublish}; each must fit. */
    private static void publishRange(RingBuffer<Integer> ring, int n) {
        for (int i = 0; i < n; i++) {
            assertTrue(ring.tryPublish(i), "event " + i);
        }
    }

    private static List<Integer> range(int n) {
        return IntStream.range(0, n).boxed().collect(Collectors.toList());
    }

    @Test
    void aRetryThatSucceedsOnTheThirdAttemptDeliversTheEventOnceAndItsDependentsSeeItOnlyAfter() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8)
                .errorPolicy(RingErrorPolicy.retry(3, Duration.ofMillis(20))).build();
        Flaky flaky = new Flaky(5, 2);
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", flaky);
        List<String> violations = new CopyOnWriteArrayList<>();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> {
            if (e == 5 && flaky.callTimes.size() != 3) {
                violations.add("c saw 5 after " + flaky.callTimes.size() + " calls of a's handler");
            }
            if (a.sequence() < s) {
                violations.add("c saw " + s + " before a handled it (a=" + a.sequence() + ")");
            }
            return e;
        });
        ring.handleEventsWith(a).then(c);
        ring.start();
        Recorder<Integer> cs = recordAll(c);
        Flux.range(0, 40).subscribeOn(Schedulers.single()).subscribe(ring);

        StepVerifier.create(a).expectNextSequence(range(40)).expectComplete().verify(LONG);
        assertTrue(cs.awaitTerminal(LONG));
        assertTrue(cs.completed, "c completed: " + cs.error);
        assertEquals(range(40), cs.values, "c saw every event exactly once, in order");
        assertEquals(List.of(), violations);
        assertEquals(3, flaky.callTimes.size(), "two failures, then success");
        assertEquals(2, a.retriedEvents());
        assertEquals(0, a.skippedEvents());
        assertEquals(40, a.processedEvents());
        // the back-offs really waited: 20 ms then 40 ms (a lower bound only, with a little slack for
        // clock granularity; never an upper bound)
        long waited = flaky.callTimes.get(2) - flaky.callTimes.get(0);
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(55), "waited only " + waited + " ns");
        StepVerifier.create(ring.whenTerminated()).verifyComplete();
    }

    @Test
    void duringABackoffTheConsumerIsSuspendedAndGatesItsDependentsAndTheProducer() throws Exception {
        ActorGroup g = scheduler.group("ring-backoff", 1);
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(g).size(8)
                .errorPolicy(RingErrorPolicy.retry(3, FOREVER)).build();
        Flaky flaky = new Flaky(2, 1);
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", flaky);
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.handleEventsWith(a).then(c);
        ring.start();
        Recorder<Integer> as = recordAll(a);
        Recorder<Integer> cs = recordAll(c);
        publishRange(ring, 8);
        flaky.awaitFirstFailure();
        await(() -> cs.values.size() == 2 && a.sequence() == 1, "c got 0 and 1");
        // the ring holds 8 events beyond the slowest consumer's sequence (1): 2..9, then it is full
        assertTrue(ring.tryPublish(8));
        assertTrue(ring.tryPublish(9));
        assertFalse(ring.tryPublish(10), "the producer waits for a");
        assertTrue(turnsSettle(g), "a backing-off consumer runs no turn (suspended, not polling): turns=" + g.turns());
        assertEquals(1, a.sequence(), "a's sequence stays below the failing event");
        assertEquals(1, c.sequence(), "c does not see the failing event");
        assertEquals(List.of(0, 1), cs.values);
        assertFalse(ring.tryPublish(10), "the producer still waits for a");
        assertEquals(0, ring.remainingCapacity());
        assertEquals(1, a.retriedEvents());
        assertEquals(1, flaky.callTimes.size());
    }

    @Test
    void exhaustedRetriesStopTheRing() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8)
                .errorPolicy(RingErrorPolicy.retry(2, Duration.ofMillis(5))).build();
        Flaky flaky = new Flaky(3, Integer.MAX_VALUE);
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", flaky);
        RingConsumer<Integer, Integer> b = ring.publishedConsumer("b", (e, s, eob) -> e);
        ring.handleEventsWith(a, b);
        ring.start();
        List<Boolean> cancelled = new CopyOnWriteArrayList<>();
        Flux.range(0, 1_000_000).doOnCancel(() -> cancelled.add(true)).subscribeOn(Schedulers.single())
                .subscribe(ring);
        StepVerifier.create(a).expectNext(0, 1, 2).expectErrorMatches(e -> e == flaky.boom).verify(LONG);
        StepVerifier.create(b).thenConsumeWhile(x -> true).expectErrorMatches(e -> e == flaky.boom).verify(LONG);
        StepVerifier.create(ring.whenTerminated()).expectErrorMatches(e -> e == flaky.boom).verify(LONG);
        await(() -> !cancelled.isEmpty(), "upstream cancelled");
        assertEquals(3, flaky.callTimes.size(), "the first call and two retries");
        assertEquals(2, a.retriedEvents());
        assertEquals(2, a.sequence(), "a stopped below the failing event");
        assertTrue(ring.isClosed());
        assertFalse(ring.tryPublish(99));
    }

    @Test
    void exhaustedRetriesSkipTheEventWithRetryThenSkip() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8)
                .errorPolicy(RingErrorPolicy.retryThenSkip(2, Duration.ofMillis(5))).build();
        Flaky flaky = new Flaky(3, Integer.MAX_VALUE);
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", flaky);
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.handleEventsWith(a).then(c);
        ring.start();
        Recorder<Integer> cs = recordAll(c);
        Flux.range(0, 20).subscribe(ring);
        StepVerifier.create(a)
                .expectNextSequence(range(20).stream().filter(i -> i != 3).collect(Collectors.toList()))
                .expectComplete().verify(LONG);
        assertTrue(cs.awaitTerminal(LONG));
        assertTrue(cs.completed, "c completed: " + cs.error);
        assertEquals(range(20), cs.values, "dependents still see the skipped event");
        assertEquals(3, flaky.callTimes.size());
        assertEquals(2, a.retriedEvents());
        assertEquals(1, a.skippedEvents());
        assertEquals(20, a.processedEvents());
    }

    /**
     * a (failing on event 2 every time, retry(3, ten minutes)) then c, both subscribed with unbounded
     * demand, events 0..4 published; returned once a is backing off (so whatever ends the back-off
     * early must do it through the armed timer, not through the failing turn's own re-check).
     */
    private static final class BackingOffChain {
        final RingBuffer<Integer> ring;
        final Flaky flaky = new Flaky(2, Integer.MAX_VALUE);
        final RingConsumer<Integer, Integer> a;
        final Recorder<Integer> as;
        final Recorder<Integer> cs;

        BackingOffChain(ActorScheduler on) throws InterruptedException {
            ring = RingBuffer.<Integer>builder(on).size(8).errorPolicy(RingErrorPolicy.retry(3, FOREVER)).build();
            a = ring.publishedConsumer("a", flaky);
            RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
            ring.handleEventsWith(a).then(c);
            ring.start();
            as = recordAll(a);
            cs = recordAll(c);
            publishRange(ring, 5);
            flaky.awaitFirstFailure();
            await(a::backingOff, "a backs off");
        }
    }

    @Test
    void cancellingTheDownstreamDuringABackoffEndsItAtOnce() throws Exception {
        BackingOffChain chain = new BackingOffChain(scheduler);
        RingBuffer<Integer> ring = chain.ring;
        RingConsumer<Integer, Integer> a = chain.a;
        Recorder<Integer> as = chain.as;
        Recorder<Integer> cs = chain.cs;
        Flaky flaky = chain.flaky;
        as.subscription.cancel(); // a leaves gating now, not in ten minutes
        awaitWithin(BEFORE_CAP, a::isTerminated, "a removed during its back-off");
        assertEquals(Long.MAX_VALUE, a.sequence());
        await(() -> cs.values.size() == 5, "c no longer waits for a");
        ring.complete();
        assertTrue(cs.awaitTerminal(LONG));
        assertTrue(cs.completed);
        assertEquals(range(5), cs.values);
        assertEquals(1, flaky.callTimes.size(), "no retry after the cancel");
        StepVerifier.create(ring.whenTerminated()).verifyComplete();
    }

    @Test
    void aRingStoppedDuringABackoffTerminatesTheBackingOffConsumerAtOnce() throws Exception {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8)
                .errorPolicy(RingErrorPolicy.retry(3, FOREVER)).build();
        Flaky flaky = new Flaky(2, Integer.MAX_VALUE);
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", flaky);
        ring.start();
        Recorder<Integer> as = recordAll(a);
        publishRange(ring, 5);
        flaky.awaitFirstFailure();
        await(a::backingOff, "a backs off");
        RuntimeException stop = new RuntimeException("another consumer failed");
        ring.fail(stop); // what a STOP failure of another consumer does
        assertSame(stop, as.awaitError(BEFORE_CAP));
        assertEquals(List.of(0, 1), as.values);
        StepVerifier.create(ring.whenTerminated()).expectErrorMatches(e -> e == stop).verify(LONG);
    }

    @Test
    void closingTheRingDuringABackoffStillRetriesTheAcceptedEvent() throws Exception {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(8)
                .errorPolicy(RingErrorPolicy.retry(3, Duration.ofSeconds(1))).build();
        Flaky flaky = new Flaky(2, 1);
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", flaky);
        ring.start();
        Recorder<Integer> as = recordAll(a);
        publishRange(ring, 5);
        flaky.awaitFirstFailure();
        // a back-off of 1 s, and the close while it lasts: with a short one, a descheduled test thread would
        // close the ring after the retry, and the test would no longer test a close during a back-off
        await(a::backingOff, "a backs off");
        ring.complete();
        assertTrue(as.awaitTerminal(LONG));
        assertTrue(as.completed, "completed after the retry: " + as.error);
        assertEquals(range(5), as.values);
    }

    @Test
    void disposingTheSchedulerDuringABackoffFailsEveryConsumer() throws Exception {
        ActorScheduler own = ActorScheduler.builder().name("ring-retry-dispose").threads(1).build();
        BackingOffChain chain = new BackingOffChain(own);
        own.dispose();
        Throwable ea = chain.as.awaitError(LONG);
        Throwable ec = chain.cs.awaitError(LONG);
        RingBuffer<Integer> ring = chain.ring;
        Flaky flaky = chain.flaky;
        assertInstanceOf(RejectedExecutionException.class, ea);
        assertSame(ea, ec, "the ring failed with one error");
        StepVerifier.create(ring.whenTerminated()).expectErrorMatches(e -> e == ea).verify(LONG);
        assertEquals(1, flaky.callTimes.size());
    }

    /** One event in 200 fails once or twice, then succeeds; a few events take a little longer. */
    private static RingHandler<Integer, Integer> sometimesFailing() {
        Map<Integer, AtomicInteger> failures = new ConcurrentHashMap<>();
        return (e, s, eob) -> {
            if (e % 200 == 7 && failures.computeIfAbsent(e, k -> new AtomicInteger()).incrementAndGet()
                    <= 1 + (e / 200) % 2) {
                throw new IllegalStateException("transient " + e);
            }
            if (ThreadLocalRandom.current().nextInt(64) == 0) {
                for (int i = 0; i < 100; i++) {
                    Thread.onSpinWait();
                }
            }
            return e;
        };
    }

    @Test
    void randomFailuresWithRetriesLoseNoEventAndNoWakeUp() {
        int events = 20_000;
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16)
                .errorPolicy(RingErrorPolicy.retry(5, Duration.ofNanos(200_000))).build();
        RingConsumer<Integer, Integer> a = ring.consumer("a", sometimesFailing());
        RingConsumer<Integer, Integer> b = ring.consumer("b", sometimesFailing());
        List<String> violations = new CopyOnWriteArrayList<>();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> {
            if (a.sequence() < s || b.sequence() < s) {
                violations.add("c saw " + s + " before a=" + a.sequence() + " b=" + b.sequence());
            }
            return e;
        });
        ring.handleEventsWith(a, b).then(c);
        ring.start();
        Flux.range(0, events).subscribeOn(Schedulers.single()).subscribe(ring);
        StepVerifier.create(c).expectNextSequence(range(events)).expectComplete().verify(Duration.ofSeconds(90));
        assertEquals(List.of(), violations.size() > 5 ? violations.subList(0, 5) : violations);
        assertEquals(a.retriedEvents(), b.retriedEvents());
        assertEquals(events / 200 * 3 / 2, a.retriedEvents(), "half fail once, half twice");
    }
}
