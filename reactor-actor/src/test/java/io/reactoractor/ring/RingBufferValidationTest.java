package io.reactoractor.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Bad input: sizes, cycles, late consumers, nulls (rule 2.13 / 1.9) and request(n <= 0) (rule 3.9). */
class RingBufferValidationTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-validation").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    private static RingHandler<Integer, Integer> identity() {
        return (e, s, eob) -> e;
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, -8, 3, 6, 1000, 1023, Integer.MAX_VALUE, Integer.MIN_VALUE})
    void sizeMustBeAPowerOfTwo(int size) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RingBuffer.<Integer>builder(scheduler).size(size));
        assertTrue(e.getMessage().startsWith("size must be a power of two"), e.getMessage());
        assertTrue(e.getMessage().contains(String.valueOf(size)), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 1024, 1 << 16})
    void powersOfTwoAreAccepted(int size) {
        assertEquals(size, RingBuffer.<Integer>builder(scheduler).size(size).build().size());
    }

    @Test
    void schedulerMustBeAnActorScheduler() {
        assertThrows(NullPointerException.class, () -> RingBuffer.builder(null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RingBuffer.builder(Schedulers.immediate()));
        assertTrue(e.getMessage().startsWith("scheduler must be"), e.getMessage());
    }

    @Test
    void aTwoConsumerCycleIsRejectedAndNamed() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        RingConsumer<Integer, Integer> a = ring.consumer("a", identity());
        RingConsumer<Integer, Integer> b = ring.consumer("b", identity());
        ring.handleEventsWith(a).then(b);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ring.after(b).then(a));
        assertTrue(e.getMessage().contains("cycle: a -> b -> a"), e.getMessage());
        assertEquals(List.of(), a.dependencyNames(), "a rejected edge must not be added");
    }

    @Test
    void aLongerCycleAndASelfLoopAreRejected() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        RingConsumer<Integer, Integer> a = ring.consumer("a", identity());
        RingConsumer<Integer, Integer> b = ring.consumer("b", identity());
        RingConsumer<Integer, Integer> c = ring.consumer("c", identity());
        RingConsumer<Integer, Integer> d = ring.consumer("d", identity());
        ring.handleEventsWith(a).then(b, c).then(d);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ring.after(d).then(a));
        assertTrue(e.getMessage().contains("cycle: a -> d -> "), e.getMessage());
        assertTrue(e.getMessage().contains(" -> a (a cannot depend on d"), e.getMessage());
        IllegalArgumentException self = assertThrows(IllegalArgumentException.class, () -> ring.after(c).then(c));
        assertTrue(self.getMessage().contains("cycle: c -> c"), self.getMessage());
        // a diamond is not a cycle: d already depends on b and c; adding a -> d again is fine
        ring.after(a).then(d);
        assertEquals(List.of("b", "c", "a"), d.dependencyNames());
    }

    @Test
    void graphChangesAfterStartAreRejected() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        RingConsumer<Integer, Integer> a = ring.consumer("a", identity());
        RingConsumer<Integer, Integer> b = ring.consumer("b", identity());
        ring.start();
        IllegalStateException late = assertThrows(IllegalStateException.class, () -> ring.consumer("late", identity()));
        assertTrue(late.getMessage().contains("is started") && late.getMessage().contains("before start()"),
                late.getMessage());
        assertThrows(IllegalStateException.class, () -> ring.publishedConsumer("late", identity()));
        assertThrows(IllegalStateException.class, () -> ring.handleEventsWith(a).then(b));
        IllegalStateException twice = assertThrows(IllegalStateException.class, ring::start);
        assertTrue(twice.getMessage().contains("before start()"), twice.getMessage());
    }

    @Test
    void startNeedsAConsumer() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        IllegalStateException e = assertThrows(IllegalStateException.class, ring::start);
        assertTrue(e.getMessage().contains("no consumer"), e.getMessage());
    }

    @Test
    void consumerArgumentsAreChecked() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        RingBuffer<Integer> other = RingBuffer.<Integer>builder(scheduler).build();
        assertThrows(NullPointerException.class, () -> ring.consumer(null, identity()));
        assertThrows(NullPointerException.class, () -> ring.consumer("a", null));
        assertThrows(IllegalArgumentException.class, () -> ring.consumer(" ", identity()));
        RingConsumer<Integer, Integer> a = ring.consumer("a", identity());
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
                () -> ring.publishedConsumer("a", identity()));
        assertTrue(dup.getMessage().contains("'a' is already used"), dup.getMessage());
        RingConsumer<Integer, Integer> foreign = other.consumer("x", identity());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ring.after(a).then(foreign));
        assertTrue(e.getMessage().startsWith("next[0] (x) belongs to another ring"), e.getMessage());
        assertThrows(NullPointerException.class, () -> ring.after(a).then((RingConsumer<Integer, ?>) null));
        assertThrows(IllegalArgumentException.class, () -> ring.after());
        assertThrows(NullPointerException.class, () -> RingBuffer.<Integer>builder(scheduler).errorPolicy(null));
        assertThrows(NullPointerException.class, () -> RingBuffer.<Integer>builder(scheduler).name(null));
    }

    @Test
    void producerMethodsRejectNull() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        ring.consumer("a", identity());
        ring.start();
        assertThrows(NullPointerException.class, () -> ring.tryPublish(null));
        assertThrows(NullPointerException.class, () -> ring.publish(null));
        assertThrows(NullPointerException.class, () -> ring.error(null));
        assertThrows(NullPointerException.class, () -> ring.onSubscribe(null));
        ring.onSubscribe(Operators.emptySubscription());
        assertThrows(NullPointerException.class, () -> ring.onNext(null));
        assertThrows(NullPointerException.class, () -> ring.onError(null));
    }

    @Test
    void subscribeRejectsNull() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", identity());
        assertThrows(NullPointerException.class, () -> c.subscribe(null));
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void nonPositiveRequestFailsTheSubscriberAndFreesTheRing(long n) {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(2).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", identity());
        ring.consumer("sink", identity()); // keeps the ring open once c has left
        ring.start();
        Recorder<Integer> r = new Recorder<>();
        c.subscribe(r);
        r.subscription.request(n);
        Throwable e = r.awaitError(Duration.ofSeconds(20));
        assertInstanceOf(IllegalArgumentException.class, e);
        assertTrue(e.getMessage().contains("rule 3.9"), e.getMessage());
        // the consumer left the gating set: only "sink" gates now, so 10 events pass a ring of 2
        RingBufferTest.await(() -> c.sequence() == Long.MAX_VALUE, "c left the gating set");
        for (int i = 0; i < 10; i++) {
            final int v = i;
            RingBufferTest.await(() -> ring.tryPublish(v), "event " + v);
        }
        assertTrue(c.lag() == 0 && !ring.isClosed());
    }

    @Test
    void aSecondSubscriberAndASubscriberOfAnUnpublishedConsumerGetIllegalState() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", identity());
        RingConsumer<Integer, Integer> plain = ring.consumer("plain", identity());
        StepVerifier.create(c, 0).thenCancel().verify(Duration.ofSeconds(5));
        StepVerifier.create(c).expectErrorMatches(e -> e instanceof IllegalStateException
                && e.getMessage().contains("only one subscriber")).verify(Duration.ofSeconds(5));
        StepVerifier.create(plain).expectErrorMatches(e -> e instanceof IllegalStateException
                && e.getMessage().contains("not published")).verify(Duration.ofSeconds(5));
    }
}
