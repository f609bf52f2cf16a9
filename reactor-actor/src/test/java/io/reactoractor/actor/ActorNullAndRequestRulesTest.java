package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.ActorTestSupport.TerminalRecorder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.test.StepVerifier;

/** Rules 2.13 (null arguments), 3.9 (non-positive requests) and the unicast rule, for actors and publishOn. */
class ActorNullAndRequestRulesTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-rules").threads(2).build();

    @AfterEach
    void tearDown() {
        assertTrue(ActorTestSupport.disposeBounded(scheduler), "dispose() hung");
    }

    private static void assertNullRules(Subscriber<Integer> s) {
        assertThrows(NullPointerException.class, () -> s.onSubscribe(null), "onSubscribe(null)");
        s.onSubscribe(Operators.emptySubscription());
        assertThrows(NullPointerException.class, () -> s.onNext(null), "onNext(null)");
        assertThrows(NullPointerException.class, () -> s.onError(null), "onError(null)");
    }

    @Test
    void actorSubscriberMethodsRejectNull() {
        assertNullRules(Actor.identity(scheduler, 8));
    }

    @Test
    void newSubscriberMethodsRejectNull() {
        assertNullRules(Actor.<Integer>identity(scheduler, 8).newSubscriber());
    }

    @Test
    void subscribeTellAndSendRejectNull() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        assertThrows(NullPointerException.class, () -> a.subscribe(null), "subscribe(null)");
        assertThrows(NullPointerException.class, () -> a.tell(null), "tell(null)");
        assertThrows(NullPointerException.class, () -> a.send(null), "send(null)");
        assertThrows(NullPointerException.class, () -> a.newSubscriber(null), "newSubscriber(null context)");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void actorNonPositiveRequestFailsWithIllegalArgument(long n) {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        Flux.range(1, 100).subscribe(a);
        TerminalRecorder<Integer> r = new TerminalRecorder<>(s -> s.request(n));
        a.subscribe(r);
        assertInstanceOf(IllegalArgumentException.class, r.awaitError(10));
        assertEquals(0, r.received);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1})
    void fairPublishOnNonPositiveRequestFailsWithIllegalArgument(long n) {
        Publisher<Integer> p = Flux.range(1, 100).transform(ActorOperators.publishOn(scheduler));
        TerminalRecorder<Integer> r = new TerminalRecorder<>(s -> s.request(n));
        p.subscribe(r);
        assertInstanceOf(IllegalArgumentException.class, r.awaitError(10));
        assertEquals(0, r.received);
    }

    @Test
    void nonPositiveRequestAfterElementsStillFails() throws Exception {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        Flux.range(1, 100).subscribe(a);
        TerminalRecorder<Integer> r = new TerminalRecorder<>(s -> s.request(3));
        a.subscribe(r);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (r.received < 3 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(3, r.received);
        r.subscription.request(-5);
        assertInstanceOf(IllegalArgumentException.class, r.awaitError(10));
        assertEquals(3, r.received);
    }

    @Test
    void secondSubscriberGetsIllegalStateAndFirstIsUnaffected() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        Flux.range(1, 50).subscribe(a);
        TerminalRecorder<Integer> first = new TerminalRecorder<>(s -> { });
        a.subscribe(first);
        TerminalRecorder<Integer> second = new TerminalRecorder<>(s -> { });
        a.subscribe(second);
        assertInstanceOf(IllegalStateException.class, second.awaitError(10));
        first.subscription.request(Long.MAX_VALUE);
        first.completed.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join();
        assertEquals(50, first.received);
        assertTrue(!first.error.isDone());
    }

    @Test
    void fairPublishOnAllowsOneSubscriberPerSubscription() {
        Flux<Integer> f = Flux.range(1, 10).transform(ActorOperators.publishOn(scheduler)).as(Flux::from);
        StepVerifier.create(Flux.merge(f, f).collectList())
                .assertNext(l -> assertEquals(20, l.size()))
                .verifyComplete();
    }
}
