package io.reactoractor.pull;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;

/**
 * What counts as a delivery, and what counts as waiting (found by a black-box probe): a message handed to
 * a consumer that never passed it to the application (a {@code consume()} cancelled mid-batch, a
 * {@code pull()} answer discarded) does not use up one of its failure policy's attempts, nor raise
 * {@link Delivery#attempt()}; a pull-once is never refused for {@code maxWaitingPulls}, which limits long
 * polls; and a pull-once answered {@code EMPTY} is no longer counted as waiting when its answer arrives.
 */
class PullDeliveryCountingTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("pull-counting").threads(2).build();
    private final List<PullConsumer> consumers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        consumers.forEach(PullConsumer::dispose);
        scheduler.dispose();
    }

    private PullConsumer consumer(PullConsumer.Builder b) {
        PullConsumer c = b.build();
        consumers.add(c);
        return c;
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(2);
        }
    }

    @Test
    void messagesAConsumerCancelledMidBatchNeverHandedOverKeepTheirAttempts() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(60))
                .failurePolicy(FailurePolicy.retryThenDeadLetter(2, Duration.ZERO)));
        for (int i = 0; i < 4; i++) {
            c.append("s", b("m" + i));
        }
        // a batch of 4 is handed to the consumer; its subscriber takes the first and cancels
        c.consume("s", "g", ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).batchSize(4).build())
                .subscribe(new BaseSubscriber<Delivery>() {
                    @Override
                    protected void hookOnSubscribe(Subscription s) {
                        request(4);
                    }

                    @Override
                    protected void hookOnNext(Delivery d) {
                        d.ack();
                        cancel();
                    }
                });
        await(() -> c.stats("s", "g").committedOffset() == 1, "offset 0 acknowledged");

        List<String> seen = new CopyOnWriteArrayList<>();
        Disposable second = c.consume("s", "g", ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).build())
                .subscribe(d -> {
                    seen.add(d.message().offset() + "@" + d.attempt());
                    if (d.attempt() == 1) {
                        d.nack(new IllegalStateException("fails once"));
                    } else {
                        d.ack();
                    }
                });
        await(() -> c.stats("s", "g").committedOffset() == 4, "all settled");
        second.dispose();

        // their first delivery to the application is attempt 1; failing once leaves them one more (of 2)
        assertThat(seen).containsExactlyInAnyOrder("1@1", "2@1", "3@1", "1@2", "2@2", "3@2");
        assertThat(c.stats("s", "g").deadLettered()).isZero();
        assertThat(c.store().endOffset("dlq.g")).isZero();
    }

    /**
     * The pullfail probe's finding: a raw {@code Subscriber} whose {@code onNext} throws mid-batch had the rest
     * of the batch, never handed to it, counted as delivered (attempt 2 at its first sight, and with
     * {@code retryThenDeadLetter(2)} dead-lettered at its first failure). A Reactor lambda handler's failure
     * (caught by Reactor) left the rest uncounted already; a throwing {@code onNext} now does the same.
     */
    @Test
    void messagesAfterAnOnNextThatThrewMidBatchKeepTheirAttempts() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(60))
                .failurePolicy(FailurePolicy.retryThenDeadLetter(2, Duration.ZERO)));
        for (int i = 0; i < 3; i++) {
            c.append("s", b("m" + i));
        }
        List<String> first = new CopyOnWriteArrayList<>();
        c.consume("s", "g", ConsumerOptions.builder().batchSize(3).build()).subscribe(new org.reactivestreams.Subscriber<Delivery>() {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(3);
            }

            @Override
            public void onNext(Delivery d) {
                first.add(d.message().offset() + "@" + d.attempt());
                if (d.message().offset() == 1) {
                    throw new IllegalStateException("the handler failed"); // breaks rule 2.13; supported all the same
                }
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onComplete() {
            }
        });
        // (Reactor's StrictSubscriber around a raw Subscriber keeps the error to itself once onNext threw)
        await(() -> first.size() == 2 && c.stats("s", "g").committedOffset() == 1, "offset 0 handled, offset 1 failed");
        assertThat(first).containsExactly("0@1", "1@1");

        List<String> seen = new CopyOnWriteArrayList<>();
        Disposable second = c.consume("s", "g", ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).build())
                .subscribe(d -> {
                    seen.add(d.message().offset() + "@" + d.attempt());
                    if (d.message().offset() == 2 && d.attempt() == 1) {
                        d.nack(new IllegalStateException("fails once")); // its first failure: one attempt left
                    } else {
                        d.ack();
                    }
                });
        await(() -> c.stats("s", "g").committedOffset() == 3, "all settled");
        second.dispose();
        // offset 1 failed once (attempt 2 now); offset 2 never reached the first subscriber: attempt 1
        assertThat(seen).containsExactlyInAnyOrder("1@2", "2@1", "2@2");
        assertThat(c.stats("s", "g").deadLettered()).isZero();
    }

    @Test
    void aDiscardedPullAnswerDoesNotUseUpAnAttempt() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(60))
                .failurePolicy(FailurePolicy.retryThenDeadLetter(2, Duration.ZERO)));
        long offset = c.append("s", b("m"));
        // the answer arrives while nobody requested it: Mono.create holds it, the cancel discards it
        BaseSubscriber<PullResult> unrequested = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                // no request
            }
        };
        c.pull("s", "g", 1, Duration.ofSeconds(5)).subscribe(unrequested);
        await(() -> c.stats("s", "g").inFlight() == 1, "the message handed to the unrequested pull");
        unrequested.cancel(); // released at once: the 60 s ack timeout would fail the pulls below

        PullResult first = c.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertThat(first.messages()).extracting(Message::offset).containsExactly(offset);
        assertThat(first.attempts()).as("the discarded answer is not counted").containsExactly(1);
        assertThat(c.nack("s", "g", offset).block(Duration.ofSeconds(10))).isZero();
        // the application saw it once and it failed once: one attempt of 2 is left, so it comes back
        PullResult again = c.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertThat(again.messages()).extracting(Message::offset).containsExactly(offset);
        assertThat(again.attempt(0)).isEqualTo(2);
        assertThat(c.stats("s", "g").deadLettered()).isZero();
    }

    @Test
    void aLateReleaseOfAPullAnswerLeavesALaterDeliveryOfTheSameMessageAlone() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(2))
                .failurePolicy(FailurePolicy.retryThenDeadLetter(5, Duration.ZERO)));
        long offset = c.append("s", b("m"));
        BaseSubscriber<PullResult> unrequested = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                // no request: Mono.create holds the answer until the cancel discards it
            }
        };
        c.pull("s", "g", 1, Duration.ofSeconds(5)).subscribe(unrequested);
        await(() -> c.stats("s", "g").inFlight() == 1, "the message handed to the unrequested pull");
        // its ack timeout passes first: the message is delivered again, to a pull that holds it
        PullResult held = c.pull("s", "g", 1, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
        assertThat(held.messages()).extracting(Message::offset).containsExactly(offset);
        // only now is the first answer discarded: its release names the first delivery, not this one
        unrequested.cancel();
        PullResult meanwhile = c.pull("s", "g", 1, Duration.ZERO).block(Duration.ofSeconds(10));
        assertThat(meanwhile.messages()).as("the message is still in the second pull's hands").isEmpty();
        assertThat(c.stats("s", "g").inFlight()).isEqualTo(1);
        assertThat(c.ack("s", "g", List.of(offset)).block(Duration.ofSeconds(10))).isEqualTo(offset + 1);
    }

    @Test
    void aStaleHoldersNackLeavesTheNewerDeliveryInFlightAlone() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(2))
                .failurePolicy(FailurePolicy.retryThenDeadLetter(2, Duration.ZERO)));
        long offset = c.append("s", b("m"));
        List<Delivery> first = new CopyOnWriteArrayList<>();
        BaseSubscriber<Delivery> stale = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                request(1); // one message, no further pull waiting in the group
            }

            @Override
            protected void hookOnNext(Delivery d) {
                first.add(d); // held without settling: its ack timeout passes
            }
        };
        c.consume("s", "g", ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).build()).subscribe(stale);
        await(() -> first.size() == 1, "the first delivery");
        // delivered again once the first holder's ack timeout passed: attempt 2, the last one
        PullResult held = c.pull("s", "g", 1, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
        assertThat(held.messages()).extracting(Message::offset).containsExactly(offset);
        assertThat(held.attempts()).containsExactly(2);
        // the stale holder fails now: not a failure of the delivery in flight, which must not be
        // dead-lettered or handed to someone else under its holder
        first.get(0).nack(new IllegalStateException("stale holder failed"));
        PullResult meanwhile = c.pull("s", "g", 1, Duration.ZERO).block(Duration.ofSeconds(10));
        assertThat(meanwhile.messages()).isEmpty();
        assertThat(c.stats("s", "g").deadLettered()).isZero();
        assertThat(c.ack("s", "g", List.of(offset)).block(Duration.ofSeconds(10))).isEqualTo(offset + 1);
        assertThat(c.stats("s", "g").deadLettered()).isZero();
        stale.dispose();
    }

    @Test
    void aPullAnswerTellsEachMessagesAttemptRedeliveriesFirst() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(60))
                .failurePolicy(FailurePolicy.retryThenDeadLetter(3, Duration.ZERO)));
        long a = c.append("s", b("a"));
        long b = c.append("s", b("b"));
        PullResult first = c.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertThat(first.messages()).extracting(Message::offset).containsExactly(a);
        assertThat(first.attempts()).containsExactly(1);
        assertThat(first.attempt(0)).isEqualTo(1);
        c.nack("s", "g", a).block(Duration.ofSeconds(10)); // retried at once: attempt 2 comes first
        PullResult second = c.pull("s", "g", 2, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertThat(second.messages()).extracting(Message::offset).containsExactly(a, b);
        assertThat(second.attempts()).containsExactly(2, 1);
        c.nack("s", "g", a).block(Duration.ofSeconds(10));
        PullResult third = c.pull("s", "g", 2, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertThat(third.messages()).extracting(Message::offset).containsExactly(a);
        assertThat(third.attempts()).as("the last attempt the policy allows").containsExactly(3);
        // a nack at the last attempt dead-letters it
        c.nack("s", "g", a).block(Duration.ofSeconds(10));
        assertThat(c.stats("s", "g").deadLettered()).isEqualTo(1);
        PullResult timedOut = c.pull("s", "g", 2, Duration.ZERO).block(Duration.ofSeconds(10));
        assertThat(timedOut.messages()).isEmpty();
        assertThat(timedOut.attempts()).isEmpty();
    }

    /** Pulls {@code offset}, holds it past the ack timeout, and pulls it again: the two answers. */
    private static PullResult[] deliveredTwice(PullConsumer c, long offset) {
        PullResult first = c.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
        assertThat(first.messages()).extracting(Message::offset).containsExactly(offset);
        assertThat(first.attempts()).containsExactly(1);
        PullResult second = c.pull("s", "g", 1, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
        assertThat(second.messages()).extracting(Message::offset).containsExactly(offset);
        assertThat(second.attempts()).containsExactly(2);
        return new PullResult[] {first, second};
    }

    @Test
    void aLateHoldersAckSettlesTheMessageDeliveredAgain() throws Exception {
        // documented: an acknowledgement names offsets, not deliveries
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(1)));
        long offset = c.append("s", b("m"));
        PullResult[] twice = deliveredTwice(c, offset);
        PullResult first = twice[0];
        PullResult second = twice[1];
        // the first holder acknowledges late: the message is settled, the newer holder's ack finds it settled
        assertThat(c.ack("s", "g", first.epoch(), List.of(offset)).block(Duration.ofSeconds(10))).isEqualTo(offset + 1);
        assertThat(c.stats("s", "g").inFlight()).isZero();
        assertThat(c.ack("s", "g", second.epoch(), List.of(offset)).block(Duration.ofSeconds(10))).isEqualTo(offset + 1);
        assertThat(c.pull("s", "g", 1, Duration.ZERO).block(Duration.ofSeconds(10)).messages()).isEmpty();
    }

    @Test
    void aPullNackNamingAnOlderAttemptLeavesTheNewerDeliveryAloneAndTheCurrentAttemptCounts() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(1))
                .failurePolicy(FailurePolicy.retryThenDeadLetter(2, Duration.ZERO)));
        long offset = c.append("s", b("m"));
        // the second delivery is the last attempt the policy allows
        PullResult[] twice = deliveredTwice(c, offset);
        PullResult first = twice[0];
        PullResult second = twice[1];
        // the first holder fails late, naming its delivery: ignored while the second holds the message
        assertThat(c.nack("s", "g", first.epoch(), offset, first.attempt(0)).block(Duration.ofSeconds(10))).isZero();
        assertThat(c.stats("s", "g").deadLettered()).isZero();
        assertThat(c.stats("s", "g").inFlight()).isEqualTo(1);
        assertThat(c.pull("s", "g", 1, Duration.ZERO).block(Duration.ofSeconds(10)).messages())
                .as("still in the second holder's hands").isEmpty();
        // the current holder's nack counts: its last attempt failed, so the message is dead-lettered
        assertThat(c.nack("s", "g", second.epoch(), offset, second.attempt(0)).block(Duration.ofSeconds(10)))
                .isEqualTo(offset + 1);
        assertThat(c.stats("s", "g").deadLettered()).isEqualTo(1);
    }

    @Test
    void aPullNackNamingAnAttemptRejectsBadArguments() {
        PullConsumer c = consumer(PullConsumer.builder(scheduler));
        String epoch = c.store().epoch();
        assertThatThrownBy(() -> c.nack("s", "g", epoch, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("attempt");
        assertThatThrownBy(() -> c.nack("s", "g", epoch, -1, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("offset");
        assertThatThrownBy(() -> c.nack("s", "g", "", 0, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("epoch");
        assertThatThrownBy(() -> c.nack("bad subject", "g", epoch, 0, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("subject");
        // a stale epoch: nothing settled
        assertThatThrownBy(() -> c.nack("s", "g", "not-" + epoch, 0, 1).block(Duration.ofSeconds(10)))
                .isInstanceOf(StaleDeliveryException.class);
    }

    @Test
    void aPullOnceIsNeverRefusedForTheLongPollLimit() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).maxWaitingPulls(2));
        c.append("s", b("warm-up")); // the pair exists
        c.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
        List<Disposable> polls = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            polls.add(c.pull("s", "g", 1, Duration.ofSeconds(30)).subscribe());
        }
        await(() -> c.stats("s", "g").waitingPulls() == 2, "two long polls waiting");

        PullResult once = c.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
        assertThat(once.status()).isEqualTo(PullResult.Status.EMPTY);

        Throwable refused = c.pull("s", "g", 1, Duration.ofSeconds(30))
                .map(r -> (Throwable) null).onErrorResume(e -> reactor.core.publisher.Mono.just(e))
                .block(Duration.ofSeconds(10));
        assertThat(refused).isInstanceOf(IllegalStateException.class).hasMessageContaining("maxWaitingPulls");
        polls.forEach(Disposable::dispose);
    }

    /**
     * Found by a black-box probe of the WebFlux sample: a stream whose client paused (no demand, no pull) and then
     * read again was cut mid-response when long polls had filled the group's waiting slots meanwhile. A stream is
     * admitted or refused at its first pull; once the group answered it, its pulls are never refused.
     */
    @Test
    void aStreamAlreadyAnsweredIsNeverCutByTheLongPollLimitButANewOneIsRefusedAtItsFirstPull() throws Exception {
        PullConsumer c = consumer(PullConsumer.builder(scheduler).maxWaitingPulls(2));
        c.append("s", b("first"));
        List<Delivery> delivered = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicReference<Throwable> streamError = new java.util.concurrent.atomic.AtomicReference<>();
        BaseSubscriber<Delivery> stream = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                request(1);
            }

            @Override
            protected void hookOnNext(Delivery d) {
                delivered.add(d); // acknowledged after onNext (the default); no more demand: the client pauses
            }

            @Override
            protected void hookOnError(Throwable t) {
                streamError.set(t);
            }
        };
        c.consume("s", "g").subscribe(stream);
        await(() -> delivered.size() == 1, "the stream's first message");
        // the client pauses; long polls take every waiting slot meanwhile
        List<Disposable> polls = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            polls.add(c.pull("s", "g", 1, Duration.ofSeconds(30)).subscribe());
        }
        await(() -> c.stats("s", "g").waitingPulls() == 2, "two long polls waiting");
        // a new stream is refused at its first pull, before it delivered anything
        Throwable refused = c.consume("s", "g").next().map(d -> (Throwable) null)
                .onErrorResume(e -> reactor.core.publisher.Mono.just(e)).block(Duration.ofSeconds(10));
        assertThat(refused).isInstanceOf(WaitingPullsLimitExceededException.class);
        // the paused client reads again: its stream's pull is taken (it holds a slot beside the long polls)
        stream.request(1);
        await(() -> c.stats("s", "g").waitingPulls() == 3, "the stream's pull waiting beside the long polls");
        assertThat(streamError.get()).isNull();
        for (int i = 0; i < 3; i++) {
            c.append("s", b("m" + i));
        }
        await(() -> delivered.size() == 2, "the stream's second message");
        assertThat(streamError.get()).isNull();
        stream.dispose();
        polls.forEach(Disposable::dispose);
    }

    @Test
    void aPullOnceAnsweredEmptyIsNotCountedAsWaitingWhenItsAnswerArrives() {
        PullConsumer c = consumer(PullConsumer.builder(scheduler));
        c.append("s", b("m"));
        c.pullOnce("s", "g", 1).block(Duration.ofSeconds(10)); // takes the only message
        for (int i = 0; i < 200; i++) {
            PullResult r = c.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
            assertThat(r.status()).isEqualTo(PullResult.Status.EMPTY);
            assertThat(c.stats("s", "g").waitingPulls()).as("round " + i).isZero();
        }
    }
}
