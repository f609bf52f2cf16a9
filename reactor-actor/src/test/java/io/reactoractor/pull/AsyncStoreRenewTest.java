package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code (subject, group)} actor tells an asynchronous store about its own redeliveries
 * ({@link AsyncMessageStore#renew}), so that a store which reclaims by idle time (Redis) does not hand
 * them to another process as well; a first delivery is not renewed. After an ack timeout the store is asked
 * first ({@link AsyncMessageStore#renewPending}, which renews): a message another process acknowledged is
 * not delivered again.
 */
class AsyncStoreRenewTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("renew-test").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
    }

    @Test
    void aRedeliveryIsRenewedAFirstDeliveryIsNot() throws InterruptedException {
        RecordingAsyncStore store = new RecordingAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).ackTimeout(Duration.ofMillis(200)).build();
        try {
            c.appendAsync("s", "x".getBytes()).block(Duration.ofSeconds(10));
            c.appendAsync("s", "y".getBytes()).block(Duration.ofSeconds(10));
            PullResult first = c.pull("s", "g", 2, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
            assertEquals(2, first.messages().size());
            assertEquals(List.of(), List.copyOf(store.renewed), "first deliveries are not renewed");
            c.ack("s", "g", List.of(first.messages().get(0).offset())).block(Duration.ofSeconds(20));
            PullResult again = c.pull("s", "g", 2, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
            long y = first.messages().get(1).offset();
            assertEquals(List.of(y), again.messages().stream().map(Message::offset).toList(), "redelivered");
            // renewed once: by the check of its ack timeout (renewPending), which the redelivery does not repeat
            assertEquals(List.of(y), List.copyOf(store.checked));
            assertEquals(List.of(), List.copyOf(store.renewed));
        } finally {
            c.dispose();
        }
    }

    @Test
    void aMessageAcknowledgedThroughAnotherProcessIsNotDeliveredAgainAfterTheAckTimeout() throws InterruptedException {
        RecordingAsyncStore store = new RecordingAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).ackTimeout(Duration.ofMillis(200)).build();
        try {
            c.appendAsync("s", "x".getBytes()).block(Duration.ofSeconds(10));
            c.appendAsync("s", "y".getBytes()).block(Duration.ofSeconds(10));
            PullResult first = c.pull("s", "g", 2, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
            assertEquals(2, first.messages().size());
            long x = first.messages().get(0).offset();
            long y = first.messages().get(1).offset();
            store.settledElsewhere.add(x); // its ack reached another instance sharing the store
            PullResult again = c.pull("s", "g", 2, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
            assertEquals(List.of(y), again.messages().stream().map(Message::offset).toList(),
                    "only the message still pending in the store is delivered again");
            AsyncMessageStoreContract.await(() -> c.stats("s", "g").acknowledged() == 1, "x settled here too");
            PullResult none = c.pull("s", "g", 2, Duration.ZERO).block(Duration.ofSeconds(20));
            assertEquals(List.of(), none.messages());
            assertEquals(1, c.stats("s", "g").inFlight(), "y only");
        } finally {
            c.dispose();
        }
    }

    /**
     * A redelivery taken into an answer is renewed even when the byte budget leaves the next due
     * redelivery for a later pull (the cut once returned before the renew call).
     */
    @Test
    void aRedeliveryIsRenewedWhenTheByteBudgetCutsTheNextOne() throws InterruptedException {
        RecordingAsyncStore store = new RecordingAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).ackTimeout(Duration.ofMillis(100))
                .maxBytesPerPull(3).build();
        try {
            c.appendAsync("s", "xx".getBytes()).block(Duration.ofSeconds(10));
            c.appendAsync("s", "yy".getBytes()).block(Duration.ofSeconds(10));
            PullResult first = c.pull("s", "g", 2, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
            PullResult second = c.pull("s", "g", 2, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
            assertEquals(1, first.messages().size(), "2 + 2 bytes exceed the budget of 3");
            assertEquals(1, second.messages().size());
            long x = first.messages().get(0).offset();
            // both ack timeouts pass: both messages are due for redelivery before the next pull
            Thread.sleep(400);
            PullResult again = c.pull("s", "g", 2, Duration.ofSeconds(10)).block(Duration.ofSeconds(20));
            assertEquals(List.of(x), again.messages().stream().map(Message::offset).toList(),
                    "the first due redelivery, the second left by the byte budget");
            // both timed out, so both were checked (and so renewed) before x's redelivery; y, cut by the byte
            // budget, waits for the next pull. Nothing is renewed a second time (x may be, when this thread
            // was descheduled past the ack timeout between the first two pulls: the second pull was then
            // already a redelivery of x)
            assertTrue(store.checked.contains(x), "checked: " + store.checked);
            assertTrue(store.renewed.stream().allMatch(o -> o == x), "renewed: " + store.renewed);
        } finally {
            c.dispose();
        }
    }
}
