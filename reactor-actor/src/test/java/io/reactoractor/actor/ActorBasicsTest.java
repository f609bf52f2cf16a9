package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The basic contract of an actor as a Subscriber/Publisher pair. */
class ActorBasicsTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-basics").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    @Test
    void identityActorRelaysInOrderAndCompletes() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 16);
        Flux.range(1, 10_000).subscribe(a);
        StepVerifier.create(Flux.from(a))
                .expectNextSequence(java.util.stream.IntStream.rangeClosed(1, 10_000).boxed().toList())
                .expectComplete()
                .verify(Duration.ofSeconds(30));
    }

    @Test
    void fairPublishOnDeliversEverythingOnTheScheduler() {
        StepVerifier.create(Flux.range(1, 100_000).hide().transform(ActorOperators.publishOn(scheduler))
                        .map(i -> Thread.currentThread().getName().startsWith("actor-basics") ? i : -i)
                        .reduce(0L, Long::sum))
                .expectNext(100_000L * 100_001L / 2)
                .expectComplete()
                .verify(Duration.ofSeconds(30));
    }

    @Test
    void tellReportsFullMailboxAndNothingIsLost() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 4);
        int accepted = 0;
        for (int i = 0; i < 10; i++) {
            if (a.tell(i)) {
                accepted++;
            }
        }
        assertEquals(4, accepted, "no downstream demand: exactly the capacity is accepted");
        assertFalse(a.tell(99));
        assertTrue(scheduler.stats().groups().size() >= 1);
        a.complete();
        StepVerifier.create(Flux.from(a)).expectNext(0, 1, 2, 3).expectComplete().verify(Duration.ofSeconds(10));
    }

    @Test
    void sendWaitsForSpace() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 2);
        Flux<Integer> out = Flux.from(a);
        StepVerifier.create(out, 0)
                .then(() -> Flux.range(0, 20).concatMap(a::send).then().subscribe(null, null, a::complete))
                .thenRequest(5)
                .expectNextCount(5)
                .thenRequest(Long.MAX_VALUE)
                .expectNextCount(15)
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void skipPolicyDropsFailingMessages() {
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler)
                .behaviour((m, ctx) -> {
                    if (m % 2 == 0) {
                        throw new IllegalStateException("even " + m);
                    }
                    ctx.emit(m);
                    return true;
                })
                .errorPolicy(ErrorPolicy.skip())
                .build();
        Flux.range(1, 10).subscribe(a);
        StepVerifier.create(Flux.from(a)).expectNext(1, 3, 5, 7, 9).expectComplete().verify(Duration.ofSeconds(10));
        assertEquals(5, a.skippedMessages());
    }

    @Test
    void retryPolicyRetriesWithBackoffThenSucceeds() {
        AtomicInteger calls = new AtomicInteger();
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler)
                .behaviour((m, ctx) -> {
                    if (calls.incrementAndGet() < 3) {
                        throw new IllegalStateException("flaky");
                    }
                    ctx.emit(m);
                    return true;
                })
                .errorPolicy(ErrorPolicy.retry(5, Duration.ofMillis(5)))
                .build();
        Flux.just(42).subscribe(a);
        StepVerifier.create(Flux.from(a)).expectNext(42).expectComplete().verify(Duration.ofSeconds(10));
        assertEquals(3, calls.get());
    }

    @Test
    void stopPolicyFailsDownstreamAndCancelsUpstream() {
        AtomicInteger cancelled = new AtomicInteger();
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler)
                .behaviour((m, ctx) -> {
                    throw new IllegalStateException("boom");
                })
                .build();
        Flux.range(1, 1000).doOnCancel(cancelled::incrementAndGet).subscribe(a);
        StepVerifier.create(Flux.from(a)).expectErrorMessage("boom").verify(Duration.ofSeconds(10));
        assertEquals(1, cancelled.get());
    }

    @Test
    void requestZeroFailsWithIllegalArgument() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        Flux.range(1, 10).subscribe(a);
        java.util.concurrent.CompletableFuture<Throwable> error = new java.util.concurrent.CompletableFuture<>();
        a.subscribe(new org.reactivestreams.Subscriber<Integer>() {
            @Override
            public void onSubscribe(org.reactivestreams.Subscription s) {
                s.request(0);
            }

            @Override
            public void onNext(Integer integer) {
                error.completeExceptionally(new AssertionError("no element may arrive"));
            }

            @Override
            public void onError(Throwable t) {
                error.complete(t);
            }

            @Override
            public void onComplete() {
                error.completeExceptionally(new AssertionError("must not complete"));
            }
        });
        assertTrue(error.orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join() instanceof IllegalArgumentException);
    }
}
