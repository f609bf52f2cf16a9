package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.micrometer.MicrometerActorMetrics;
import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class PullConsumerTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("pull-test").threads(2).build();
    private final List<PullConsumer> consumers = new ArrayList<>();

    private PullConsumer consumer() {
        return consumer(PullConsumer.builder(scheduler));
    }

    private PullConsumer consumer(PullConsumer.Builder b) {
        PullConsumer c = b.build();
        consumers.add(c);
        return c;
    }

    @AfterEach
    void tearDown() {
        consumers.forEach(PullConsumer::dispose);
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(2);
        }
    }

    static List<Long> offsets(PullResult r) {
        return r.messages().stream().map(Message::offset).collect(Collectors.toList());
    }

    @Test
    void pullReturnsAvailableMessagesAtOnceInOrder() {
        PullConsumer c = consumer();
        for (int i = 0; i < 5; i++) {
            c.append("orders", b("o" + i));
        }
        PullResult r = c.pull("orders", "billing", 3, Duration.ofSeconds(30)).block(Duration.ofSeconds(5));
        assertEquals(PullResult.Status.MESSAGES, r.status());
        assertEquals(List.of(0L, 1L, 2L), offsets(r));
        assertEquals("o0", r.messages().get(0).payloadAsString());
        PullResult next = c.pull("orders", "billing", 10, Duration.ofSeconds(30)).block(Duration.ofSeconds(5));
        assertEquals(List.of(3L, 4L), offsets(next), "a group's pulls share the subject without duplicates");
        PullResult other = c.pull("orders", "shipping", 10, Duration.ofSeconds(30)).block(Duration.ofSeconds(5));
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), offsets(other), "every group gets every message");
    }

    @Test
    void longPollIsAnsweredByAnAppendAndTheTimerIsCancelled() throws Exception {
        // no idle retirement: its timer would be armed once the pair is idle, and this checks the poll's
        PullConsumer c = consumer(PullConsumer.builder(scheduler).idleTimeout(Duration.ZERO));
        AtomicReference<PullResult> got = new AtomicReference<>();
        c.pull("s", "g", 10, Duration.ofSeconds(60), true).subscribe(got::set);
        await(() -> c.stats("s", "g").waitingPulls() == 1 && c.stats("s", "g").suspended(), "pull waiting, actor suspended");
        long t0 = System.nanoTime();
        for (int i = 0; i < 100; i++) {
            c.append("s", b("m" + i));
        }
        await(() -> got.get() != null, "answer after append");
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(waitedMs < 5_000, "answered " + waitedMs + " ms after the append, far before the 60 s timeout");
        assertEquals(PullResult.Status.MESSAGES, got.get().status());
        assertFalse(got.get().isEmpty());
        GroupStats st = c.stats("s", "g");
        assertEquals(1, st.suspends());
        assertEquals(1, st.resumes(), "100 appends, one resume (coalesced)");
        // ack-on-delivery: nothing pending, nobody waiting, so no timer is left armed
        await(() -> io.reactoractor.internal.Internals.engine(scheduler.defaultGroup()).pendingTimers() == 0, "timer cancelled after data arrived");
    }

    @Test
    void anAnswerAcknowledgedOnDeliveryIsCommittedWhenItArrives() {
        PullConsumer c = consumer();
        for (int i = 0; i < 4; i++) {
            c.append("auto", b("m" + i));
        }
        // read on the actor's thread as the answer arrives: whoever the answer reaches next (an HTTP client
        // asking for the group's figures) must see the offsets it settled, not a commit still to come
        GroupStats seen = c.pull("auto", "g", 3, Duration.ZERO, true).map(r -> c.stats("auto", "g"))
                .block(Duration.ofSeconds(10));
        assertEquals(3, seen.committedOffset(), seen::toString);
        assertEquals(0, seen.inFlight(), seen::toString);
        assertEquals(0, seen.waitingPulls(), seen::toString);
    }

    @Test
    void longPollTimesOutWithAnEmptyResult() {
        PullConsumer c = consumer();
        long t0 = System.nanoTime();
        PullResult r = c.pull("quiet", "g", 10, Duration.ofMillis(200)).block(Duration.ofSeconds(10));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(PullResult.Status.TIMED_OUT, r.status());
        assertTrue(r.isEmpty());
        assertTrue(ms >= 190, "answered after " + ms + " ms, before its 200 ms timeout");
        assertTrue(ms < 5_000, "answered after " + ms + " ms");
        assertEquals(1, c.stats("quiet", "g").pullsTimedOut());
    }

    @Test
    void pullOnceAnswersEmptyWithoutWaiting() {
        PullConsumer c = consumer();
        PullResult r = c.pullOnce("nothing", "g", 5).block(Duration.ofSeconds(5));
        assertEquals(PullResult.Status.EMPTY, r.status());
        c.append("nothing", b("x"));
        assertEquals(List.of(0L), offsets(c.pullOnce("nothing", "g", 5).block(Duration.ofSeconds(5))));
    }

    /** A consumer may start before any producer: the subject is created by the pull. */
    @Test
    void subjectsAreCreatedOnFirstUse() {
        PullConsumer c = consumer();
        assertFalse(c.store().subjects().contains("fresh"));
        c.pullOnce("fresh", "g", 1).block(Duration.ofSeconds(5));
        assertTrue(c.store().subjects().contains("fresh"));
    }

    /**
     * A pull that expired while the group's actor could not run is served as a pull-once, never left hanging:
     * TIMED_OUT when nothing is there, the messages when they are (a timeout too short to wait is never worse
     * than a zero one).
     */
    @Test
    void pullExpiredBeforeItsTurnIsAnsweredExplicitly() throws Exception {
        ActorScheduler one = ActorScheduler.builder().name("pull-one").threads(1).maxCompensatingThreads(0).build();
        try {
            PullConsumer c = PullConsumer.builder(one).build();
            c.append("s", b("waiting for you"));
            CountDownLatch blocked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            one.schedule(() -> {
                blocked.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertTrue(blocked.await(5, TimeUnit.SECONDS));
            Mono<PullResult> empty = c.pull("none", "g", 10, Duration.ofMillis(20)).cache();
            empty.subscribe();
            Mono<PullResult> full = c.pull("s", "g", 10, Duration.ofMillis(20)).cache();
            full.subscribe();
            Thread.sleep(100); // the pulls' deadlines pass while the only thread is busy
            release.countDown();
            PullResult r = empty.block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.TIMED_OUT, r.status());
            assertEquals(1, c.stats("none", "g").pullsExpired());
            assertEquals(1, c.stats("none", "g").pullsTimedOut());
            // the message there is handed out as a pull-once would
            PullResult got = full.block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.MESSAGES, got.status());
            assertEquals(List.of(0L), offsets(got));
            assertEquals(0, c.stats("s", "g").pullsExpired());
            assertEquals(0, c.stats("s", "g").pullsTimedOut());
            c.dispose();
        } finally {
            one.dispose();
        }
    }

    /** A timeout shorter than the trip to the group's actor is never worse than a zero one. */
    @Test
    void aTimeoutTooShortToWaitStillGetsTheMessagesThere() {
        PullConsumer c = consumer();
        for (int i = 0; i < 10; i++) {
            c.append("s", b("m" + i));
        }
        for (int i = 0; i < 20; i++) {
            PullResult r = c.pull("s", "g" + i, 5, Duration.ofNanos(1)).block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.MESSAGES, r.status(), "pull " + i);
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L), offsets(r));
        }
        List<Delivery> got = c.consume("s", "stream", ConsumerOptions.builder().pollTimeout(Duration.ofNanos(1)).build())
                .take(10).collectList().block(Duration.ofSeconds(20));
        assertEquals(10, got.size());
    }


    @Test
    void ackCommitsOffsetsInOrderOnly() {
        PullConsumer c = consumer();
        for (int i = 0; i < 4; i++) {
            c.append("s", b("m" + i));
        }
        PullResult r = c.pull("s", "g", 4, Duration.ofSeconds(1)).block(Duration.ofSeconds(5));
        assertEquals(4, r.messages().size());
        assertEquals(0L, c.ack("s", "g", List.of(1L, 2L)).block(Duration.ofSeconds(5)),
                "0 is not acknowledged: nothing can be committed");
        assertTrue(c.store().committedOffset("s", "g") <= 0, "nothing committed past offset 0");
        assertEquals(3L, c.ack("s", "g", List.of(0L)).block(Duration.ofSeconds(5)));
        assertEquals(3, c.store().committedOffset("s", "g"));
        assertEquals(4L, c.ack("s", "g", List.of(3L, 3L, 99L)).block(Duration.ofSeconds(5)),
                "duplicates and unknown offsets are ignored");
        GroupStats st = c.stats("s", "g");
        assertEquals(0, st.lag());
        assertEquals(4, st.acknowledged());
        assertEquals(0, st.inFlight());
    }

    @Test
    void anAnswerThePullsSubscriberNeverGotIsRedeliveredAtOnceNotAfterTheAckTimeout() throws Exception {
        PullConsumer consumer = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofMinutes(1)));
        consumer.append("s", b("a"));
        // a subscriber that has not requested yet: Mono.create holds the answer, and the cancel discards it
        reactor.core.publisher.BaseSubscriber<PullResult> notYet = new reactor.core.publisher.BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
            }
        };
        consumer.pull("s", "g", 1, Duration.ZERO).subscribe(notYet);
        await(() -> consumer.stats("s", "g").delivered() == 1, "answered");
        notYet.cancel();
        // the ack timeout is a minute: the message comes again at once only if it was released
        StepVerifier.create(consumer.pull("s", "g", 1, Duration.ofSeconds(10)))
                .expectNextMatches(r -> r.messages().size() == 1 && r.messages().get(0).offset() == 0)
                .verifyComplete();
        assertEquals(1, consumer.stats("s", "g").redelivered());
    }

    @Test
    void cancelledLongPollsStopCountingAsWaitingAtOnce() throws Exception {
        PullConsumer consumer = consumer();
        List<Disposable> polls = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            polls.add(consumer.pull("s", "g", 10, Duration.ofMinutes(2)).subscribe());
        }
        await(() -> consumer.stats("s", "g").waitingPulls() == 20, "20 waiting");
        polls.forEach(Disposable::dispose);
        // no append, no other call: the cancels themselves give the actor the turn that drops them
        await(() -> consumer.stats("s", "g").waitingPulls() == 0, "none waiting after the cancels");
    }

    @Test
    void cancelledConsumeStreamsStopCountingAsWaitingAtOnce() throws Exception {
        PullConsumer consumer = consumer();
        consumer.append("s", new byte[] {1});
        ConsumerOptions explicit = ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).batchSize(1)
                .pollTimeout(Duration.ofMinutes(2)).build();
        java.util.concurrent.CountDownLatch got = new java.util.concurrent.CountDownLatch(1);
        Disposable stream = consumer.consume("s", "g", explicit).subscribe(d -> got.countDown());
        assertTrue(got.await(10, TimeUnit.SECONDS));
        List<Disposable> idle = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            idle.add(consumer.consume("s", "g", explicit).subscribe());
        }
        // the first stream's next long poll and the five others' first ones
        await(() -> consumer.stats("s", "g").waitingPulls() == 6, "6 waiting");
        stream.dispose();
        idle.forEach(Disposable::dispose);
        // no append, no other call: the cancels themselves give the actor the turn that drops their long polls
        await(() -> consumer.stats("s", "g").waitingPulls() == 0, "none waiting after the cancels: "
                + consumer.stats("s", "g"));
    }

    /**
     * The pair's scheduler group {@code cg.<group>} disposed while the pair's actor is in a turn (here a consume
     * stream's {@code onNext} holds it): the actor is terminated at once but leaves the registries only when that turn
     * ends. A call meanwhile builds a new actor for the pair (PullConsumer's class doc), instead of being refused by
     * the dead one with a {@code RejectedExecutionException}.
     */
    @Test
    void aCallRightAfterThePairsSchedulerGroupWasDisposedIsServedByANewActor() throws Exception {
        PullConsumer consumer = consumer();
        consumer.append("s", new byte[] {1});
        java.util.concurrent.CountDownLatch inOnNext = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<Throwable> streamEnd = new java.util.concurrent.CopyOnWriteArrayList<>();
        Disposable stream = consumer.consume("s", "g").subscribe(d -> {
            inOnNext.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, streamEnd::add);
        try {
            assertTrue(inOnNext.await(10, TimeUnit.SECONDS));
            scheduler.group("cg.g", 1).dispose(); // the pair's actor is terminated, its turn still running

            PullResult r = consumer.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
            assertNotNull(r);
            consumer.append("s", new byte[] {2});
            PullResult next = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.MESSAGES, next.status(), next::toString);
        } finally {
            release.countDown();
            stream.dispose();
        }
    }

    /**
     * A call for a pair without an actor while its scheduler group {@code cg.<group>} closes gracefully (another pair of
     * the group keeps the close open) is refused at once, as new work during a graceful close is, not retried for as
     * long as the close takes.
     */
    @Test
    void aCallForANewPairWhileItsSchedulerGroupClosesGracefullyIsRefusedAtOnce() throws Exception {
        PullConsumer consumer = consumer();
        consumer.append("busy", new byte[] {1});
        java.util.concurrent.CountDownLatch inOnNext = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Disposable stream = consumer.consume("busy", "g").subscribe(d -> {
            inOnNext.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, e -> { });
        Disposable closing = null;
        try {
            assertTrue(inOnNext.await(10, TimeUnit.SECONDS));
            closing = scheduler.group("cg.g", 1).disposeGracefully().subscribe();
            long start = System.nanoTime();
            Throwable e = assertThrows(RuntimeException.class,
                    () -> consumer.pullOnce("other", "g", 1).block(Duration.ofSeconds(10)));
            assertTrue(java.util.concurrent.RejectedExecutionException.class.isInstance(e)
                    || java.util.concurrent.RejectedExecutionException.class.isInstance(e.getCause()), e::toString);
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "refused at once");
        } finally {
            release.countDown();
            stream.dispose();
            if (closing != null) {
                closing.dispose();
            }
        }
    }

    @Test
    void unacknowledgedMessagesAreRedeliveredAfterTheAckTimeout() {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofMillis(150)));
        c.append("s", b("m0"));
        PullResult first = c.pull("s", "g", 10, Duration.ofSeconds(5)).block(Duration.ofSeconds(5));
        assertEquals(List.of(0L), offsets(first));
        // not acked: it comes back (the long poll is answered by the ack-timeout redelivery)
        PullResult again = c.pull("s", "g", 10, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertEquals(PullResult.Status.MESSAGES, again.status());
        assertEquals(List.of(0L), offsets(again));
        assertEquals(1, c.stats("s", "g").redelivered());
        c.ack("s", "g", List.of(0L)).block(Duration.ofSeconds(5));
        assertEquals(1, c.store().committedOffset("s", "g"));
    }

    @Test
    void committedOffsetSurvivesANewConsumerOnTheSameStore() {
        InMemoryMessageStore store = InMemoryMessageStore.create();
        PullConsumer c1 = consumer(PullConsumer.builder(scheduler).store(store));
        for (int i = 0; i < 3; i++) {
            c1.append("s", b("m" + i));
        }
        PullResult r = c1.pull("s", "g", 2, Duration.ZERO).block(Duration.ofSeconds(5));
        c1.ack("s", "g", offsets(r)).block(Duration.ofSeconds(5));
        c1.dispose();
        PullConsumer c2 = consumer(PullConsumer.builder(scheduler).store(store));
        assertEquals(List.of(2L), offsets(c2.pullOnce("s", "g", 10).block(Duration.ofSeconds(5))));
    }

    @Test
    void failurePolicies() {
        PullConsumer skip = consumer(PullConsumer.builder(scheduler).failurePolicy(FailurePolicy.skip()));
        skip.append("s", b("bad"));
        skip.pullOnce("s", "g", 1).block(Duration.ofSeconds(5));
        assertEquals(1L, skip.nack("s", "g", 0).block(Duration.ofSeconds(5)));
        assertEquals(1, skip.stats("s", "g").skipped());

        PullConsumer dlq = consumer(PullConsumer.builder(scheduler)
                .failurePolicy(FailurePolicy.retryThenDeadLetter(2, Duration.ZERO)));
        dlq.append("t", b("poison"));
        PullResult a1 = dlq.pull("t", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(5));
        dlq.nack("t", "g", 0).block(Duration.ofSeconds(5));
        PullResult a2 = dlq.pull("t", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(5));
        assertEquals(offsets(a1), offsets(a2), "redelivered after the first failure");
        assertEquals(1L, dlq.nack("t", "g", 0).block(Duration.ofSeconds(5)), "second failure: dead-lettered, committed");
        assertEquals(1, dlq.stats("t", "g").deadLettered());
        PullResult dead = dlq.pullOnce(FailurePolicy.deadLetterSubject("g"), "ops", 10).block(Duration.ofSeconds(5));
        assertEquals("poison", dead.messages().get(0).payloadAsString());

        PullConsumer forever = consumer(PullConsumer.builder(scheduler)
                .failurePolicy(FailurePolicy.retryForever(Duration.ofMillis(10))));
        forever.append("u", b("flaky"));
        for (int i = 0; i < 5; i++) {
            PullResult r = forever.pull("u", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(5));
            assertEquals(List.of(0L), offsets(r), "attempt " + (i + 1));
            forever.nack("u", "g", 0).block(Duration.ofSeconds(5));
        }
        assertEquals(4, forever.stats("u", "g").redelivered(), "5 deliveries = the first + 4 redeliveries");
        assertEquals(0, forever.stats("u", "g").deadLettered());
    }

    @Test
    void badInputIsRejectedAtTheCall() {
        PullConsumer c = consumer();
        assertThrows(IllegalArgumentException.class, () -> c.pull("", "g", 1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> c.pull("a/b", "g", 1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> c.pull("a b", "g", 1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> c.pull("x".repeat(129), "g", 1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> c.pull("s", "g".repeat(121), 1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> c.pull("s", null, 1, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> c.pull("s", "g", 0, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> c.pull("s", "g", 1001, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> c.pull("s", "g", 1, Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> c.pull("s", "g", 1, null));
        assertThrows(IllegalArgumentException.class, () -> c.append("s", null));
        assertThrows(IllegalArgumentException.class, () -> c.ack("s", "g", List.of(-1L)));
        assertThrows(IllegalArgumentException.class, () -> c.nack("s", "g", -1));
        assertThrows(IllegalArgumentException.class, () -> c.consume("s", "g", null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.pull("s", "bad group", 1, Duration.ZERO));
        assertTrue(e.getMessage().startsWith("group"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PullConsumer.requireValidSubject("a/b"));
        assertThrows(IllegalArgumentException.class, () -> PullConsumer.requireValidGroup(""));
        assertEquals("orders.eu-1_x", PullConsumer.requireValidSubject("orders.eu-1_x"));
        assertEquals(1000, c.maxMessagesPerPull());
        assertEquals(Duration.ofSeconds(30), c.ackTimeout());
        assertEquals(100_000, c.maxWaitingPulls());
        assertThrows(IllegalArgumentException.class, () -> PullConsumer.builder(null));
        assertThrows(IllegalArgumentException.class, () -> PullConsumer.builder(scheduler).ackTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> PullConsumer.builder(scheduler).maxWaitingPulls(0));
        assertThrows(IllegalArgumentException.class, () -> PullConsumer.builder(scheduler).maxMessagesPerPull(0));
        assertThrows(IllegalArgumentException.class, () -> PullConsumer.builder(scheduler).store(null));
        assertThrows(IllegalArgumentException.class, () -> FailurePolicy.retryThenDeadLetter(0, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> FailurePolicy.retryForever(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> ConsumerOptions.builder().batchSize(0));
        assertThrows(IllegalArgumentException.class, () -> ConsumerOptions.builder().pollTimeout(Duration.ZERO));
    }

    /** Names come from clients: a rejected one is quoted escaped, so it cannot forge a log line. */
    @Test
    void aRejectedNameIsQuotedWithoutItsControlCharacters() {
        PullConsumer c = consumer();
        IllegalArgumentException subject = assertThrows(IllegalArgumentException.class,
                () -> c.append("a\nFORGED b", b("x")));
        assertFalse(subject.getMessage().contains("\n"), subject.getMessage());
        assertTrue(subject.getMessage().contains("U+000A at index 1"), subject.getMessage());
        IllegalArgumentException group = assertThrows(IllegalArgumentException.class,
                () -> c.pullOnce("s", "g\r\u001b[31m", 1));
        assertFalse(group.getMessage().contains("\r") || group.getMessage().contains("\u001b"), group.getMessage());
        IllegalArgumentException blank = assertThrows(IllegalArgumentException.class, () -> scheduler.group("\n\t", 1));
        assertFalse(blank.getMessage().contains("\n") || blank.getMessage().contains("\t"), blank.getMessage());
        IllegalArgumentException slash = assertThrows(IllegalArgumentException.class, () -> scheduler.group("a/\nb", 1));
        assertFalse(slash.getMessage().contains("\n"), slash.getMessage());
    }

    /** 1,000 waiting long polls are objects in one actor, not threads. */
    @Test
    void thousandWaitingLongPollsHoldNoThreads() throws Exception {
        PullConsumer c = consumer();
        int before = ManagementFactory.getThreadMXBean().getThreadCount();
        int n = 1_000;
        List<PullResult> answers = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Disposable> subs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            subs.add(c.pull("busy", "g", 1, Duration.ofSeconds(60), true).subscribe(answers::add));
        }
        await(() -> c.stats("busy", "g").waitingPulls() == n, "1000 waiting pulls");
        int during = ManagementFactory.getThreadMXBean().getThreadCount();
        assertTrue(during - before < 10, "threads grew from " + before + " to " + during);
        for (int i = 0; i < n; i++) {
            c.append("busy", b("m" + i));
        }
        await(() -> answers.size() == n, "all 1000 answered");
        assertEquals(n, answers.stream().mapToLong(r -> r.messages().size()).sum());
        assertEquals(n, answers.stream().map(r -> r.messages().get(0).offset()).distinct().count(),
                "each message went to exactly one poll");
        assertEquals(0, c.stats("busy", "g").waitingPulls());
    }

    @Test
    void cancelledPullIsDroppedAndItsMessagesStayAvailable() throws Exception {
        PullConsumer c = consumer();
        Disposable d = c.pull("s", "g", 10, Duration.ofSeconds(60)).subscribe();
        await(() -> c.stats("s", "g").waitingPulls() == 1, "waiting");
        d.dispose();
        c.append("s", b("m"));
        await(() -> c.stats("s", "g").waitingPulls() == 0, "cancelled pull dropped");
        assertEquals(List.of(0L), offsets(c.pullOnce("s", "g", 10).block(Duration.ofSeconds(5))));
    }

    /**
     * A disposed consumer refuses appends as it refuses pulls: an append went on storing (the HTTP sample
     * answered 201 where its README promises 503 once the consumer is disposed; found by a black-box probe).
     * The store itself is left as is and can still be written directly.
     */
    @Test
    void aDisposedConsumerRefusesAppendsAsItRefusesPulls() {
        InMemoryMessageStore store = InMemoryMessageStore.create();
        PullConsumer c = PullConsumer.builder(scheduler).store(store).build();
        assertEquals(0, c.append("s", b("kept")));
        c.dispose();
        assertThrows(java.util.concurrent.RejectedExecutionException.class, () -> c.append("s", b("late")));
        StepVerifier.create(c.appendAsync("s", b("late")))
                .expectError(java.util.concurrent.RejectedExecutionException.class).verify(Duration.ofSeconds(5));
        PullConsumer async = PullConsumer.builder(scheduler).asyncStore(AsyncMessageStore.of(store)).build();
        async.dispose();
        StepVerifier.create(async.appendAsync("s", b("late")))
                .expectError(java.util.concurrent.RejectedExecutionException.class).verify(Duration.ofSeconds(5));
        assertEquals(1, store.endOffset("s"), "nothing stored after the dispose");
        assertEquals(1, store.append("s", b("direct")), "the store itself is left as is");
    }

    @Test
    void disposeAnswersWaitingPullsWithAnError() throws Exception {
        PullConsumer c = consumer();
        Mono<PullResult> waiting = c.pull("s", "g", 1, Duration.ofSeconds(60)).cache();
        waiting.subscribe(r -> { }, e -> { });
        await(() -> c.stats("s", "g").waitingPulls() == 1, "waiting");
        c.dispose();
        StepVerifier.create(waiting).expectError(IllegalStateException.class).verify(Duration.ofSeconds(5));
        StepVerifier.create(c.pull("s", "g", 1, Duration.ZERO))
                .expectError(java.util.concurrent.RejectedExecutionException.class).verify(Duration.ofSeconds(5));
    }

    @Test
    void aPairRetiresAndComesBackWhenRemovingItsMetersFails() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().onMeterRemoved(m -> {
            throw new IllegalStateException("a removal listener failed (test)");
        });
        ActorScheduler metered = ActorScheduler.builder().name("pull-unbind").threads(2)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            PullConsumer c = PullConsumer.builder(metered).idleTimeout(Duration.ofMillis(50)).build();
            c.append("s", b("1"));
            c.pull("s", "g", 1, Duration.ZERO, true).block(Duration.ofSeconds(5));
            await(() -> c.liveGroups() == 0, "the idle pair retired although its meters could not be removed");
            // a retired actor left in the registry would make this call spin forever: run it off the test thread
            PullResult again = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(10),
                    () -> c.pull("s", "g", 1, Duration.ZERO).block(Duration.ofSeconds(5)));
            assertEquals(PullResult.Status.EMPTY, again.status(), "a new actor for the pair, at the committed offset");
            c.dispose();
        } finally {
            metered.dispose();
        }
    }

    @Test
    void aPairServesWhenRegisteringItsMetersFails() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().onMeterAdded(m -> {
            if (m.getId().getName().startsWith("reactor.actor.pull")) {
                throw new IllegalStateException("an add listener failed (test)");
            }
        });
        ActorScheduler metered = ActorScheduler.builder().name("pull-bind").threads(2)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            PullConsumer c = PullConsumer.builder(metered).build();
            c.append("s", b("1"));
            PullResult r = c.pull("s", "g", 1, Duration.ZERO, true).block(Duration.ofSeconds(5));
            assertEquals(List.of(0L), offsets(r));
            assertEquals(1, c.liveGroups());
            c.dispose(); // terminates the pair: its meters' removal must not throw either
        } finally {
            metered.dispose();
        }
    }

    @Test
    void metricsAreExportedThroughTheSchedulersRegistry() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ActorScheduler metered = ActorScheduler.builder().name("pull-metered").threads(2).metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            PullConsumer c = PullConsumer.builder(metered).build();
            c.append("s", b("1"));
            c.append("s", b("2"));
            c.pull("s", "g", 1, Duration.ofSeconds(1)).block(Duration.ofSeconds(5));
            assertNotNull(registry.find("reactor.actor.pull.queue.time").tag("group", "g").tag("subject", "s").timer());
            assertEquals(1.0, registry.get("reactor.actor.pull.requests").tag("group", "g").functionCounter().count());
            assertEquals(1.0, registry.get("reactor.actor.pull.delivered").tag("group", "g").functionCounter().count());
            assertEquals(2.0, registry.get("reactor.actor.pull.lag").tag("group", "g").gauge().value());
            assertEquals(1.0, registry.get("reactor.actor.pull.in.flight").tag("group", "g").gauge().value());
            c.dispose();
            await(() -> registry.find("reactor.actor.pull.lag").tag("group", "g").gauge() == null, "meters removed");
        } finally {
            metered.dispose();
        }
    }
}
