package io.reactoractor.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.reactoractor.ActorScheduler;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.test.publisher.TestPublisher;

/**
 * RingBuffer's class doc, "Discarded events": every event the ring took and will never hand to its last
 * consumer reaches the discard hook of the first published consumer's subscriber (as Reactor's buffering
 * operators discard their queue on cancel), and a cancel from inside {@code onNext} stops the batch at the
 * next event (as Reactor's drains do). Found by a black-box probe: the ring's context was always empty, so
 * no discard hook could ever be reached, and the events left in the ring on the last cancel or a stopping
 * failure reached none.
 */
class RingDiscardTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-discard").threads(2).build();

    @AfterEach
    void tearDown() {
        Hooks.resetOnNextDropped();
        scheduler.dispose();
    }

    private static org.awaitility.core.ConditionFactory await() {
        return Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5));
    }

    @Test
    void aCancelFromOnNextStopsTheBatchAtTheNextEvent() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(64).build();
        AtomicInteger handlerCalls = new AtomicInteger();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> {
            handlerCalls.incrementAndGet();
            return e;
        });
        ring.consumer("other", (e, s, eob) -> null); // keeps the ring open after c leaves
        for (int i = 0; i < 32; i++) {
            assertThat(ring.tryPublish(i)).isTrue(); // one batch waiting for c
        }
        ring.start();
        AtomicInteger afterCancel = new AtomicInteger();
        c.subscribe(new Subscriber<Integer>() {
            Subscription s;
            boolean cancelled;

            @Override
            public void onSubscribe(Subscription s) {
                this.s = s;
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(Integer v) {
                if (cancelled) {
                    afterCancel.incrementAndGet();
                    return;
                }
                cancelled = true;
                s.cancel();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onComplete() {
            }
        });
        await().until(c::isTerminated);
        assertThat(afterCancel).as("onNext after the cancel").hasValue(0);
        assertThat(handlerCalls).as("handler calls: the event delivered, none after the cancel").hasValue(1);
    }

    @Test
    void theEventsTheLastConsumerDidNotHandleAreDiscardedWhenItsSubscriberCancels() {
        RingProcessor<Integer> p = RingProcessor.create(scheduler, 16);
        AtomicInteger accepted = new AtomicInteger();
        Flux.range(0, 1000).doOnNext(x -> accepted.incrementAndGet()).subscribe(p);
        List<Object> discarded = new CopyOnWriteArrayList<>();
        // a slow discard hook: whenTerminated() must still find every discard done
        List<Integer> got = Flux.from(p).doOnDiscard(Object.class, e -> {
            discarded.add(e);
            if (discarded.size() == 1) {
                LockSupport.parkNanos(100_000_000L);
            }
        }).take(3).collectList().block(Duration.ofSeconds(30));
        p.ring().whenTerminated().block(Duration.ofSeconds(30));
        assertThat(got).containsExactly(0, 1, 2);
        assertThat(accepted.get()).isGreaterThan(3);
        List<Object> expected = new java.util.ArrayList<>();
        for (int i = 3; i < accepted.get(); i++) {
            expected.add(i);
        }
        assertThat(discarded).as("every accepted event not delivered, once").containsExactlyElementsOf(expected);
    }

    @Test
    void aStoppingFailureDiscardsTheEventsAfterTheFailedOne() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> {
            if (e == 3) {
                throw new IllegalStateException("expected test failure: handler fails on 3");
            }
            return e;
        });
        List<Object> discarded = new CopyOnWriteArrayList<>();
        List<Integer> got = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Flux.from(c).doOnDiscard(Object.class, discarded::add).subscribe(got::add, error::set);
        for (int i = 0; i < 10; i++) {
            assertThat(ring.tryPublish(i)).isTrue();
        }
        ring.start();
        await().until(() -> error.get() != null);
        ring.whenTerminated().onErrorResume(t -> reactor.core.publisher.Mono.empty()).block(Duration.ofSeconds(30));
        assertThat(got).containsExactly(0, 1, 2);
        // 3 went to Hooks.onOperatorError with the error: not discarded as well
        assertThat(discarded).containsExactly(4, 5, 6, 7, 8, 9);
    }

    @Test
    void theLastConsumerDiscardsBeforeItsSubscriberSeesTheError() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> {
            if (e == 3) {
                throw new IllegalStateException("expected test failure: handler fails on 3");
            }
            return e;
        });
        for (int i = 0; i < 10; i++) {
            assertThat(ring.tryPublish(i)).isTrue();
        }
        List<Object> discarded = new CopyOnWriteArrayList<>();
        AtomicReference<List<Object>> discardedAtError = new AtomicReference<>();
        Flux.from(c).doOnDiscard(Object.class, discarded::add)
                .subscribe(e -> { }, e -> discardedAtError.set(List.copyOf(discarded)));
        ring.start();
        await().until(() -> discardedAtError.get() != null);
        // what a subscriber checking the discards once it saw the error finds: all of them, as with an Actor, and as
        // Reactor's publishOn clears its queue before it signals an upstream's error (a StepVerifier's
        // verifyThenAssertThat().hasDiscarded(..) after the error then finds them; it raced the discards before)
        assertThat(discardedAtError.get()).containsExactly(4, 5, 6, 7, 8, 9);
        assertThat(discarded).containsExactly(4, 5, 6, 7, 8, 9);

        RingBuffer<Integer> ring2 = RingBuffer.<Integer>builder(scheduler).size(16).build();
        RingConsumer<Integer, Integer> c2 = ring2.publishedConsumer("c", (e, s, eob) -> {
            if (e == 3) {
                throw new IllegalStateException("expected test failure: handler fails on 3");
            }
            return e;
        });
        for (int i = 0; i < 10; i++) {
            assertThat(ring2.tryPublish(i)).isTrue();
        }
        ring2.start();
        reactor.test.StepVerifier.create(c2)
                .expectNext(0, 1, 2)
                .expectErrorMessage("expected test failure: handler fails on 3")
                .verifyThenAssertThat(Duration.ofSeconds(30))
                .hasDiscardedExactly(4, 5, 6, 7, 8, 9);
    }

    @Test
    void aRingCompletedNormallyDiscardsNothing() {
        RingProcessor<Integer> p = RingProcessor.create(scheduler, 16);
        List<Object> discarded = new CopyOnWriteArrayList<>();
        Flux.range(0, 100).subscribe(p);
        assertThat(Flux.from(p).doOnDiscard(Object.class, discarded::add).count().block(Duration.ofSeconds(30)))
                .isEqualTo(100L);
        p.ring().whenTerminated().block(Duration.ofSeconds(30));
        assertThat(discarded).isEmpty();
    }

    @Test
    void anElementInFlightAfterTheRingCancelledItsUpstreamIsDiscarded() {
        RingProcessor<Integer> p = RingProcessor.create(scheduler, 16);
        List<Object> discarded = new CopyOnWriteArrayList<>();
        List<Integer> got = new CopyOnWriteArrayList<>();
        AtomicInteger completions = new AtomicInteger();
        Flux.from(p).doOnDiscard(Object.class, discarded::add)
                .subscribe(got::add, e -> { }, completions::incrementAndGet);
        TestPublisher<Integer> upstream = TestPublisher.createNoncompliant(TestPublisher.Violation.DEFER_CANCELLATION);
        upstream.subscribe(p);
        upstream.next(1);
        p.ring().complete(); // cancels the upstream
        upstream.assertCancelled();
        await().until(() -> completions.get() == 1); // the consumer terminated: its context is kept
        upstream.next(2, 3); // in flight after the cancel
        assertThat(got).containsExactly(1);
        assertThat(discarded).containsExactly(2, 3);
    }

    @Test
    void theRingReportsCancelledOnlyWhenItCancelledAnUpstream() {
        // no upstream ever: complete() closes the imperative producer's ring, it cancels nothing
        RingBuffer<Integer> imperative = RingBuffer.<Integer>builder(scheduler).size(8).build();
        RingConsumer<Integer, Integer> c = imperative.publishedConsumer("c", (e, seq, end) -> e);
        imperative.handleEventsWith(c);
        imperative.start();
        assertThat(imperative.tryPublish(1)).isTrue();
        imperative.complete();
        assertThat(Flux.from(c).collectList().block(Duration.ofSeconds(30))).containsExactly(1);
        Scannable s = Scannable.from(imperative);
        assertThat(s.scan(Scannable.Attr.PARENT)).isNull();
        assertThat(s.scan(Scannable.Attr.TERMINATED)).isTrue();
        assertThat(s.scan(Scannable.Attr.CANCELLED)).isFalse();

        // an upstream that completed by itself was not cancelled
        RingProcessor<Integer> completed = RingProcessor.create(scheduler, 16);
        Flux.range(0, 3).subscribe(completed);
        assertThat(Flux.from(completed).count().block(Duration.ofSeconds(30))).isEqualTo(3L);
        assertThat(Scannable.from(completed.ring()).scan(Scannable.Attr.CANCELLED)).isFalse();

        // a live upstream that complete() cancelled was
        RingProcessor<Integer> cancelled = RingProcessor.create(scheduler, 16);
        TestPublisher<Integer> upstream = TestPublisher.create();
        upstream.subscribe(cancelled);
        Flux.from(cancelled).subscribe();
        assertThat(Scannable.from(cancelled.ring()).scan(Scannable.Attr.CANCELLED)).isFalse();
        cancelled.ring().complete();
        upstream.assertCancelled();
        assertThat(Scannable.from(cancelled.ring()).scan(Scannable.Attr.CANCELLED)).isTrue();
    }

    @Test
    void anOverflowingUpstreamLosesNoElementSilently() {
        List<Object> dropped = new CopyOnWriteArrayList<>();
        Hooks.onNextDropped(dropped::add);
        RingProcessor<Integer> p = RingProcessor.create(scheduler, 16);
        List<Object> discarded = new CopyOnWriteArrayList<>();
        List<Integer> got = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Flux.from(p).doOnDiscard(Object.class, discarded::add).subscribe(got::add, error::set);
        // ignores demand: 100 elements on the first request
        Flux.<Integer>from(s -> {
            s.onSubscribe(new Subscription() {
                boolean sent;

                @Override
                public void request(long n) {
                    if (!sent) {
                        sent = true;
                        for (int i = 0; i < 100; i++) {
                            s.onNext(i);
                        }
                    }
                }

                @Override
                public void cancel() {
                }
            });
        }).subscribe(p);
        await().until(() -> error.get() != null);
        p.ring().whenTerminated().onErrorResume(t -> reactor.core.publisher.Mono.empty()).block(Duration.ofSeconds(30));
        assertThat(error.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("beyond the demand");
        assertThat(got.size() + discarded.size() + dropped.size()).as("delivered + discarded + dropped").isEqualTo(100);
    }

    @Test
    void theRingExposesItsFirstSubscribersContext() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        ring.consumer("plain", (e, s, eob) -> null);
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", (e, s, eob) -> e);
        RingConsumer<Integer, Integer> b = ring.publishedConsumer("b", (e, s, eob) -> e);
        assertThat(ring.currentContext().isEmpty()).isTrue();
        Flux.from(b).contextWrite(ctx -> ctx.put("who", "b")).subscribe();
        Flux.from(a).contextWrite(ctx -> ctx.put("who", "a")).subscribe();
        // the first consumer, in creation order, that has a subscriber
        assertThat(ring.currentContext().<String>get("who")).isEqualTo("a");
    }

    @Test
    void theSubscriptionHandedToASubscriberIsScannableUpToTheRing() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        AtomicReference<Subscription> sub = new AtomicReference<>();
        c.subscribe(new CoreSubscriber<Integer>() {
            @Override
            public void onSubscribe(Subscription s) {
                sub.set(s);
            }

            @Override
            public void onNext(Integer v) {
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onComplete() {
            }
        });
        Scannable s = Scannable.from(sub.get());
        assertThat(s.isScanAvailable()).isTrue();
        assertThat(s.scan(Scannable.Attr.PARENT)).isSameAs(c);
        assertThat(s.parents().map(Object.class::cast).toList()).contains(c, ring);
        assertThat(s.scan(Scannable.Attr.CANCELLED)).isFalse();
        sub.get().cancel();
        assertThat(s.scan(Scannable.Attr.CANCELLED)).isTrue();
    }

    @Test
    void anEmptyHandleEventsWithNamesItsParameter() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        assertThatThrownBy(ring::handleEventsWith).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("first ");
    }
}
