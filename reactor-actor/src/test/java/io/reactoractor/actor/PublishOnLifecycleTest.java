package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * {@link ActorOperators#publishOn} at the edges of a subscription's life, where Reactor's
 * {@code publishOn} is the reference: cancelling discards the queued elements, a disposed group or scheduler rejects
 * the subscription with {@code onError(RejectedExecutionException)}, and
 * {@code Schedulers.onScheduleHook} decorates the drain.
 */
class PublishOnLifecycleTest {

    private final ActorScheduler actors = ActorScheduler.builder().name("publish-on-lifecycle").threads(2).build();

    @AfterEach
    void tearDown() {
        Schedulers.resetOnScheduleHook("publish-on-lifecycle-test");
        assertTrue(ActorTestSupport.disposeBounded(actors));
    }

    private static List<Integer> oneTo(int n) {
        return IntStream.rangeClosed(1, n).boxed().collect(Collectors.toList());
    }

    @Test
    void cancellingAFusedSourceDiscardsItsRestAsReactorDoes() throws InterruptedException {
        // deterministic for a fused source only: the drain polls it, so what is left at the cancel is
        // exactly what was not delivered (an ordinary publisher races its own emission with the cancel)
        for (var op : List.<java.util.function.Function<Flux<Integer>, org.reactivestreams.Publisher<Integer>>>of(
                f -> f.publishOn(Schedulers.single()), ActorOperators.publishOn(actors))) {
            List<Integer> discarded = new CopyOnWriteArrayList<>();
            StepVerifier.create(Flux.from(Flux.range(1, 10).transform(op)).doOnDiscard(Integer.class, discarded::add), 3)
                    .expectNext(1, 2, 3)
                    .thenCancel()
                    .verify(Duration.ofSeconds(10));
            // the cancel came from inside onNext(3): the drain discards once that onNext returns
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (discarded.size() < 7 && System.nanoTime() < until) {
                Thread.sleep(1);
            }
            Thread.sleep(5);
            assertEquals(List.of(4, 5, 6, 7, 8, 9, 10), discarded, "discarded after cancel, " + op);
        }
    }

    @Test
    void aFusableSourceIsPolledOnTheSchedulerNotOnTheSubscribingThread() throws InterruptedException {
        for (var op : List.<java.util.function.Function<Flux<Integer>, org.reactivestreams.Publisher<Integer>>>of(
                f -> f.publishOn(Schedulers.single()), ActorOperators.publishOn(actors, 4))) {
            List<String> nextOn = new CopyOnWriteArrayList<>();
            Iterable<Integer> recording = () -> new java.util.Iterator<>() {
                int i;

                @Override
                public boolean hasNext() {
                    return i < 10;
                }

                @Override
                public Integer next() {
                    nextOn.add(Thread.currentThread().getName());
                    return ++i;
                }
            };
            StepVerifier.create(Flux.fromIterable(recording).transform(op), 0)
                    .expectSubscription()
                    .thenRequest(2)
                    .expectNext(1, 2)
                    .thenRequest(100)
                    .expectNextCount(8)
                    .verifyComplete();
            assertEquals(10, nextOn.size(), nextOn::toString);
            String me = Thread.currentThread().getName();
            // FluxIterable reads the first element when subscribed (to know whether it is empty)
            assertTrue(nextOn.subList(1, 10).stream().noneMatch(me::equals), "polled on the scheduler: " + nextOn);
        }
    }

    @Test
    void aFusedSourceCompletesAndIsDiscardedOnCancel() {
        StepVerifier.create(Flux.range(1, 1000).transform(ActorOperators.publishOn(actors, 16)))
                .expectNextCount(1000)
                .verifyComplete();
        StepVerifier.create(Flux.fromIterable(oneTo(5)).transform(ActorOperators.publishOn(actors)), 0)
                .expectSubscription()
                .thenRequest(2)
                .expectNext(1, 2)
                .thenRequest(10)
                .expectNext(3, 4, 5)
                .verifyComplete();
    }

    @Test
    void aFusedSourceThatThrowsSignalsTheErrorAndIsCancelled() {
        AtomicInteger cancelled = new AtomicInteger();
        Flux<Integer> failing = Flux.<Integer>generate(sink -> {
            throw new IllegalStateException("generator failed");
        });
        StepVerifier.create(failing.transform(ActorOperators.publishOn(actors)))
                .verifyErrorMessage("generator failed");
    }

    @Test
    void aDisposedGroupRejectsTheSubscriptionAndCancelsUpstream() {
        ActorGroup g = actors.group("gone", 1);
        g.dispose();
        AtomicInteger cancelled = new AtomicInteger();
        StepVerifier.create(Flux.range(1, 3).doOnCancel(cancelled::incrementAndGet)
                        .transform(ActorOperators.publishOn(g)))
                .expectSubscription()
                .verifyError(RejectedExecutionException.class);
        assertEquals(1, cancelled.get(), "upstream cancelled");
    }

    /**
     * A synchronously fusable source on a disposed scheduler: fused and cleared through the discard hook before
     * the rejection, as Reactor's {@code publishOn} clears it when its drain is rejected (it discarded nothing:
     * found by a black-box probe, {@code pubon}). Reactor's operator on a disposed parallel scheduler is the peer.
     */
    @Test
    void aFusableSourceOnADisposedSchedulerIsDiscardedAsReactorDoes() {
        ActorScheduler gone = ActorScheduler.builder().name("publish-on-gone").threads(1).build();
        gone.dispose();
        reactor.core.scheduler.Scheduler parallel = Schedulers.newParallel("publish-on-gone-peer", 1);
        parallel.dispose();
        List<Object> ours = new CopyOnWriteArrayList<>();
        List<Object> reactors = new CopyOnWriteArrayList<>();
        StepVerifier.create(Flux.range(1, 10).transform(ActorOperators.publishOn(gone))
                        .doOnDiscard(Object.class, ours::add))
                .verifyError(RejectedExecutionException.class);
        StepVerifier.create(Flux.range(1, 10).publishOn(parallel).doOnDiscard(Object.class, reactors::add))
                .verifyError(RejectedExecutionException.class);
        assertEquals(oneTo(10), reactors, "the peer");
        assertEquals(reactors, ours);
    }

    @Test
    void aSchedulerClosingGracefullyRejectsTheSubscription() {
        ActorScheduler closing = ActorScheduler.builder().name("publish-on-closing").threads(1).build();
        closing.disposeGracefully().block(Duration.ofSeconds(10));
        StepVerifier.create(Flux.just(1).transform(ActorOperators.publishOn(closing)))
                .verifyError(RejectedExecutionException.class);
    }

    /**
     * Closing gracefully while its carriers are busy: the rejection comes at once, not when a carrier
     * frees up (the downstream's request in onSubscribe queued the actor, whose terminal drain then waited
     * for a carrier; a busy task waiting for this stream would never have ended).
     */
    @Test
    void aSchedulerClosingWithBusyCarriersRejectsTheSubscriptionAtOnce() throws InterruptedException {
        ActorScheduler closing = ActorScheduler.builder().name("publish-on-closing-busy").threads(1).build();
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try {
            closing.schedule(() -> {
                started.countDown();
                try {
                    release.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(started.await(10, java.util.concurrent.TimeUnit.SECONDS));
            closing.disposeGracefully().subscribe();
            AtomicInteger cancelled = new AtomicInteger();
            // the carrier stays busy until the verification ends: the error must not need it
            StepVerifier.create(Flux.range(1, 3).hide().doOnCancel(cancelled::incrementAndGet)
                            .transform(ActorOperators.publishOn(closing)))
                    .expectSubscription()
                    .expectError(RejectedExecutionException.class)
                    .verify(Duration.ofSeconds(5));
            assertEquals(1, cancelled.get(), "upstream cancelled once");
        } finally {
            release.countDown();
            assertTrue(ActorTestSupport.disposeBounded(closing));
        }
    }

    /** One downstream cancel cancels upstream once, as Reactor's publishOn (unfused and output-fused). */
    @Test
    void oneCancelCancelsUpstreamOnce() throws InterruptedException {
        for (boolean fusedConsumer : new boolean[] {false, true}) {
            int reactors = cancelsOfOneCancel(f -> f.publishOn(Schedulers.single(), 16), fusedConsumer);
            int ours = cancelsOfOneCancel(ActorOperators.publishOn(actors, 16), fusedConsumer);
            assertEquals(1, reactors, "Reactor's publishOn, fused consumer " + fusedConsumer);
            assertEquals(1, ours, "ours, fused consumer " + fusedConsumer);
        }
    }

    /** @return how often the upstream saw a cancel after the downstream cancelled once */
    private static int cancelsOfOneCancel(
            java.util.function.Function<Flux<Integer>, org.reactivestreams.Publisher<Integer>> op,
            boolean fusedConsumer) throws InterruptedException {
        AtomicInteger cancels = new AtomicInteger();
        Flux<Integer> stream = Flux.from(Flux.range(1, 100).hide().doOnCancel(cancels::incrementAndGet).transform(op));
        if (fusedConsumer) {
            stream = stream.publishOn(Schedulers.single(), 4); // Reactor's publishOn polls the operator (ASYNC)
        }
        StepVerifier.create(stream, 1)
                .expectNext(1)
                .thenAwait(Duration.ofMillis(50))
                .thenCancel()
                .verify(Duration.ofSeconds(10));
        Thread.sleep(100); // a second cancel would come from the actor's terminal drain, on its carrier
        return cancels.get();
    }

    /** Rule 2.13, also where Reactor's publishOn lets a null through (a null error, a one-slot queue). */
    @Test
    void nullSignalsFromUpstreamAreNullPointerExceptions() {
        for (int prefetch : new int[] {1, 256}) {
            java.util.concurrent.atomic.AtomicReference<reactor.core.CoreSubscriber<? super Integer>> up =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Flux<Integer> source = Flux.from(sub -> {
                @SuppressWarnings("unchecked")
                reactor.core.CoreSubscriber<? super Integer> cs = (reactor.core.CoreSubscriber<? super Integer>) sub;
                up.set(cs);
                sub.onSubscribe(reactor.core.publisher.Operators.emptySubscription());
            });
            List<Object> signals = new CopyOnWriteArrayList<>();
            Flux.from(source.transform(ActorOperators.publishOn(actors, prefetch)))
                    .subscribe(signals::add, signals::add, () -> signals.add("complete"));
            assertThrows(NullPointerException.class, () -> up.get().onNext(null), "onNext, prefetch " + prefetch);
            assertThrows(NullPointerException.class, () -> up.get().onError(null), "onError, prefetch " + prefetch);
            up.get().onComplete();
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (signals.isEmpty() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            assertEquals(List.of("complete"), signals, "nothing but the completion, prefetch " + prefetch);
        }
    }

    @Test
    void theOnScheduleHookDecoratesTheDrain() {
        List<String> threads = new CopyOnWriteArrayList<>();
        Schedulers.onScheduleHook("publish-on-lifecycle-test", r -> () -> {
            threads.add(Thread.currentThread().getName());
            r.run();
        });
        StepVerifier.create(Flux.range(1, 5).transform(ActorOperators.publishOn(actors)))
                .expectNext(1, 2, 3, 4, 5)
                .verifyComplete();
        assertTrue(!threads.isEmpty(), "the hook's decorated drain ran");
        assertTrue(threads.stream().allMatch(t -> t.startsWith("publish-on-lifecycle")), threads::toString);
    }

    @Test
    void aNullSchedulerIsANullPointerException() {
        assertThrows(NullPointerException.class, () -> ActorOperators.publishOn(null));
        assertThrows(NullPointerException.class, () -> ActorOperators.publishOn(null, 8));
    }

    @Test
    void scannableReportsUpstreamTerminationAndUnboundedDemandAsReactorDoes() {
        java.util.concurrent.atomic.AtomicReference<Object> sub = new java.util.concurrent.atomic.AtomicReference<>();
        StepVerifier.create(Flux.range(1, 3).transform(ActorOperators.publishOn(actors)), Long.MAX_VALUE)
                .consumeSubscriptionWith(sub::set)
                .expectNextCount(3)
                .verifyComplete();
        Scannable sc = Scannable.from(sub.get());
        assertEquals(Boolean.TRUE, sc.scan(Scannable.Attr.TERMINATED), "upstream completed");
        assertEquals(Long.MAX_VALUE, sc.scan(Scannable.Attr.REQUESTED_FROM_DOWNSTREAM), "unbounded stays unbounded");
    }

    /**
     * What a fair publishOn holds is counted where an actor's mailbox is: the group's and the scheduler's
     * {@code BUFFERED} (and so {@code reactor.actor.queued}); it counted as 0, or 1 while demand was pending.
     */
    @Test
    void theElementsAFairPublishOnHoldsCountInItsGroupsAndSchedulersBuffered() {
        io.reactoractor.ActorGroup g = actors.group("held", 1);
        reactor.test.publisher.TestPublisher<Integer> up = reactor.test.publisher.TestPublisher.create();
        reactor.core.publisher.BaseSubscriber<Integer> noDemand = new reactor.core.publisher.BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
            }
        };
        up.flux().transform(ActorOperators.publishOn(g, 256)).subscribe(noDemand);
        for (int i = 0; i < 200; i++) {
            up.next(i);
        }
        assertEquals(200, g.scan(Scannable.Attr.BUFFERED), "the group");
        assertTrue(actors.scan(Scannable.Attr.BUFFERED) >= 200, "the scheduler");
        noDemand.dispose();
        io.reactoractor.TestHooks.await(() -> Integer.valueOf(0).equals(g.scan(Scannable.Attr.BUFFERED)),
                "discarded at the cancel");
    }

    @Test
    void aDownstreamOnNextThatThrowsEndsTheStreamAndCancelsUpstream() throws InterruptedException {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Schedulers.onHandleError("publish-on-lifecycle-test", (t, e) -> reported.add(e));
        try {
            List<Integer> seen = new CopyOnWriteArrayList<>();
            java.util.concurrent.CountDownLatch cancelled = new java.util.concurrent.CountDownLatch(1);
            Flux.range(1, 100).hide().doOnCancel(cancelled::countDown)
                    .transform(ActorOperators.publishOn(actors))
                    .subscribe(new org.reactivestreams.Subscriber<Integer>() {
                        @Override
                        public void onSubscribe(org.reactivestreams.Subscription sub) {
                            sub.request(Long.MAX_VALUE);
                        }

                        @Override
                        public void onNext(Integer v) {
                            seen.add(v);
                            if (v == 2) {
                                throw new IllegalStateException("rule 2.13 broken by the subscriber");
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
            assertTrue(cancelled.await(10, java.util.concurrent.TimeUnit.SECONDS), "upstream cancelled");
            Thread.sleep(50);
            assertEquals(List.of(1, 2), seen, "no signal after the throwing onNext");
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (reported.isEmpty() && System.nanoTime() < until) {
                Thread.sleep(1);
            }
            assertTrue(reported.stream().anyMatch(e -> e instanceof IllegalStateException), reported::toString);
        } finally {
            Schedulers.resetOnHandleError("publish-on-lifecycle-test");
        }
    }

    /**
     * No onComplete for a stream cut short by a cancel. With a synchronously fused fromIterable and a discard
     * hook, the source's own cancel discards its rest while the drain polls it; the drain read the null it
     * then got as the end of the stream and sent onComplete with part of the stream delivered (about one
     * round in 250 of this test, when the carriers start each round parked). Reactor's publishOn checks the
     * cancel before it reads a null as the end.
     */
    @org.junit.jupiter.api.Test
    void aCancelWhileTheDrainPollsAFusedIterableSendsNoOnComplete() throws InterruptedException {
        java.util.List<Integer> source = java.util.stream.IntStream.range(0, 500).boxed().toList();
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        for (int round = 0; System.nanoTime() < deadline; round++) {
            java.util.concurrent.atomic.AtomicInteger received = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicBoolean completed = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicReference<org.reactivestreams.Subscription> subscription =
                    new java.util.concurrent.atomic.AtomicReference<>();
            reactor.util.context.Context discarding = reactor.core.publisher.Operators.enableOnDiscard(
                    reactor.util.context.Context.empty(), x -> { }); // fromIterable's cancel then iterates its rest
            reactor.core.publisher.Flux.fromIterable(source).transform(ActorOperators.publishOn(actors, 64))
                    .subscribe(new reactor.core.CoreSubscriber<Integer>() {
                        @Override
                        public reactor.util.context.Context currentContext() {
                            return discarding;
                        }

                        @Override
                        public void onSubscribe(org.reactivestreams.Subscription s) {
                            subscription.set(s);
                        }

                        @Override
                        public void onNext(Integer value) {
                            received.incrementAndGet();
                        }

                        @Override
                        public void onError(Throwable t) {
                        }

                        @Override
                        public void onComplete() {
                            completed.set(true);
                        }
                    });
            subscription.get().request(Long.MAX_VALUE);
            int wait = (round * 7) % 50;
            long spin = System.nanoTime() + 2_000_000_000L;
            while (received.get() < wait && System.nanoTime() < spin) {
                Thread.onSpinWait();
            }
            subscription.get().cancel();
            Thread.sleep(15); // the terminal signal, if any, has come; and the carriers park before the next round
            assertFalse(completed.get() && received.get() < source.size(),
                    "round " + round + ": onComplete for a cancelled stream, " + received + " of 500 delivered");
        }
    }
}
