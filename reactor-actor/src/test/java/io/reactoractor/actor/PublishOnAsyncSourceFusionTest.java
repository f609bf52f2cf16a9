package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.Exceptions;
import reactor.core.Fuseable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.concurrent.Queues;

/**
 * The fair {@code publishOn} fuses a source that offers asynchronous fusion as Reactor's {@code publishOn} does:
 * it polls the source's own queue, which stays the stream's only buffer, so the source's bound (a bounded
 * unicast sink's {@code FAIL_OVERFLOW}, {@code onBackpressureBuffer(n)}'s overflow error) holds as with Reactor's
 * operator; a separate queue of {@code prefetch} elements absorbed that many more. Reactor's operator runs the
 * same scenario in each test.
 */
class PublishOnAsyncSourceFusionTest {

    private final ActorScheduler actors = ActorScheduler.builder().name("publish-on-async-fusion").threads(2).build();
    private final Scheduler single = Schedulers.newSingle("reactor-publish-on-async");

    @AfterEach
    void tearDown() {
        single.dispose();
        assertTrue(ActorTestSupport.disposeBounded(actors));
    }

    private Function<Flux<Integer>, Publisher<Integer>> reactor() {
        return f -> f.publishOn(single);
    }

    private Function<Flux<Integer>, Publisher<Integer>> ours() {
        return ActorOperators.publishOn(actors);
    }

