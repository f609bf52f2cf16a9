package io.reactoractor.pull;

import static io.reactoractor.pull.PullConsumerTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.test.StepVerifier;

/**
 * {@link PullConsumer#quiesce()}: the first half of a graceful shutdown. No pull waits any more (waiting
 * long polls are answered at once, later ones too), consumer streams complete, and everything else goes on
 * until {@link PullConsumer#dispose()}. Every wait here is for something that must happen at once; the
 * long polls' own timeouts (a minute) are far beyond the test's time limit.
 */
@Timeout(60)
class PullConsumerQuiesceTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("quiesce-test").threads(2).build();
    private final PullConsumer consumer = PullConsumer.builder(scheduler).build();

    @AfterEach
    void tearDown() {
        consumer.dispose();
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
    }

    @Test
    void waitingLongPollsAreAnsweredAtOnceAndLaterOnesDoNotWait() throws Exception {
        CompletableFuture<PullResult> waiting = consumer.pull("quiet", "g", 10, MINUTE).toFuture();
        await(() -> consumer.stats("quiet", "g").waitingPulls() == 1);
        assertFalse(consumer.isQuiescing());

        consumer.quiesce();

        assertTrue(consumer.isQuiescing());
        PullResult answered = waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(PullResult.Status.TIMED_OUT, answered.status());
        assertEquals(List.of(), answered.messages());
        // a later long poll does not wait either, on a known pair or a new one
        assertEquals(PullResult.Status.TIMED_OUT, consumer.pull("quiet", "g", 10, MINUTE).block(WAIT).status());
        assertEquals(PullResult.Status.TIMED_OUT, consumer.pull("other", "h", 10, MINUTE).block(WAIT).status());
        // everything else goes on: appends, long polls that find messages, acks, pull-once
        consumer.append("quiet", b("m1"));
        PullResult got = consumer.pull("quiet", "g", 10, MINUTE).block(WAIT);
        assertEquals(PullResult.Status.MESSAGES, got.status());
        assertEquals(1, got.messages().size());
        assertEquals(1L, consumer.ack("quiet", "g", PullConsumerTest.offsets(got)).block(WAIT));
        assertEquals(PullResult.Status.EMPTY, consumer.pullOnce("quiet", "g", 10).block(WAIT).status());
        await(() -> consumer.stats("quiet", "g").waitingPulls() == 0); // published after the answers
        consumer.quiesce(); // idempotent
        assertFalse(consumer.isDisposed());
    }

    @Test
    void consumerStreamsCompleteAndTheirDeliveriesCanStillBeAcknowledged() {
        consumer.append("orders", b("a"));
        ConsumerOptions explicit = ConsumerOptions.builder().ackMode(AckMode.EXPLICIT)
                .pollTimeout(MINUTE).build();
        Delivery[] first = new Delivery[1];
        StepVerifier.create(consumer.consume("orders", "billing", explicit))
                .assertNext(d -> first[0] = d)
                // the stream's next pull waits for a minute: quiescing completes the stream instead
                .then(() -> await(() -> consumer.stats("orders", "billing").waitingPulls() == 1))
                .then(consumer::quiesce)
                .expectComplete()
                .verify(WAIT);
        // the delivery is still in flight, and the group still takes its acknowledgement
        assertEquals(1, consumer.stats("orders", "billing").inFlight());
        first[0].ack();
        await(() -> consumer.stats("orders", "billing").inFlight() == 0);
        // a stream subscribed afterwards completes at once, without a message
        consumer.append("orders", b("b"));
        StepVerifier.create(consumer.consume("orders", "billing")).expectComplete().verify(WAIT);
    }

    /**
     * Thousands of waiting long polls are all answered, however many turns that takes: each answer is a task,
     * the quota (100 µs here) cuts the turn, and the actor stays scheduled for the rest.
     */
    @Test
    void everyWaitingLongPollIsAnsweredAcrossTurnsCutByTheQuota() throws Exception {
        ActorScheduler tight = ActorScheduler.builder().name("quiesce-quota").threads(2)
                .quota(Duration.ofNanos(100_000)).preemptionGranularity(Duration.ofNanos(50_000)).build();
        PullConsumer c = PullConsumer.builder(tight).build();
        try {
            int n = 3_000;
            List<CompletableFuture<PullResult>> polls = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                polls.add(c.pull("quiet", "g", 1, MINUTE).toFuture());
            }
            // every pull waiting, and the actor suspended for them (its count final until something resumes it)
            await(() -> c.stats("quiet", "g").waitingPulls() == n && c.stats("quiet", "g").suspended());
            long suspends = c.stats("quiet", "g").suspends();
            c.quiesce();
            for (CompletableFuture<PullResult> p : polls) {
                assertEquals(PullResult.Status.TIMED_OUT, p.get(WAIT.toSeconds(), TimeUnit.SECONDS).status());
            }
            // the pulls a quota cut left were due at once: the actor stayed scheduled for them, it did not
            // suspend until a deadline (a count, not a clock: exact on any machine)
            assertEquals(suspends, c.stats("quiet", "g").suspends(), "suspended between two quota-cut turns");
        } finally {
            c.dispose();
            tight.disposeGracefully().block(Duration.ofSeconds(10));
        }
    }

    /** With an asynchronous store a quiesced long poll still asks the store, and gets what it holds. */
    @Test
    void withAnAsynchronousStoreALongPollStillGetsTheStoresMessages() {
        ActorScheduler s = ActorScheduler.builder().name("quiesce-async").threads(2).build();
        PullConsumer c = PullConsumer.builder(s).asyncStore(AsyncMessageStore.of(InMemoryMessageStore.create()))
                .build();
        try {
            c.quiesce();
            c.appendAsync("orders", b("a")).block(WAIT);
            PullResult r = c.pull("orders", "billing", 10, MINUTE).block(WAIT);
            assertEquals(PullResult.Status.MESSAGES, r.status());
            assertEquals(1, r.messages().size());
            assertEquals(PullResult.Status.TIMED_OUT, c.pull("orders", "billing", 10, MINUTE).block(WAIT).status());
        } finally {
            c.dispose();
            s.disposeGracefully().block(Duration.ofSeconds(10));
        }
    }

    /**
     * The scheduler disposed under a quiescing consumer (the consumer itself not disposed): a caller's long
     * poll posted afterwards fails, as before quiescing. A {@code TIMED_OUT} there would make a caller that
     * polls again at once loop on the terminated actor.
     */
    @Test
    void aLongPollToAGroupWhoseSchedulerWasDisposedFailsEvenWhileQuiescing() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("quiesce-disposed").threads(1).build();
        PullConsumer c = PullConsumer.builder(s).build();
        try {
            CompletableFuture<PullResult> waiting = c.pull("quiet", "g", 1, MINUTE).toFuture();
            await(() -> c.stats("quiet", "g").waitingPulls() == 1);
            c.quiesce();
            assertEquals(PullResult.Status.TIMED_OUT, waiting.get(WAIT.toSeconds(), TimeUnit.SECONDS).status());
            s.dispose();
            // a pull that raced the termination's drain (the actor's last turn may still be ending) is answered
            // TIMED_OUT with the ones the drain finds; every pull after that drain fails
            Throwable failed = null;
            for (int i = 0; i < 5 && failed == null; i++) {
                try {
                    assertEquals(PullResult.Status.TIMED_OUT, c.pull("quiet", "g", 1, MINUTE).block(WAIT).status());
                } catch (IllegalStateException | java.util.concurrent.RejectedExecutionException e) {
                    // the terminated actor's drain fails it (IllegalStateException); once the actor left the
                    // registries, the disposed scheduler refuses a new one (RejectedExecutionException)
                    failed = e;
                }
            }
            assertTrue(failed != null, "a caller polling again on TIMED_OUT is stopped by an error");
        } finally {
            c.dispose();
        }
    }

    @Test
    void disposeAfterQuiesceEndsTheRestAsBefore() throws Exception {
        consumer.quiesce();
        consumer.dispose();
        assertTrue(consumer.isDisposed());
        StepVerifier.create(consumer.pullOnce("s", "g", 1)).expectError().verify(WAIT);
    }

    private static void await(java.util.function.BooleanSupplier condition) {
        try {
            PullConsumerTest.await(condition, "condition");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
