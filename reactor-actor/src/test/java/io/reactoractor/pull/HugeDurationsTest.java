package io.reactoractor.pull;

import static io.reactoractor.pull.PullConsumerTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * Durations far beyond any run ({@code ChronoUnit.FOREVER}, {@code Long.MAX_VALUE} nanoseconds) mean
 * "forever": they are capped where they are added to the clock, never overflowing into the past (a pull
 * answered {@code TIMED_OUT} at once) or throwing {@code ArithmeticException} out of a builder or a
 * {@code request}.
 */
class HugeDurationsTest {

    private static final Duration FOREVER = ChronoUnit.FOREVER.getDuration();

    private final ActorScheduler scheduler = ActorScheduler.builder().name("huge-durations").threads(2).build();
    private PullConsumer consumer;

    @AfterEach
    void tearDown() {
        if (consumer != null) {
            consumer.dispose();
        }
        scheduler.dispose();
    }

    @Test
    void aPullWithAHugeTimeoutReturnsTheWaitingMessages() {
        consumer = PullConsumer.builder(scheduler).build();
        consumer.append("s", b("m"));
        for (Duration timeout : new Duration[] {Duration.ofNanos(Long.MAX_VALUE), FOREVER}) {
            PullResult r = consumer.pull("s", "g-" + timeout.getSeconds(), 1, timeout).block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.MESSAGES, r.status(), "timeout " + timeout);
        }
    }

    @Test
    void aHugeAckTimeoutBuildsAndDelivers() {
        consumer = PullConsumer.builder(scheduler).ackTimeout(FOREVER).build();
        consumer.append("s", b("m"));
        assertEquals(PullResult.Status.MESSAGES,
                consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10)).status());
    }

    @Test
    void aConsumerWithAHugePollTimeoutAndBackoffDeliversAndRetries() {
        consumer = PullConsumer.builder(scheduler).build();
        consumer.append("s", b("m"));
        ConsumerOptions options = ConsumerOptions.builder().pollTimeout(FOREVER)
                .failurePolicy(FailurePolicy.retryForever(FOREVER)).ackMode(AckMode.EXPLICIT).build();
        StepVerifier.create(consumer.consume("s", "g", options), 1)
                .consumeNextWith(d -> d.nack(new IllegalStateException("later, much later")))
                .thenCancel()
                .verify(Duration.ofSeconds(10));
    }
}
