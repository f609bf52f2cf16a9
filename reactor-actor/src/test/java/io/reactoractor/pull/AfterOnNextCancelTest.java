package io.reactoractor.pull;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;

/**
 * {@link AckMode#AFTER_ON_NEXT} when the stream is cancelled while a message is in {@code onNext} (found by a
 * black-box probe): a message is acknowledged only if it was handled. Not acknowledged, so redelivered: the
 * element a {@code takeWhile} stops at, the element a {@code timeout()} drops after its timer fired, and the
 * element a {@code takeUntilOther} / {@code take(Duration)} drops after its trigger fired on another thread;
 * nacked: a handler failing after {@code next()}. Still acknowledged: {@code next()} and {@code take(n)} with
 * handlers that succeed, and a message whose {@code onNext} returns after a {@code dispose()} from another thread.
 */
@Timeout(120)
class AfterOnNextCancelTest {

    private static final String S = "s";
    private static final String G = "g";

    private final ActorScheduler scheduler = ActorScheduler.builder().name("after-on-next").threads(2).build();
    private final List<PullConsumer> consumers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        consumers.forEach(PullConsumer::dispose);
        scheduler.dispose();
    }

    /** A consumer with a long ack timeout (only acks, nacks and releases matter) and immediate retries. */
    private PullConsumer consumerWith5Messages() {
        PullConsumer c = PullConsumer.builder(scheduler).ackTimeout(Duration.ofSeconds(60))
                .failurePolicy(FailurePolicy.retryForever(Duration.ZERO)).build();
        consumers.add(c);
        for (int i = 0; i < 5; i++) {
            c.append(S, ("m" + i).getBytes(StandardCharsets.UTF_8));
        }
        return c;
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(5);
        }
    }

    /** What the group hands out next, once the acks and releases in flight are in: offsets and attempts. */
    private static List<String> available(PullConsumer c, int expected) throws InterruptedException {
        List<String> got = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (got.size() < expected && System.nanoTime() < deadline) {
            PullResult r = c.pull(S, G, 10, Duration.ofMillis(200)).block(Duration.ofSeconds(10));
            for (Message m : r.messages()) {
                got.add(String.valueOf(m.offset()));
            }
        }
        Thread.sleep(100);
        PullResult more = c.pullOnce(S, G, 10).block(Duration.ofSeconds(10));
        more.messages().forEach(m -> got.add(String.valueOf(m.offset())));
        return got;
    }

    @Test
    void aHandlerFailingAfterNextIsANack() throws Exception {
        PullConsumer c = consumerWith5Messages();
        AtomicReference<Throwable> error = new AtomicReference<>();
        c.consume(S, G).next()
                .map(d -> {
                    throw new IllegalStateException("handler failed on " + d.message().offset());
                })
                .doOnError(error::set).onErrorResume(t -> Mono.empty())
                .block(Duration.ofSeconds(10));
        assertThat(error.get()).isInstanceOf(IllegalStateException.class);
        // offset 0 nacked (retried at once), not acknowledged
        assertThat(available(c, 5)).containsExactlyInAnyOrder("0", "1", "2", "3", "4");
        assertThat(c.stats(S, G).committedOffset()).isZero();
    }

    @Test
    void aLambdaSubscriberFailingAfterNextIsANack() throws Exception {
        PullConsumer c = consumerWith5Messages();
        CountDownLatch failed = new CountDownLatch(1);
        c.consume(S, G).next().subscribe(d -> {
            throw new IllegalStateException("ship failed");
        }, t -> failed.countDown());
        assertThat(failed.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(available(c, 5)).containsExactlyInAnyOrder("0", "1", "2", "3", "4");
        assertThat(c.stats(S, G).committedOffset()).isZero();
    }

    @Test
    void nextAndTakeWithHandlersThatSucceedAcknowledge() throws Exception {
        PullConsumer c = consumerWith5Messages();
        assertThat(c.consume(S, G).next().map(d -> d.message().offset()).block(Duration.ofSeconds(10))).isZero();
        await(() -> c.stats(S, G).committedOffset() == 1, "offset 0 acknowledged");
        assertThat(c.consume(S, G).take(2).map(d -> d.message().offset()).collectList()
                .block(Duration.ofSeconds(10))).containsExactly(1L, 2L);
        await(() -> c.stats(S, G).committedOffset() == 3, "offsets 1 and 2 acknowledged");
        assertThat(available(c, 2)).containsExactly("3", "4");
    }

    @Test
    void theElementATakeWhileStopsAtIsNotAcknowledged() throws Exception {
        PullConsumer c = consumerWith5Messages();
        List<Long> seen = c.consume(S, G).takeWhile(d -> d.message().offset() < 2)
                .map(d -> d.message().offset()).collectList().block(Duration.ofSeconds(10));
        assertThat(seen).containsExactly(0L, 1L);
        await(() -> c.stats(S, G).committedOffset() == 2, "offsets 0 and 1 acknowledged");
        assertThat(available(c, 3)).as("offset 2 never reached a handler").containsExactly("2", "3", "4");
        assertThat(c.stats(S, G).committedOffset()).isEqualTo(2);
    }

    @Test
    void anElementATakeUntilOtherDropsAfterItsTriggerFiredIsRedelivered() throws Exception {
        PullConsumer c = consumerWith5Messages();
        CountDownLatch inOnNext = new CountDownLatch(1);
        CountDownLatch fired = new CountDownLatch(1);
        reactor.core.publisher.Sinks.One<String> trigger = reactor.core.publisher.Sinks.one();
        List<Long> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch ended = new CountDownLatch(1);
        c.consume(S, G)
                .doOnNext(d -> {
                    // offset 0 is on its way down when the trigger fires on another thread: takeUntilOther
                    // cancels upstream, completes, and then drops it (its serialized downstream is done)
                    inOnNext.countDown();
                    try {
                        fired.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                })
                .takeUntilOther(trigger.asMono())
                .doOnNext(d -> seen.add(d.message().offset()))
                .doFinally(sig -> ended.countDown())
                .subscribe();
        assertThat(inOnNext.await(10, TimeUnit.SECONDS)).isTrue();
        trigger.tryEmitValue("stop").orThrow();
        fired.countDown();
        assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(seen).as("offset 0 was dropped, never handled").isEmpty();
        assertThat(available(c, 5)).containsExactlyInAnyOrder("0", "1", "2", "3", "4");
        assertThat(c.stats(S, G).committedOffset()).isZero();
    }

    @Test
    void aDisposeFromAnotherThreadDuringOnNextLeavesThatMessageHandled() throws Exception {
        PullConsumer c = consumerWith5Messages();
        CountDownLatch inOnNext = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        BaseSubscriber<Delivery> slow = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                request(1);
            }

            @Override
            protected void hookOnNext(Delivery d) {
                inOnNext.countDown();
                try {
                    cancelled.await(10, TimeUnit.SECONDS); // the cancel arrives while this onNext runs
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        c.consume(S, G).subscribe(slow);
        assertThat(inOnNext.await(10, TimeUnit.SECONDS)).isTrue();
        slow.dispose(); // this thread: a closed connection, a disposal; the handler still finishes offset 0
        cancelled.countDown();
        await(() -> c.stats(S, G).committedOffset() == 1, "offset 0 acknowledged when its onNext returned");
        assertThat(available(c, 4)).containsExactlyInAnyOrder("1", "2", "3", "4");
    }

    @Test
    void aCancelFromInsideOnNextStillAcknowledgesThatMessage() throws Exception {
        PullConsumer c = consumerWith5Messages();
        CountDownLatch done = new CountDownLatch(1);
        c.consume(S, G).subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                request(5);
            }

            @Override
            protected void hookOnNext(Delivery d) {
                cancel(); // the application's own cancel after handling it
                done.countDown();
            }
        });
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        await(() -> c.stats(S, G).committedOffset() == 1, "offset 0 acknowledged");
        assertThat(available(c, 4)).containsExactlyInAnyOrder("1", "2", "3", "4");
    }
}
