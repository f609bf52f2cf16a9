package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Operators;
import reactor.test.StepVerifier;

/**
 * Where Reactor's conventions say what happens to elements nobody will receive: results the behaviour
 * emitted beyond the demand go to the discard hook when the actor ends, nothing reaches a subscriber
 * after it cancelled (also not the rest of the behaviour call whose first result it cancelled in), an
 * element an upstream sends after its own terminal signal goes to {@code Hooks.onNextDropped}; and a
 * credit given back goes to a waiting {@code send} before a {@code tell} can take it.
 */
class ActorReactorConventionsTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-conventions").threads(2).build();

    @AfterEach
    void tearDown() {
        Hooks.resetOnNextDropped();
        Hooks.resetOnOperatorError();
        reactor.core.scheduler.Schedulers.resetOnHandleError();
        assertTrue(ActorTestSupport.disposeBounded(scheduler));
    }

    /** Waits up to 10 s for {@code condition} (usable inside StepVerifier's {@code then} steps). */
    private static void await(BooleanSupplier condition, String what) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("not within 10 s: " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
        }
    }

    /** Three results per message; the subscriber takes one, so two wait in the out buffer. */
    private Actor<Integer, Integer> threeResultsPerMessage() {
        return Actor.<Integer, Integer>builder(scheduler).capacity(8).behaviour((m, c) -> {
            c.emit(m * 10 + 1);
            c.emit(m * 10 + 2);
            c.emit(m * 10 + 3);
            return true;
        }).build();
    }

    /** The Inbound section: n upstreams share the mailbox; a fast one attached first must not starve the rest. */
    @Test
    void fastSynchronousUpstreamsShareTheMailbox() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        Flux.<Integer>generate(sink -> sink.next(0)).subscribe(a);
        Flux.<Integer>generate(sink -> sink.next(1)).subscribe(a.newSubscriber());
        Flux.<Integer>generate(sink -> sink.next(2)).subscribe(a.newSubscriber());
        java.util.Map<Integer, Long> counts = Flux.from(a).take(6_000)
                .collect(java.util.stream.Collectors.groupingBy(x -> x, java.util.stream.Collectors.counting()))
                .block(Duration.ofSeconds(30));
        // the extra ports' window is max(1, capacity / 4): a fair share, not a third each, but never starved
        for (int tag = 0; tag < 3; tag++) {
            long got = counts.getOrDefault(tag, 0L);
            assertTrue(got >= 600, "upstream " + tag + " got " + got + " of 6,000: " + counts);
        }
    }

    /** "Downstream cancellation: the actor stops and cancels its upstreams", also while a user suspends it. */
    @Test
    void aDownstreamCancelStopsAUserSuspendedActor() {
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        Flux.<Integer>never().doOnCancel(() -> upstreamCancelled.set(true)).subscribe(a);
        a.suspend();
        a.tell(1);
        List<Object> signals = new CopyOnWriteArrayList<>();
        reactor.core.Disposable d = Flux.from(a).subscribe(signals::add, signals::add, () -> signals.add("complete"));
        d.dispose();
        await(upstreamCancelled::get, "upstream cancelled without a resume");
        await(a::isTerminated, "the actor stopped");
        assertEquals(List.of(), signals, "nothing to the cancelled subscriber");
        assertTrue(a.isTerminated());
        assertFalse(a.resume(), "a terminated actor has no suspension to lift");
        assertFalse(a.isSuspended());
    }

    @Test
    void anInboundSubscriberHandedOutCountsForCompletionBeforeItIsSubscribed() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 16);
        reactor.core.CoreSubscriber<Integer> extra = a.newSubscriber();
        Flux.just(1, 2).subscribe(a);
        StepVerifier.create(a)
                .expectNext(1, 2)
                .expectNoEvent(Duration.ofMillis(100)) // not complete: the extra subscriber has not completed
                .then(() -> Flux.just(3, 4).subscribe(extra))
                .expectNext(3, 4)
                .expectComplete()
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void scannableParentIsTheUpstreamAndRunOnIsTheGroupAsForReactorsOperators() {
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler).capacity(8)
                .behaviour((m, c) -> {
                    c.emit(m);
                    return true;
                }).build();
        assertEquals(null, a.scanUnsafe(reactor.core.Scannable.Attr.PARENT), "no upstream yet");
        reactor.test.publisher.TestPublisher<Integer> up = reactor.test.publisher.TestPublisher.create();
        up.subscribe(a);
        Object parent = a.scanUnsafe(reactor.core.Scannable.Attr.PARENT);
        assertTrue(parent instanceof org.reactivestreams.Subscription, "the upstream's subscription: " + parent);
        assertTrue(a.scanUnsafe(reactor.core.Scannable.Attr.RUN_ON) == a.group());
        StepVerifier.create(a).then(() -> up.next(1).complete()).expectNext(1).verifyComplete();
    }

    /**
     * A {@code newSubscriber()} port scans as a Reactor inner subscriber does: a walk down from its upstream
     * ({@code Scannable.from(flux).actuals()}) goes through the port to the actor and on to its subscriber; the
     * port's {@code PARENT} is its upstream, {@code PREFETCH} its window; {@code TERMINATED} once the upstream
     * ended, {@code CANCELLED} once the actor cancelled it.
     */
    @Test
    void aNewSubscriberPortIsScannableAndAWalkDownGoesThroughItToTheActor() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        BaseSubscriber<Integer> downstream = new BaseSubscriber<>() {
        };
        a.subscribe(downstream);
        reactor.core.CoreSubscriber<Integer> port = a.newSubscriber();
        reactor.core.Scannable scan = reactor.core.Scannable.from(port);
        assertTrue(scan.isScanAvailable(), "the port is Scannable");
        assertEquals(null, scan.scan(reactor.core.Scannable.Attr.PARENT), "no upstream yet");
        assertEquals(2, scan.scan(reactor.core.Scannable.Attr.PREFETCH), "its window: capacity / 4");
        assertEquals(reactor.core.Scannable.Attr.RunStyle.SYNC, scan.scan(reactor.core.Scannable.Attr.RUN_STYLE));

        reactor.test.publisher.TestPublisher<Integer> up = reactor.test.publisher.TestPublisher.create();
        Flux<Integer> source = up.flux().map(x -> x);
        source.subscribe(port);
        Object parent = scan.scan(reactor.core.Scannable.Attr.PARENT);
        assertTrue(parent instanceof org.reactivestreams.Subscription, "the upstream's subscription: " + parent);
        List<Object> walk = reactor.core.Scannable.from(parent).actuals().collect(java.util.stream.Collectors.toList());
        assertEquals(List.of(port, a), walk.subList(0, 2), "map's subscriber's actual is the port, then the actor");
        assertTrue(a.scanUnsafe(reactor.core.Scannable.Attr.ACTUAL) == downstream, "then the actor's subscriber");
        assertEquals(Boolean.FALSE, scan.scan(reactor.core.Scannable.Attr.TERMINATED));
        assertEquals(Boolean.FALSE, scan.scan(reactor.core.Scannable.Attr.CANCELLED));

        up.complete();
        assertEquals(Boolean.TRUE, scan.scan(reactor.core.Scannable.Attr.TERMINATED), "the upstream ended");
        assertEquals(Boolean.FALSE, scan.scan(reactor.core.Scannable.Attr.CANCELLED));

        reactor.core.CoreSubscriber<Integer> cancelled = a.newSubscriber();
        Flux.<Integer>never().subscribe(cancelled);
        downstream.cancel();
        await(a::isTerminated, "the cancelled actor ends");
        await(() -> Boolean.TRUE.equals(reactor.core.Scannable.from(cancelled).scan(reactor.core.Scannable.Attr.CANCELLED)),
                "the actor cancelled the port's upstream");
        assertEquals(Boolean.FALSE, reactor.core.Scannable.from(cancelled).scan(reactor.core.Scannable.Attr.TERMINATED));

        reactor.core.CoreSubscriber<Integer> late = a.newSubscriber();
        Flux.<Integer>never().subscribe(late);
        assertEquals(Boolean.TRUE, reactor.core.Scannable.from(late).scan(reactor.core.Scannable.Attr.CANCELLED),
                "subscribed to a terminated actor: cancelled at once");
    }

    /**
     * A walk down from the source reaches the final subscriber (the actor answers {@code ACTUAL}), and after a
     * downstream cancel the actor is {@code CANCELLED}, not {@code TERMINATED}: Reactor's unicast sink, the peer,
     * answers the same.
     */
    @Test
    void actualIsTheSubscriberAndACancelledActorIsCancelledNotTerminatedAsAReactorSinksIs() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        reactor.core.publisher.Sinks.Many<Integer> sink = reactor.core.publisher.Sinks.many().unicast().onBackpressureBuffer();
        assertEquals(null, a.scanUnsafe(reactor.core.Scannable.Attr.ACTUAL), "no subscriber yet");
        BaseSubscriber<Integer> ours = new BaseSubscriber<>() {
        };
        BaseSubscriber<Integer> theirs = new BaseSubscriber<>() {
        };
        a.subscribe(ours);
        sink.asFlux().subscribe(theirs);
        reactor.core.Scannable sinkScan = reactor.core.Scannable.from(sink);
        assertTrue(a.scanUnsafe(reactor.core.Scannable.Attr.ACTUAL) == ours, "the actor's subscriber");
        assertTrue(sinkScan.scan(reactor.core.Scannable.Attr.ACTUAL) != null, "as the sink answers its subscriber");

        ours.cancel();
        theirs.cancel();
        await(a::isTerminated, "the cancelled actor ends");
        assertEquals(Boolean.TRUE, sinkScan.scan(reactor.core.Scannable.Attr.CANCELLED));
        assertEquals(Boolean.FALSE, sinkScan.scan(reactor.core.Scannable.Attr.TERMINATED), "Reactor's sink");
        assertEquals(Boolean.TRUE, a.scan(reactor.core.Scannable.Attr.CANCELLED));
        assertEquals(Boolean.FALSE, a.scan(reactor.core.Scannable.Attr.TERMINATED), "cancelled, not terminated");

        Actor<Integer, Integer> completed = Actor.identity(scheduler, 8);
        StepVerifier.create(completed).then(completed::complete).verifyComplete();
        await(completed::isTerminated, "ended");
        assertEquals(Boolean.TRUE, completed.scan(reactor.core.Scannable.Attr.TERMINATED), "a completed actor is");
        assertEquals(Boolean.FALSE, completed.scan(reactor.core.Scannable.Attr.CANCELLED));
    }

    @Test
    void theSubscriptionIsScannableAndTheDemandScannedIsTheDemandNotYetMet() {
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler).capacity(8)
                .behaviour((m, c) -> {
                    c.emit(m);
                    return true;
                }).build();
        List<Integer> got = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicReference<org.reactivestreams.Subscription> sub =
                new java.util.concurrent.atomic.AtomicReference<>();
        a.subscribe(new BaseSubscriber<Integer>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                sub.set(s);
                s.request(10);
            }

            @Override
            protected void hookOnNext(Integer v) {
                got.add(v);
            }
        });
        reactor.core.Scannable scannable = reactor.core.Scannable.from(sub.get());
        assertTrue(scannable.isScanAvailable(), "the actor's subscription is Scannable, as a Reactor sink's is");
        assertTrue(scannable.scan(reactor.core.Scannable.Attr.PARENT) == a, "its parent is the actor");
        assertEquals(a.path(), scannable.name());
        assertEquals(10L, a.scan(reactor.core.Scannable.Attr.REQUESTED_FROM_DOWNSTREAM));
        for (int i = 0; i < 4; i++) {
            a.tell(i);
        }
        await(() -> got.size() == 4, "four results");
        // what Reactor's operators report: the demand not yet met (6), not the total requested (10)
        await(() -> Long.valueOf(6L).equals(a.scan(reactor.core.Scannable.Attr.REQUESTED_FROM_DOWNSTREAM)),
                "6 outstanding, scanned " + a.scan(reactor.core.Scannable.Attr.REQUESTED_FROM_DOWNSTREAM));
        sub.get().request(Long.MAX_VALUE);
        assertEquals(Long.MAX_VALUE, a.scan(reactor.core.Scannable.Attr.REQUESTED_FROM_DOWNSTREAM));
        a.complete();
    }

    @Test
    void aSubscriberThatCancelsInsideOnSubscribeIsNotSignalledAfterwards() throws Exception {
        for (int round = 0; round < 20; round++) {
            Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
            List<Object> signals = new CopyOnWriteArrayList<>();
            a.subscribe(new org.reactivestreams.Subscriber<Integer>() {
                @Override
                public void onSubscribe(org.reactivestreams.Subscription s) {
                    s.cancel();
                    // the actor terminates on a carrier meanwhile (the cancel's turn)
                    await(a::isTerminated, "the cancel terminated the actor");
                }

                @Override
                public void onNext(Integer v) {
                    signals.add(v);
                }

                @Override
                public void onError(Throwable t) {
                    signals.add(t);
                }

                @Override
                public void onComplete() {
                    signals.add("complete");
                }
            });
            Thread.sleep(5);
            assertEquals(List.of(), signals, "rule 1.8: a cancelled subscriber is not signalled");
        }
    }

    @Test
    void aSubscriberWhoseOnSubscribeThrowsGetsTheErrorAndTheActorStops() {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        IllegalStateException boom = new IllegalStateException("onSubscribe failed");
        List<Object> signals = new CopyOnWriteArrayList<>();
        // rule 1.9: subscribe returns normally; rule 2.13: the subscription counts as cancelled
        a.subscribe(new org.reactivestreams.Subscriber<Integer>() {
            @Override
            public void onSubscribe(org.reactivestreams.Subscription s) {
                throw boom;
            }

            @Override
            public void onNext(Integer v) {
                signals.add(v);
            }

            @Override
            public void onError(Throwable t) {
                signals.add(t);
            }

            @Override
            public void onComplete() {
                signals.add("complete");
            }
        });
        assertEquals(List.of(boom), signals, "the error, as Reactor's publishers report a throwing onSubscribe");
        await(a::isTerminated, "the actor stopped as for a cancel, its slot not held by a broken subscriber");
    }

    @Test
    void aResultEmittedThroughAContextKeptPastTheEndGoesToTheDroppedHookAsAfterAFluxSinksCompletion() {
        List<Object> dropped = new CopyOnWriteArrayList<>();
        Hooks.onNextDropped(dropped::add);
        List<Object> discarded = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicReference<ActorContext<String>> kept =
                new java.util.concurrent.atomic.AtomicReference<>();
        Actor<Integer, String> a = Actor.<Integer, String>builder(scheduler).capacity(8).behaviour((m, ctx) -> {
            kept.set(ctx);
            ctx.emit("v" + m);
            return true;
        }).build();
        StepVerifier.create(Flux.from(a).doOnDiscard(Object.class, discarded::add))
                .then(() -> {
                    a.tell(1);
                    a.complete();
                })
                .expectNext("v1")
                .verifyComplete();
        kept.get().emit("late");
        // Reactor's peer: FluxSink.next after complete() goes to the same hook
        java.util.concurrent.atomic.AtomicReference<reactor.core.publisher.FluxSink<String>> sink =
                new java.util.concurrent.atomic.AtomicReference<>();
        Flux.<String>create(sink::set).subscribe();
        sink.get().complete();
        sink.get().next("peer-late");
        assertEquals(List.of("late", "peer-late"), dropped);
        assertEquals(List.of(), discarded);
    }

    @Test
    void resultsWaitingForDemandAreDiscardedOnCancelBeforeTheMailbox() {
        List<Object> discarded = new CopyOnWriteArrayList<>();
        Actor<Integer, Integer> a = threeResultsPerMessage();
        StepVerifier.create(Flux.from(a).doOnDiscard(Object.class, discarded::add), 1)
                .then(() -> {
                    a.tell(1);
                    a.tell(2);
                })
                .expectNext(11)
                // the behaviour ran for message 1 and its other results wait; message 2 waits too
                .then(() -> await(() -> a.mailboxSize() == 1, "message 2 waiting behind the buffered results"))
                .thenCancel()
                .verify(Duration.ofSeconds(10));
        await(() -> discarded.size() >= 3, "three discarded");
        assertEquals(List.of(12, 13, 2), discarded);
    }

    @Test
    void resultsWaitingForDemandAreDiscardedOnDispose() {
        List<Object> discarded = new CopyOnWriteArrayList<>();
        Actor<Integer, Integer> a = threeResultsPerMessage();
        StepVerifier.create(Flux.from(a).doOnDiscard(Object.class, discarded::add), 1)
                .then(() -> a.tell(1))
                .expectNext(11)
                .then(() -> {
                    await(() -> a.processedMessages() == 1, "message 1 processed");
                    a.dispose();
                })
                .expectError(java.util.concurrent.CancellationException.class)
                .verify(Duration.ofSeconds(10));
        assertEquals(List.of(12, 13), discarded);
    }

    @Test
    void nothingReachesASubscriberAfterItCancelledInsideOnNext() {
        Actor<Integer, Integer> a = threeResultsPerMessage();
        List<Integer> received = new CopyOnWriteArrayList<>();
        List<Object> discarded = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> cancelled = new CompletableFuture<>();
        Flux.from(a).doOnDiscard(Object.class, discarded::add).subscribe(new BaseSubscriber<Integer>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                request(10);
            }

            @Override
            protected void hookOnNext(Integer v) {
                received.add(v);
                cancel();
                cancelled.complete(null);
            }
        });
        a.tell(0);
        cancelled.join();
        await(a::isTerminated, "the actor ends");
        assertEquals(List.of(1), received, "the rest of the behaviour call is not delivered");
        assertEquals(List.of(2, 3), discarded, "and goes to the discard hook");
    }

    @Test
    void anElementAfterTheUpstreamsOwnCompletionGoesToOnNextDropped() {
        List<Object> dropped = new CopyOnWriteArrayList<>();
        Hooks.onNextDropped(dropped::add);
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        List<Integer> received = new CopyOnWriteArrayList<>();
        Flux.from(a).subscribe(received::add);
        a.onSubscribe(Operators.emptySubscription());
        a.onNext(1);
        a.onComplete();
        a.onNext(2); // rule 1.7 broken by the upstream
        assertEquals(List.of(2), dropped);
        await(a::isTerminated, "completed");
        assertEquals(List.of(1), received);
    }

    /**
     * The actor's promise "waiting sends first": the credit a leaving message gives back goes to the
     * waiting send, even while a tell() spins on the mailbox (it could take the credit between the
     * give-back and the hand-over: about 2 rounds in 100 before the fix).
     */
    @Test
    void aReturnedCreditGoesToTheWaitingSendBeforeATell() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            Actor<Integer, Integer> a = Actor.identity(scheduler, 1);
            ActorTestSupport.TerminalRecorder<Integer> r = new ActorTestSupport.TerminalRecorder<>(s -> { });
            a.subscribe(r);
            assertTrue(a.tell(0), "round " + round);
            CompletableFuture<Void> accepted = new CompletableFuture<>();
            a.send(1).subscribe(null, accepted::completeExceptionally, () -> accepted.complete(null));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean tellWonOverTheSend = new AtomicBoolean();
            java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
            Thread teller = new Thread(() -> {
                while (!stop.get()) {
                    attempts.incrementAndGet();
                    if (!accepted.isDone() && a.tell(100)) {
                        tellWonOverTheSend.set(true);
                    }
                }
            });
            teller.start();
            try {
                await(() -> attempts.get() > 100, "the teller is spinning");
                r.subscription.request(1); // message 0 leaves: its credit comes back
                await(() -> accepted.isDone() || tellWonOverTheSend.get(), "the send accepted, or a tell instead");
            } finally {
                stop.set(true);
                teller.join(10_000);
            }
            assertTrue(!tellWonOverTheSend.get(), "round " + round + ": a tell took the credit a waiting send was owed");
            accepted.get(10, TimeUnit.SECONDS);
            a.dispose();
        }
    }

    private static final int ROUNDS = Integer.getInteger("repro.n", 300);

    /**
     * The README's credit rule: a sole upstream on the actor's own Subscriber side holds every credit, so
     * tell is refused and send waits though the mailbox is empty; through newSubscriber() it holds a
     * quarter and tell/send get the rest.
     */
    @Test
    void aSoleUpstreamHoldsEveryCreditButOneThroughNewSubscriberLeavesRoomForTell() {
        Actor<Integer, Integer> own = Actor.identity(scheduler, 16);
        Flux.<Integer>never().subscribe(own);
        Flux.from(own).subscribe();
        assertEquals(0, own.mailboxSize());
        assertFalse(own.tell(1), "every credit is the upstream's demand");
        reactor.test.StepVerifier.create(own.send(2)).expectSubscription()
                .expectNoEvent(Duration.ofMillis(50)).thenCancel().verify(Duration.ofSeconds(10));
        own.dispose();

        Actor<Integer, Integer> port = Actor.identity(scheduler, 16);
        List<Integer> got = new CopyOnWriteArrayList<>();
        List<Long> requested = new CopyOnWriteArrayList<>();
        Flux.<Integer>never().doOnRequest(requested::add).subscribe(port.newSubscriber());
        Flux.from(port).subscribe(got::add);
        assertEquals(List.of(4L), requested, "a quarter of the capacity");
        for (int i = 0; i < 12; i++) {
            assertTrue(port.tell(i), "tell " + i);
        }
        port.send(12).block(Duration.ofSeconds(10));
        await(() -> got.size() == 13, "the told and sent messages processed");
        port.dispose();
    }

    /** A raw upstream that keeps the subscriber it was given, to signal it by hand. */
    private static final class ManualUpstream<T> implements org.reactivestreams.Publisher<T> {
        volatile org.reactivestreams.Subscriber<? super T> subscriber;
        final AtomicBoolean cancelled = new AtomicBoolean();

        @Override
        public void subscribe(org.reactivestreams.Subscriber<? super T> s) {
            subscriber = s;
            s.onSubscribe(new org.reactivestreams.Subscription() {
                @Override
                public void request(long n) {
                }

                @Override
                public void cancel() {
                    cancelled.set(true);
                }
            });
        }
    }

    /**
     * The actor is a CoreSubscriber, as Reactor's processors are: Flux.subscribe hands the actor itself to
     * the upstream (not Reactor's StrictSubscriber wrapper, whose context is empty), and the context it
     * exposes is its subscriber's: an upstream's deferContextual sees the downstream's contextWrite.
     */
    @Test
    void theActorExposesItsSubscribersContextToItsUpstream() {
        Actor<String, String> a = Actor.identity(scheduler, 8);
        List<String> got = new CopyOnWriteArrayList<>();
        Flux.from(a).contextWrite(reactor.util.context.Context.of("tenant", "t-1")).subscribe(got::add);
        Flux.deferContextual(c -> Flux.just(c.getOrDefault("tenant", "none"))).subscribe(a);
        await(() -> got.contains("t-1"), "the upstream saw the subscriber's context: " + got);
        assertEquals("t-1", a.currentContext().get("tenant"));

        Actor<String, String> b = Actor.identity(scheduler, 8);
        Flux.from(b).contextWrite(reactor.util.context.Context.of("tenant", "t-2")).subscribe();
        ManualUpstream<String> raw = new ManualUpstream<>();
        Flux.from(raw).subscribe(b);
        assertTrue(raw.subscriber == b, "the actor itself, not a wrapper: " + raw.subscriber);
        assertEquals("t-2", b.newSubscriber().currentContext().get("tenant"));
        assertEquals("own", b.newSubscriber(reactor.util.context.Context.of("tenant", "own")).currentContext()
                .get("tenant"));
        b.dispose();
    }

    /**
     * Elements dropped on the inbound side go to the subscriber's discard hook, as Reactor's publishOn sends
     * them to its downstream's: one arriving after the downstream cancelled, and the one that overflows
     * the demand (the mailbox's messages with it, each once). They went to an empty context's hook.
     */
    @Test
    void inboundDropsGoToTheSubscribersDiscardHook() {
        Actor<Integer, Integer> late = Actor.identity(scheduler, 4);
        List<Object> discarded = new CopyOnWriteArrayList<>();
        ManualUpstream<Integer> raw = new ManualUpstream<>();
        raw.subscribe(late);
        reactor.core.Disposable d = Flux.from(late).doOnDiscard(Object.class, discarded::add).subscribe();
        d.dispose();
        await(raw.cancelled::get, "upstream cancelled");
        raw.subscriber.onNext(42); // in flight when the cancel happened
        assertEquals(List.of(42), discarded);

        Actor<Integer, Integer> overflow = Actor.identity(scheduler, 4);
        List<Object> overflowDiscarded = new CopyOnWriteArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        Flux.from(overflow).doOnDiscard(Object.class, overflowDiscarded::add)
                .subscribe(new BaseSubscriber<Integer>() {
                    @Override
                    protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                        // no demand: the messages stay in the mailbox
                    }

                    @Override
                    protected void hookOnError(Throwable t) {
                        errors.add(t);
                    }
                });
        ManualUpstream<Integer> eager = new ManualUpstream<>();
        eager.subscribe(overflow);
        for (int i = 1; i <= 5; i++) {
            eager.subscriber.onNext(i); // 4 asked for, 5 sent
        }
        await(() -> !errors.isEmpty(), "the overflow error");
        assertTrue(reactor.core.Exceptions.isOverflow(errors.get(0)), errors.toString());
        await(() -> overflowDiscarded.size() == 5, "every message discarded: " + overflowDiscarded);
        assertEquals(java.util.Set.of(1, 2, 3, 4, 5), new java.util.HashSet<>(overflowDiscarded));
    }

    /**
     * A behaviour's error goes through Hooks.onOperatorError, global or local to the subscriber's context,
     * as the errors of Reactor's operators' user code do (publishOn().map(..) delivers what the hook
     * returns); the error policy then acts on the hook's result. The raw error was delivered.
     */
    @Test
    void aBehavioursErrorGoesThroughOnOperatorError() {
        Hooks.onOperatorError((e, data) -> new IllegalStateException("hooked:" + e.getMessage() + ":" + data));
        Actor<Integer, Integer> global = Actor.<Integer, Integer>builder(scheduler).behaviour((m, ctx) -> {
            throw new IllegalArgumentException("boom");
        }).build();
        global.tell(1);
        StepVerifier.create(global).expectErrorMessage("hooked:boom:1").verify(Duration.ofSeconds(10));

        Actor<Integer, Integer> local = Actor.<Integer, Integer>builder(scheduler).behaviour((m, ctx) -> {
            throw new IllegalArgumentException("boom");
        }).build();
        local.tell(2);
        java.util.function.BiFunction<Throwable, Object, Throwable> localHook =
                (e, data) -> new IllegalStateException("local:" + data);
        StepVerifier.create(Flux.from(local).contextWrite(reactor.util.context.Context.of(
                        "reactor.onOperatorError.local", localHook)))
                .expectErrorMessage("local:2").verify(Duration.ofSeconds(10));
    }

    /**
     * A bubbling error (Exceptions.bubble) is meant to escape the stream: Reactor's operators rethrow it
     * (Exceptions.throwIfFatal) to the scheduler's onHandleError. A skip policy swallowed it as one more
     * failed message; now it fails the actor, whatever the policy, and reaches onHandleError, as a JVM-fatal
     * error already did.
     */
    @Test
    void aBubblingErrorIsNotSkippedItFailsTheActorAndReachesOnHandleError() {
        List<Throwable> handled = new CopyOnWriteArrayList<>();
        reactor.core.scheduler.Schedulers.onHandleError("bubbling-test", (thread, e) -> handled.add(e));
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler).errorPolicy(ErrorPolicy.skip())
                .behaviour((m, ctx) -> {
                    throw reactor.core.Exceptions.bubble(new IllegalStateException("escape"));
                }).build();
        a.tell(1);
        StepVerifier.create(a).expectErrorMatches(reactor.core.Exceptions::isBubbling).verify(Duration.ofSeconds(10));
        // unwrapped, as Reactor's Schedulers.handleError passes it
        await(() -> handled.stream().anyMatch(e -> "escape".equals(e.getMessage())), "reported: " + handled);
        assertEquals(0, a.skippedMessages());
    }

    /** A behaviour reads its subscriber's context, as a Flux.create generator reads its sink's contextView(). */
    @Test
    void aBehaviourReadsItsSubscribersContext() {
        Actor<Integer, String> a = Actor.<Integer, String>builder(scheduler).behaviour((m, ctx) -> {
            ctx.emit(ctx.contextView().getOrDefault("tenant", "none"));
            return true;
        }).build();
        a.tell(1);
        StepVerifier.create(Flux.from(a).contextWrite(reactor.util.context.Context.of("tenant", "t-9")))
                .expectNext("t-9").thenCancel().verify(Duration.ofSeconds(10));
    }

    /**
     * A chain built before its last subscriber ({@code Flux.from(a).map(f).subscribe(b)}, then {@code b}
     * subscribed with a {@code contextWrite}): the first actor's upstream and behaviour see that context, as
     * Reactor's processors ask their subscriber for it each time. The actor had copied its subscriber's context
     * once, at subscription, when {@code b} had none yet (probe actorops).
     */
    @Test
    void aChainBuiltBeforeItsSubscriberSeesTheContextItWritesLater() throws Exception {
        Actor<Integer, String> a = Actor.<Integer, String>builder(scheduler).capacity(4)
                .behaviour((m, ctx) -> {
                    ctx.emit(m + "@" + ctx.contextView().getOrDefault("k", "-"));
                    return true;
                }).build();
        Actor<String, String> b = Actor.identity(scheduler, 4);
        Flux.from(a).map(v -> v + "!").subscribe(b);
        assertTrue(a.currentContext().isEmpty(), "no context before b's subscriber");

        CompletableFuture<List<String>> got = Flux.from(b).contextWrite(reactor.util.context.Context.of("k", "v"))
                .collectList().toFuture();
        Flux.deferContextual(c -> Flux.just(c.getOrDefault("k", "-").equals("v") ? 1 : -1)).subscribe(a);

        assertEquals(List.of("1@v!"), got.get(30, TimeUnit.SECONDS), "upstream and behaviour see k=v");
        assertEquals("v", a.currentContext().getOrDefault("k", "-"), "after the end: the last context, kept");
    }
}
