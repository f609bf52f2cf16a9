package io.reactoractor.pull;

import static io.reactoractor.pull.PullConsumerTest.await;
import static io.reactoractor.pull.PullConsumerTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The reactive consumer: demand-driven pulls, ack modes, redelivery on cancel, failure policies, sharing. */
class ConsumeTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("consume-test").threads(2).build();
    private final PullConsumer consumer = PullConsumer.builder(scheduler).build();

    @AfterEach
    void tearDown() {
        reactor.core.publisher.Hooks.resetOnEachOperator("consume-test");
        reactor.core.publisher.Hooks.resetOnOperatorDebug();
        consumer.dispose();
        scheduler.dispose();
    }

    /**
     * The subscription is Scannable, as a {@code Flux.create} source's is: it tells its subscriber, demand, cancel
     * and end (a walk up from the subscriber no longer stops at the first operator).
     */
    @Test
    void theSubscriptionIsScannableAsAReactorSourcesIs() throws Exception {
        consumer.append("s", b("m0"));
        java.util.concurrent.atomic.AtomicReference<org.reactivestreams.Subscription> sub =
                new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.CountDownLatch got = new java.util.concurrent.CountDownLatch(1);
        reactor.core.publisher.BaseSubscriber<String> s = new reactor.core.publisher.BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
                request(3);
            }

            @Override
            protected void hookOnNext(String v) {
                got.countDown();
            }
        };
        consumer.consume("s", "g").doOnSubscribe(sub::set).map(d -> d.message().payloadAsString()).subscribe(s);
        assertTrue(got.await(10, java.util.concurrent.TimeUnit.SECONDS));
        reactor.core.Scannable scan = reactor.core.Scannable.from(sub.get());
        assertTrue(scan.isScanAvailable(), "Scannable");
        assertEquals(reactor.core.Scannable.Attr.RunStyle.ASYNC, scan.scan(reactor.core.Scannable.Attr.RUN_STYLE));
        await(() -> Long.valueOf(2L).equals(scan.scan(reactor.core.Scannable.Attr.REQUESTED_FROM_DOWNSTREAM)),
                "the demand not yet met: " + scan.scan(reactor.core.Scannable.Attr.REQUESTED_FROM_DOWNSTREAM));
        assertTrue(scan.scan(reactor.core.Scannable.Attr.ACTUAL) != null, "its subscriber");
        assertEquals(Boolean.FALSE, scan.scan(reactor.core.Scannable.Attr.CANCELLED));
        s.cancel();
        assertEquals(Boolean.TRUE, scan.scan(reactor.core.Scannable.Attr.CANCELLED));
        assertEquals(Boolean.FALSE, scan.scan(reactor.core.Scannable.Attr.TERMINATED));
    }

    @Test
    void demandDrivesPullsAndOnNextAcks() throws Exception {
        for (int i = 0; i < 10; i++) {
            consumer.append("s", b("m" + i));
        }
        StepVerifier.create(consumer.consume("s", "g"), 0)
                .expectSubscription()
                .expectNoEvent(Duration.ofMillis(50))
                .thenRequest(3)
                .expectNextMatches(d -> d.message().offset() == 0 && d.attempt() == 1)
                .expectNextMatches(d -> d.message().offset() == 1)
                .expectNextMatches(d -> d.message().offset() == 2)
                .expectNoEvent(Duration.ofMillis(50))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
        await(() -> consumer.store().committedOffset("s", "g") == 3, "offsets 0-2 committed after onNext");
        GroupStats st = consumer.stats("s", "g");
        assertEquals(3, st.delivered(), "no more than the demand was pulled");
        assertEquals(7, st.lag());
    }

    /**
     * Reactor's block*() on a carrier subscribes, then throws and never cancels: its orphaned subscriber must
     * not take a message and acknowledge it (the caller only got the IllegalStateException).
     */
    @Test
    void blockingOnAConsumeStreamFromACarrierTakesNoMessage() throws Exception {
        consumer.append("s", b("m0"));
        List<Object> results = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(2);
        scheduler.schedule(() -> {
            try {
                results.add(consumer.consume("s", "g").blockFirst(Duration.ofSeconds(20)));
            } catch (Throwable e) {
                results.add(e);
            }
            try {
                results.add(consumer.consume("s", "g").map(d -> d).next().block(Duration.ofSeconds(20)));
            } catch (Throwable e) {
                results.add(e);
            }
            done.countDown();
            done.countDown();
        });
        assertTrue(done.await(20, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(2, results.size());
        for (Object r : results) {
            assertTrue(r instanceof IllegalStateException, String.valueOf(r));
        }
        // the message is still there, not delivered, for a consumer that can take it
        Delivery d = consumer.consume("s", "g").blockFirst(Duration.ofSeconds(20));
        assertEquals(0, d.message().offset());
        assertEquals(1, d.attempt(), "never delivered to the orphaned subscribers");
    }

    /**
     * Found by a black-box probe: the guard above looked at the thread that subscribes, so a block*() from a thread
     * allowed to block whose subscription hops to a NonBlocking one ({@code subscribeOn}, {@code delaySubscription})
     * failed with it, where Reactor's own sources work.
     */
    @Test
    void blockingFromAThreadAllowedToBlockWorksWhenTheSubscriptionRunsOnANonBlockingThread() {
        assertFalse(reactor.core.scheduler.Schedulers.isInNonBlockingThread());
        for (int i = 0; i < 4; i++) {
            consumer.append("s", b("m" + i));
        }
        Delivery viaParallel = consumer.consume("s", "g").subscribeOn(reactor.core.scheduler.Schedulers.parallel())
                .blockFirst(Duration.ofSeconds(20));
        assertEquals("m0", new String(viaParallel.message().payload(), java.nio.charset.StandardCharsets.UTF_8));
        Delivery viaCarrier = consumer.consume("s", "g").subscribeOn(scheduler).blockFirst(Duration.ofSeconds(20));
        assertEquals(1, viaCarrier.message().offset());
        List<Delivery> collected = consumer.consume("s", "g").subscribeOn(reactor.core.scheduler.Schedulers.parallel())
                .take(1).collectList().block(Duration.ofSeconds(20));
        assertEquals(2, collected.get(0).message().offset());
        Delivery delayed = consumer.consume("s", "g").delaySubscription(Duration.ofMillis(5))
                .blockFirst(Duration.ofSeconds(20));
        assertEquals(3, delayed.message().offset());
    }

    /** A pull after the scheduler (not the consumer) was disposed is refused as a disposed scheduler refuses. */
    @Test
    void aPullAfterTheSchedulerWasDisposedIsRejected() throws Exception {
        consumer.append("s", b("m0"));
        assertEquals(PullResult.Status.MESSAGES, consumer.pullOnce("s", "g", 1).block(Duration.ofSeconds(10)).status());
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
        StepVerifier.create(consumer.pullOnce("s", "g2", 1))
                .expectError(java.util.concurrent.RejectedExecutionException.class)
                .verify(Duration.ofSeconds(10));
        await(() -> consumer.liveGroups() == 0, "the terminated pair left the registries");
        StepVerifier.create(consumer.pullOnce("s", "g", 1))
                .expectError(java.util.concurrent.RejectedExecutionException.class)
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void aBadRequestDuringOnNextIsSignalledAfterItAndOnlyOnce() throws Exception {
        consumer.append("s", b("a"));
        consumer.append("s", b("b"));
        java.util.concurrent.CountDownLatch inOnNext = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch errored = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean inside = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger errors = new java.util.concurrent.atomic.AtomicInteger();
        java.util.List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicReference<org.reactivestreams.Subscription> sub =
                new java.util.concurrent.atomic.AtomicReference<>();
        consumer.consume("s", "g").subscribe(new reactor.core.CoreSubscriber<Delivery>() {
            @Override
            public void onSubscribe(org.reactivestreams.Subscription s) {
                sub.set(s);
                s.request(1);
            }

            @Override
            public void onNext(Delivery d) {
                inside.set(true);
                inOnNext.countDown();
                try {
                    release.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                inside.set(false);
            }

            @Override
            public void onError(Throwable t) {
                if (inside.get()) {
                    violations.add("onError while onNext runs (rule 1.3)");
                }
                if (!(t instanceof IllegalArgumentException)) {
                    violations.add("not the rule 3.9 error: " + t);
                }
                errors.incrementAndGet();
                errored.countDown();
            }

            @Override
            public void onComplete() {
                violations.add("onComplete");
            }
        });
        assertTrue(inOnNext.await(10, java.util.concurrent.TimeUnit.SECONDS));
        Thread other = new Thread(() -> sub.get().request(-1));
        other.start();
        other.join(5_000);
        Thread.sleep(50);
        assertEquals(0, errors.get(), "the error waits for the onNext in progress");
        release.countDown();
        assertTrue(errored.await(10, java.util.concurrent.TimeUnit.SECONDS), "then it is signalled");
        Thread.sleep(20);
        assertEquals(1, errors.get(), "exactly once");
        assertEquals(java.util.List.of(), violations);
    }

    @Test
    void aBadRequestWhileALongPollWaitsIsSignalledAtOnce() {
        java.util.concurrent.atomic.AtomicReference<org.reactivestreams.Subscription> sub =
                new java.util.concurrent.atomic.AtomicReference<>();
        StepVerifier.create(consumer.consume("empty", "g"), 1)
                .consumeSubscriptionWith(sub::set)
                .expectNoEvent(Duration.ofMillis(50)) // a pull waits in the group: nothing to deliver
                .then(() -> sub.get().request(-1)) // StepVerifier's own thenRequest refuses n <= 0
                .expectError(IllegalArgumentException.class)
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aBatchSizeAboveMaxMessagesPerPullIsCappedAtIt() {
        PullConsumer small = PullConsumer.builder(scheduler).maxMessagesPerPull(10).build();
        try {
            for (int i = 0; i < 35; i++) {
                small.append("s", b("m" + i));
            }
            ConsumerOptions big = ConsumerOptions.builder().batchSize(1_000).build();
            StepVerifier.create(small.consume("s", "g", big), 35)
                    .expectNextCount(35)
                    .thenCancel()
                    .verify(Duration.ofSeconds(10));
            GroupStats st = small.stats("s", "g");
            assertTrue(st.pulls() >= 4, "35 messages in pulls of at most 10: " + st.pulls() + " pulls");
        } finally {
            small.dispose();
        }
    }

    @Test
    void disposingTheConsumerErrorsAStreamWithNoPullInFlight() {
        PullConsumer own = PullConsumer.builder(scheduler).build();
        own.append("s", b("only"));
        StepVerifier.create(own.consume("s", "g"), 1)
                .expectNextCount(1) // its demand is used up: no pull in flight now
                .then(own::dispose)
                .expectErrorSatisfies(e -> assertTrue(e instanceof IllegalStateException
                        && e.getMessage().contains("disposed"), e.toString()))
                .verify(Duration.ofSeconds(10));
        StepVerifier.create(own.consume("s", "g"))
                .expectError()
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void noDemandNoPull() throws Exception {
        consumer.append("s", b("x"));
        BaseSubscriber<Delivery> idle = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
                // no request
            }
        };
        consumer.consume("s", "g").subscribe(idle);
        Thread.sleep(100);
        assertEquals(0, consumer.stats("s", "g").pulls());
        idle.request(1);
        await(() -> consumer.stats("s", "g").delivered() == 1, "delivered after request(1)");
        idle.dispose();
    }

    @Test
    void explicitAckAndRedeliveryAfterCancel() throws Exception {
        for (int i = 0; i < 5; i++) {
            consumer.append("s", b("m" + i));
        }
        ConsumerOptions explicit = ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).build();
        List<Delivery> got = new ArrayList<>();
        Disposable first = consumer.consume("s", "g", explicit).take(5).subscribe(got::add);
        await(() -> got.size() == 5, "5 delivered");
        got.get(0).ack();
        got.get(1).ack();
        first.dispose();
        await(() -> consumer.store().committedOffset("s", "g") == 2, "0 and 1 committed");

        StepVerifier.create(consumer.consume("s", "g", explicit).take(3))
                .expectNextMatches(d -> d.message().offset() == 2 && d.attempt() == 2)
                .expectNextMatches(d -> d.message().offset() == 3 && d.attempt() == 2)
                .expectNextMatches(d -> d.message().offset() == 4 && d.attempt() == 2)
                .verifyComplete();
    }

    @Test
    void nackFollowsTheConsumersFailurePolicy() throws Exception {
        consumer.append("s", b("poison"));
        consumer.append("s", b("fine"));
        ConsumerOptions opts = ConsumerOptions.builder().ackMode(AckMode.EXPLICIT)
                .failurePolicy(FailurePolicy.retryThenDeadLetter(3, Duration.ofMillis(5))).build();
        List<Integer> attempts = new ArrayList<>();
        Disposable d = consumer.consume("s", "g", opts).subscribe(dl -> {
            if (dl.message().payloadAsString().equals("poison")) {
                synchronized (attempts) {
                    attempts.add(dl.attempt());
                }
                dl.nack(new IllegalStateException("cannot handle"));
            } else {
                dl.ack();
            }
        });
        await(() -> consumer.store().committedOffset("s", "g") == 2, "both settled");
        d.dispose();
        assertEquals(List.of(1, 2, 3), attempts);
        assertEquals(1, consumer.stats("s", "g").deadLettered());
        assertEquals(1, consumer.store().endOffset(FailurePolicy.deadLetterSubject("g")));
    }

    @Test
    void aNackAfterTheConsumerWentAwayStillFollowsTheFailurePolicy() throws Exception {
        consumer.append("s", b("fine"));
        consumer.append("s", b("poison"));
        ConsumerOptions opts = ConsumerOptions.builder().ackMode(AckMode.EXPLICIT)
                .failurePolicy(FailurePolicy.retryThenDeadLetter(1, Duration.ZERO)).build();
        // take(2) cancels the consumer, which releases both unsettled messages for redelivery
        List<Delivery> ds = consumer.consume("s", "g", opts).take(2).collectList().block(Duration.ofSeconds(10));
        assertEquals(2, ds.size());
        ds.get(0).ack();
        ds.get(1).nack(new IllegalStateException("poison")); // its one attempt is used: dead-lettered
        await(() -> consumer.store().committedOffset("s", "g") == 2, "both settled, the nack as a dead letter");
        assertEquals(1, consumer.stats("s", "g").deadLettered());
        assertEquals(1, consumer.store().endOffset(FailurePolicy.deadLetterSubject("g")));
        StepVerifier.create(consumer.pull("s", "g", 10, Duration.ZERO))
                .expectNextMatches(r -> r.messages().isEmpty())
                .verifyComplete();
        assertEquals(0, consumer.stats("s", "g").redelivered(), "not delivered again past maxAttempts");
    }

    @Test
    void aNackOfAMessageWaitingForItsRedeliveryMovesItToTheBackOff() throws Exception {
        PullConsumer local = PullConsumer.builder(scheduler).ackTimeout(Duration.ofMillis(50))
                .failurePolicy(FailurePolicy.retryForever(Duration.ofSeconds(30))).build();
        try {
            local.append("s", b("slow"));
            PullResult first = local.pull("s", "g", 1, Duration.ZERO).block(Duration.ofSeconds(10));
            assertEquals(1, first.messages().size());
            Thread.sleep(200); // the ack deadline passes: queued for redelivery now
            local.nack("s", "g", 0).block(Duration.ofSeconds(10));
            // the handler's failure counts: the redelivery waits for the policy's back-off, not the ack timeout
            StepVerifier.create(local.pull("s", "g", 1, Duration.ZERO))
                    .expectNextMatches(r -> r.messages().isEmpty())
                    .verifyComplete();
        } finally {
            local.dispose();
        }
    }

    @Test
    void requestZeroIsAnError() throws Exception {
        java.util.concurrent.CompletableFuture<Throwable> error = new java.util.concurrent.CompletableFuture<>();
        consumer.consume("s", "g").subscribe(new org.reactivestreams.Subscriber<Delivery>() {
            @Override
            public void onSubscribe(org.reactivestreams.Subscription s) {
                s.request(0);
            }

            @Override
            public void onNext(Delivery d) {
            }

            @Override
            public void onError(Throwable t) {
                error.complete(t);
            }

            @Override
            public void onComplete() {
            }
        });
        assertTrue(error.get(5, java.util.concurrent.TimeUnit.SECONDS) instanceof IllegalArgumentException);
    }

    /** A handler that throws inside Reactor's own subscribers and operators, which catch it and cancel. */
    @Test
    void aHandlerFailingInsideReactorsSubscriberOrOperatorsIsANackNotAnAck() throws Exception {
        PullConsumer local = PullConsumer.builder(scheduler).failurePolicy(FailurePolicy.retryForever(Duration.ZERO))
                .build();
        try {
            List<java.util.function.BiFunction<Flux<Delivery>, List<Throwable>, Disposable>> failing = List.of(
                    (f, errors) -> f.subscribe(d -> {
                        throw new IllegalStateException("ship failed"); // LambdaSubscriber catches it
                    }, errors::add),
                    (f, errors) -> f.doOnNext(d -> {
                        throw new IllegalStateException("ship failed"); // FluxPeek: Operators.onOperatorError
                    }).subscribe(d -> { }, errors::add),
                    (f, errors) -> f.map(d -> {
                        if (d != null) {
                            throw new IllegalStateException("ship failed"); // FluxMap
                        }
                        return d;
                    }).subscribe(d -> { }, errors::add));
            for (int k = 0; k < failing.size(); k++) {
                String subject = "s" + k;
                local.append(subject, b("m"));
                List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
                failing.get(k).apply(local.consume(subject, "g"), errors);
                await(() -> !errors.isEmpty(), "case " + k + ": the handler's error reached downstream");
                // nacked (retry at once), not acknowledged: the message comes again
                StepVerifier.create(local.consume(subject, "g").take(1))
                        .expectNextMatches(d -> d.message().offset() == 0 && d.attempt() == 2)
                        .expectComplete()
                        .verify(Duration.ofSeconds(10));
                // take(1) completes inside onNext, before the consumer posts the ack: wait for the commit
                final String subj = subject;
                await(() -> local.store().committedOffset(subj, "g") == 1, "case " + k + ": acknowledged the second time");
            }
        } finally {
            local.dispose();
        }
    }

    /** take(n), next() and blockFirst() cancel inside onNext too, after the message was handled: acknowledged. */
    @Test
    void cancellingInsideOnNextAfterHandlingAcknowledges() throws Exception {
        for (int i = 0; i < 9; i++) {
            consumer.append("s", b("m" + i));
        }
        List<Long> first = consumer.consume("s", "g").take(3).map(d -> d.message().offset()).collectList()
                .block(Duration.ofSeconds(10));
        assertEquals(List.of(0L, 1L, 2L), first);
        Delivery one = consumer.consume("s", "g").next().block(Duration.ofSeconds(10));
        assertEquals(3, one.message().offset());
        Delivery two = consumer.consume("s", "g").blockFirst(Duration.ofSeconds(10));
        assertEquals(4, two.message().offset());
        List<Long> rest = consumer.consume("s", "g").take(4).map(d -> d.message().offset()).collectList()
                .block(Duration.ofSeconds(10));
        assertEquals(List.of(5L, 6L, 7L, 8L), rest, "nothing came again");
        // (next() and blockFirst() request unbounded: the messages pulled beyond the first are released and
        // handed out again, which the stats count as redeliveries; none reached a subscriber twice)
        await(() -> consumer.store().committedOffset("s", "g") == 9, "all acknowledged");
        assertEquals(0, consumer.stats("s", "g").inFlight());
    }

    @Test
    void anExceptionInOnNextNacksAndErrors() throws Exception {
        consumer.append("s", b("boom"));
        PullConsumer local = PullConsumer.builder(scheduler).store(consumer.store())
                .failurePolicy(FailurePolicy.retryForever(Duration.ZERO)).build();
        try {
            BaseSubscriber<Delivery> throwing = new BaseSubscriber<>() {
                @Override
                protected void hookOnNext(Delivery value) {
                    throw new IllegalStateException("handler bug");
                }
            };
            // a raw subscriber that throws from onNext (rule 2.13 forbids it, but it must not lose the message)
            local.consume("s", "g").subscribe(new org.reactivestreams.Subscriber<Delivery>() {
                @Override
                public void onSubscribe(org.reactivestreams.Subscription s) {
                    s.request(1);
                }

                @Override
                public void onNext(Delivery d) {
                    throw new IllegalStateException("handler bug");
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onComplete() {
                }
            });
            StepVerifier.create(local.consume("s", "g").take(1))
                    .expectNextMatches(d -> d.message().payloadAsString().equals("boom") && d.attempt() == 2)
                    .verifyComplete();
            throwing.dispose();
        } finally {
            local.dispose();
        }
    }

    /**
     * A JVM-fatal error from onNext: the same bookkeeping as any other throw (the messages handled before it
     * acknowledged, the failing one nacked, the stream errored), and the error reported through
     * Schedulers.onHandleError under its own cause, not as a store failure.
     */
    @Test
    void aJvmFatalErrorInOnNextKeepsTheBookkeepingAndReachesOnHandleError() throws Exception {
        for (int i = 0; i < 5; i++) {
            consumer.append("s", b("m" + i));
        }
        List<Throwable> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.scheduler.Schedulers.onHandleError("consume-test", (t, e) -> handled.add(e));
        PullConsumer local = PullConsumer.builder(scheduler).store(consumer.store())
                .failurePolicy(FailurePolicy.retryForever(Duration.ZERO)).build();
        try {
            OutOfMemoryError oom = new OutOfMemoryError("test: thrown by a handler");
            java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
            List<Long> firstSaw = new java.util.concurrent.CopyOnWriteArrayList<>();
            // a CoreSubscriber: Reactor wraps a plain Subscriber in a StrictSubscriber, which swallows the
            // onError that follows a throwing onNext
            local.consume("s", "g").subscribe(new reactor.core.CoreSubscriber<Delivery>() {
                @Override
                public void onSubscribe(org.reactivestreams.Subscription s) {
                    s.request(5);
                }

                @Override
                public void onNext(Delivery d) {
                    firstSaw.add(d.message().offset());
                    if (d.message().offset() == 1) {
                        throw oom;
                    }
                }

                @Override
                public void onError(Throwable t) {
                    error.set(t);
                }

                @Override
                public void onComplete() {
                }
            });
            await(() -> error.get() != null, "the stream errored");
            assertTrue(error.get() == oom, "errored with " + error.get());
            await(() -> handled.contains(oom), "reported through onHandleError");
            // offset 0's onNext returned: acknowledged, never delivered again; 1 (nacked) and the rest are
            StepVerifier.create(local.consume("s", "g").map(d -> d.message().offset()).take(4).collectList())
                    .assertNext(offsets -> assertEquals(List.of(1L, 2L, 3L, 4L),
                            offsets.stream().sorted().toList()))
                    .verifyComplete();
            assertEquals(List.of(0L, 1L), firstSaw);
        } finally {
            local.dispose();
            reactor.core.scheduler.Schedulers.resetOnHandleError("consume-test");
        }
    }

    /**
     * The scheduler disposed under a live consumer: a stream with no pull in flight (its demand met, its
     * deliveries held) ends at once, as when the consumer is disposed, not at its next request, with the
     * scheduler's {@code RejectedExecutionException}.
     */
    @Test
    void aStreamWithNoPullInFlightEndsWhenTheSchedulerIsDisposed() throws Exception {
        ActorScheduler own = ActorScheduler.builder().name("consume-test-own").threads(2).build();
        PullConsumer local = PullConsumer.builder(own).build();
        try {
            for (int i = 0; i < 3; i++) {
                local.append("s", b("m" + i));
            }
            java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
            List<Delivery> held = new java.util.concurrent.CopyOnWriteArrayList<>();
            local.consume("s", "g", ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).build())
                    .subscribe(new BaseSubscriber<Delivery>() {
                        @Override
                        protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                            s.request(3);
                        }

                        @Override
                        protected void hookOnNext(Delivery d) {
                            held.add(d); // never acknowledged, no more demand
                        }

                        @Override
                        protected void hookOnError(Throwable t) {
                            error.set(t);
                        }
                    });
            await(() -> held.size() == 3, "three deliveries held");
            own.dispose();
            await(() -> error.get() != null, "the stream ended with the group's actor");
            // the scheduler's rejection, not the consumer's "closed": the consumer is not disposed (class doc)
            assertTrue(error.get() instanceof java.util.concurrent.RejectedExecutionException, error.get()::toString);
            assertTrue(!local.isDisposed());
        } finally {
            local.dispose();
            own.dispose();
        }
    }

    /**
     * The pair's scheduler group ({@code cg.<group>}) disposed from outside: its actor terminated, and the
     * pair's next call creates a new one, where every later call failed on the dead actor until the whole
     * consumer was disposed.
     */
    @Test
    void aPairWhoseSchedulerGroupWasDisposedServesAgainWithANewActor() throws InterruptedException {
        consumer.append("s", b("m0"));
        PullResult first = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertEquals(PullResult.Status.MESSAGES, first.status());
        consumer.ack("s", "g", first.epoch(), List.of(0L)).block(Duration.ofSeconds(10));
        assertEquals(1, consumer.liveGroups());
        scheduler.group(PullConsumer.SCHEDULING_GROUP_PREFIX + "g", 1).dispose();
        await(() -> consumer.liveGroups() == 0, "the terminated pair left the consumer");
        consumer.append("s", b("m1"));
        PullResult r = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertEquals(PullResult.Status.MESSAGES, r.status());
        assertEquals(1L, r.messages().get(0).offset(), "from the committed position");
    }

    /** Several consumers per group share; two groups each get everything; nothing lost or duplicated. */
    @Test
    void consumersOfAGroupShareAndGroupsEachGetEverything() throws Exception {
        int messages = 20_000;
        ConcurrentHashMap<String, Boolean> seen = new ConcurrentHashMap<>();
        AtomicLong duplicates = new AtomicLong();
        List<Disposable> subs = new ArrayList<>();
        for (String group : List.of("a", "b")) {
            for (int i = 0; i < 4; i++) {
                subs.add(consumer.consume("orders", group, ConsumerOptions.builder().batchSize(16).build())
                        .subscribe(d -> {
                            if (seen.put(group + ":" + d.message().offset(), Boolean.TRUE) != null) {
                                duplicates.incrementAndGet();
                            }
                        }));
            }
        }
        Thread[] producers = new Thread[2];
        for (int p = 0; p < producers.length; p++) {
            producers[p] = new Thread(() -> {
                for (int i = 0; i < messages / 2; i++) {
                    consumer.append("orders", b("x"));
                }
            });
            producers[p].start();
        }
        for (Thread t : producers) {
            t.join();
        }
        await(() -> seen.size() == 2 * messages, "every message to both groups (seen " + seen.size() + ")");
        await(() -> consumer.store().committedOffset("orders", "a") == messages
                && consumer.store().committedOffset("orders", "b") == messages, "all committed");
        subs.forEach(Disposable::dispose);
        assertEquals(0, duplicates.get());
        assertEquals(0, consumer.stats("orders", "a").redelivered());
    }

    /**
     * A group with 100 consumers does not get more than a group with 2: each group is one actor, so
     * when both lag and the handling work saturates the threads they share the CPU about evenly.
     * The bound is loose (noisy machines); the precise figure is in the benchmark.
     */
    @Test
    void aGroupWith100ConsumersDoesNotOutrunAGroupWith2() throws Exception {
        for (int i = 0; i < 200_000; i++) {
            consumer.append("backlog", b("m"));
        }
        AtomicLong many = new AtomicLong();
        AtomicLong few = new AtomicLong();
        List<Disposable> subs = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            subs.add(consumer.consume("backlog", "many").subscribe(d -> {
                busy(20_000);
                many.incrementAndGet();
            }));
        }
        for (int i = 0; i < 2; i++) {
            subs.add(consumer.consume("backlog", "few").subscribe(d -> {
                busy(20_000);
                few.incrementAndGet();
            }));
        }
        Thread.sleep(2_000);
        subs.forEach(Disposable::dispose);
        double share = (double) few.get() / (few.get() + many.get());
        assertTrue(few.get() + many.get() > 100, "too little progress to judge: " + few + "/" + many);
        assertTrue(share > 0.3 && share < 0.7, "share of the 2-consumer group: " + share + " (few " + few
                + ", many " + many + ")");
    }

    private static void busy(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    /**
     * consume() goes through Reactor's assembly step, as Flux.create does: Hooks.onEachOperator sees it, an
     * error carries the assembly trace under Hooks.onOperatorDebug(), and it is Scannable. It was a bare
     * Flux that skipped all three.
     */
    @Test
    void consumeGoesThroughReactorsAssemblyStep() {
        java.util.List<String> assembled = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.publisher.Hooks.onEachOperator("consume-test", p -> {
            assembled.add(reactor.core.Scannable.from(p).stepName());
            return p;
        });
        reactor.core.publisher.Flux<Delivery> flux = consumer.consume("assembly", "g");
        assertTrue(assembled.contains("consume(assembly, g)"), assembled.toString());
        reactor.core.Scannable scanned = reactor.core.Scannable.from(flux);
        assertTrue(scanned.isScanAvailable());
        assertEquals("consume(assembly, g)", scanned.stepName());
        reactor.core.publisher.Hooks.resetOnEachOperator("consume-test");

        reactor.core.publisher.Hooks.onOperatorDebug();
        reactor.core.publisher.Flux<Delivery> traced = consumer.consume("assembly", "g");
        consumer.dispose();
        reactor.test.StepVerifier.create(traced)
                .expectErrorSatisfies(e -> assertTrue(java.util.Arrays.stream(e.getSuppressed())
                        .anyMatch(x -> String.valueOf(x).contains("Assembly trace from producer")),
                        "Reactor's assembly trace: " + java.util.Arrays.toString(e.getSuppressed())))
                .verify(java.time.Duration.ofSeconds(10));
    }
}