    /** How many elements a unicast sink with a buffer of 8 accepts while the downstream requests nothing. */
    private static int acceptedWithoutDemand(Function<Flux<Integer>, Publisher<Integer>> operator) {
        Sinks.Many<Integer> sink = Sinks.many().unicast().onBackpressureBuffer(Queues.<Integer>get(8).get());
        BaseSubscriber<Integer> noDemand = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
            }
        };
        Flux.from(operator.apply(sink.asFlux())).subscribe(noDemand);
        int accepted = 0;
        while (accepted < 10_000 && sink.tryEmitNext(accepted) == Sinks.EmitResult.OK) {
            accepted++;
        }
        noDemand.dispose();
        return accepted;
    }

    @Test
    void aBoundedUnicastSinkFailsToEmitAtItsOwnCapacity() {
        int reactor = acceptedWithoutDemand(reactor());
        int ours = acceptedWithoutDemand(ours());
        assertEquals(8, reactor, "Reactor's publishOn fuses the sink: its 8 slots are the only buffer");
        assertEquals(reactor, ours, "the fair publishOn too (was 8 + the prefetch of 256)");
    }

    /** The signals of {@code range(1, 100).onBackpressureBuffer(16)} through the operator, demand after the burst. */
    private static List<Object> overflow(Function<Flux<Integer>, Publisher<Integer>> operator) throws Exception {
        List<Object> signals = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        BaseSubscriber<Integer> late = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                // nothing yet: the range emits its 100 elements into the buffer during the subscription
            }

            @Override
            protected void hookOnNext(Integer v) {
                signals.add(v);
            }

            @Override
            protected void hookOnError(Throwable t) {
                signals.add(Exceptions.isOverflow(t) ? "overflow" : t.toString());
                done.countDown();
            }

            @Override
            protected void hookOnComplete() {
                signals.add("complete");
                done.countDown();
            }
        };
        Flux.from(operator.apply(Flux.range(1, 100).onBackpressureBuffer(16))).subscribe(late);
        Thread.sleep(50);
        late.request(Long.MAX_VALUE);
        assertTrue(done.await(30, TimeUnit.SECONDS), "terminated");
        return signals;
    }

    @Test
    void onBackpressureBufferBeforeTheHopOverflowsAtItsBound() throws Exception {
        List<Object> reactor = overflow(reactor());
        List<Object> ours = overflow(ours());
        assertEquals("overflow", reactor.get(reactor.size() - 1), "Reactor's: " + reactor);
        assertEquals(reactor, ours, "the same elements, then the overflow error");
    }

    /** Elements left in a fused sink's buffer at a cancel go to the discard hook, as with Reactor's operator. */
    private static List<Integer> discardedOnCancel(Function<Flux<Integer>, Publisher<Integer>> operator)
            throws Exception {
        Sinks.Many<Integer> sink = Sinks.many().unicast().onBackpressureBuffer(Queues.<Integer>get(16).get());
        List<Integer> discarded = new CopyOnWriteArrayList<>();
        List<Integer> received = new CopyOnWriteArrayList<>();
        CountDownLatch two = new CountDownLatch(2);
        BaseSubscriber<Integer> sub = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                s.request(2);
            }

            @Override
            protected void hookOnNext(Integer v) {
                received.add(v);
                two.countDown();
            }
        };
        Flux.from(operator.apply(sink.asFlux()))
                .doOnDiscard(Integer.class, discarded::add)
                .subscribe(sub);
        for (int i = 0; i < 10; i++) {
            assertEquals(Sinks.EmitResult.OK, sink.tryEmitNext(i));
        }
        assertTrue(two.await(30, TimeUnit.SECONDS));
        sub.dispose();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (discarded.size() < 8 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(List.of(0, 1), received);
        return discarded;
    }

    @Test
    void whatTheFusedSourceHoldsAtACancelIsDiscarded() throws Exception {
        // Reactor's publishOn discards them too, but not every time: in about 1 run of 10 here its cancel racing
        // its drain on the single thread leaves the discard hook unseen (Reactor's own race, nothing of ours is
        // involved), so its behaviour is the one seen in any of a few tries; ours must hold every time
        List<Integer> reactor = discardedOnCancel(reactor());
        for (int attempt = 1; attempt < 5 && reactor.isEmpty(); attempt++) {
            reactor = discardedOnCancel(reactor());
        }
        assertEquals(List.of(2, 3, 4, 5, 6, 7, 8, 9), reactor);
        assertEquals(reactor, discardedOnCancel(ours()));
    }

    /** A sink fed from another thread: every element once, in order, on the actor's carriers. */
    @Test
    void aFusedSinkFedFromAnotherThreadDeliversEveryElementInOrderOnTheCarriers() throws Exception {
        int n = 50_000;
        Sinks.Many<Integer> sink = Sinks.many().unicast().onBackpressureBuffer(Queues.<Integer>get(1_024).get());
        List<Integer> received = new java.util.ArrayList<>(n);
        java.util.Set<String> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(1);
        Flux.from(ours().apply(sink.asFlux()))
                .subscribe(v -> {
                    received.add(v);
                    threads.add(Thread.currentThread().getName());
                }, e -> done.countDown(), done::countDown);
        Thread producer = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                while (sink.tryEmitNext(i) == Sinks.EmitResult.FAIL_OVERFLOW) {
                    Thread.onSpinWait(); // the bounded buffer is full: the consumer is behind
                }
            }
            sink.tryEmitComplete();
        });
        producer.start();
        assertTrue(done.await(60, TimeUnit.SECONDS), "completed");
        producer.join();
        assertEquals(n, received.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, received.get(i));
        }
        assertTrue(threads.stream().allMatch(t -> t.startsWith("publish-on-async-fusion-")), threads::toString);
    }

    /** Fused on both sides: a unicast source in, {@code expectFusion(ASYNC)} out, as with Reactor's operator. */
    @Test
    void fusedOnBothSidesDeliversEverything() {
        for (Function<Flux<Integer>, Publisher<Integer>> op : List.of(reactor(), ours())) {
            Sinks.Many<Integer> sink = Sinks.many().unicast().onBackpressureBuffer();
            for (int i = 0; i < 100; i++) {
                sink.tryEmitNext(i);
            }
            sink.tryEmitComplete();
            StepVerifier.create(Flux.from(op.apply(sink.asFlux())))
                    .expectFusion(Fuseable.ASYNC)
                    .expectNextCount(100)
                    .expectComplete()
                    .verify(Duration.ofSeconds(30));
        }
    }

    /** A source that fails after elements: the elements, then the error, as with Reactor's operator. */
    @Test
    void aFusedSourcesErrorFollowsItsElements() {
        for (Function<Flux<Integer>, Publisher<Integer>> op : List.of(reactor(), ours())) {
            Sinks.Many<Integer> sink = Sinks.many().unicast().onBackpressureBuffer();
            sink.tryEmitNext(1);
            sink.tryEmitNext(2);
            sink.tryEmitError(new IllegalStateException("boom"));
            StepVerifier.create(Flux.from(op.apply(sink.asFlux())))
                    .expectNext(1, 2)
                    .expectErrorMessage("boom")
                    .verify(Duration.ofSeconds(30));
        }
    }

    /**
     * {@code groupBy}'s groups and {@code window}'s windows offer ASYNC fusion and replenish their parent as they are
     * polled: every element arrives, as through Reactor's operator (a group that is not drained would stall them all).
     */
    @Test
    void groupsAndWindowsThroughTheOperatorDeliverEveryElementAsThroughReactors() {
        for (Function<Flux<Integer>, Publisher<Integer>> op : List.of(reactor(), ours())) {
            Long grouped = Flux.range(0, 20_000)
                    .groupBy(i -> i % 16)
                    .flatMap(g -> Flux.from(op.apply(g)).count(), 16)
                    .reduce(0L, Long::sum)
                    .block(Duration.ofSeconds(60));
            assertEquals(20_000L, grouped);
            Long windowed = Flux.range(0, 20_000)
                    .window(100)
                    .concatMap(w -> Flux.from(op.apply(w)).count())
                    .reduce(0L, Long::sum)
                    .block(Duration.ofSeconds(60));
            assertEquals(20_000L, windowed);
            List<Integer> limited = Flux.range(0, 5_000).hide().limitRate(7)
                    .transform(f -> Flux.from(op.apply(f)))
                    .collectList()
                    .block(Duration.ofSeconds(60));
            assertEquals(5_000, limited.size());
            for (int k = 0; k < limited.size(); k++) {
                assertEquals(k, limited.get(k));
            }
        }
    }
}
