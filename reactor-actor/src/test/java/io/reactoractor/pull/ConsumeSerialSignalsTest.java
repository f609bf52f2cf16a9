package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * Rule 1.3 at the start of a {@code consume()} stream: a subscriber that requests inside {@code onSubscribe}
 * gets no {@code onNext} (which runs on the group actor's thread) before its {@code onSubscribe} returned,
 * however long {@code onSubscribe} takes after the request.
 */
@Timeout(60)
class ConsumeSerialSignalsTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("consume-serial").threads(2).build();
    private final PullConsumer consumer = PullConsumer.builder(scheduler).build();

    @AfterEach
    void tearDown() {
        consumer.dispose();
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
    }

    @Test
    void noOnNextWhileOnSubscribeStillRuns() throws Exception {
        consumer.append("orders", "a".getBytes(StandardCharsets.UTF_8));
        AtomicBoolean inOnSubscribe = new AtomicBoolean();
        AtomicInteger overlapping = new AtomicInteger();
        CountDownLatch received = new CountDownLatch(1);
        consumer.consume("orders", "billing").subscribe(new CoreSubscriber<Delivery>() {
            @Override
            public void onSubscribe(Subscription s) {
                inOnSubscribe.set(true);
                s.request(1); // the message is there: before the fix, its onNext came while we waited below
                try {
                    // until the message arrives (before the fix) or 2 s pass (no pull goes out before we return)
                    received.await(2, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                inOnSubscribe.set(false);
            }

            @Override
            public void onNext(Delivery d) {
                if (inOnSubscribe.get()) {
                    overlapping.incrementAndGet();
                }
                received.countDown();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onComplete() {
            }
        });
        assertTrue(received.await(20, TimeUnit.SECONDS), "the message was delivered after onSubscribe");
        assertEquals(0, overlapping.get(), "onNext overlapped onSubscribe");
        assertFalse(inOnSubscribe.get());
    }
}
