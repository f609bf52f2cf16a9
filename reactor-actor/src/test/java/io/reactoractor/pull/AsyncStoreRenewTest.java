package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The {@code (subject, group)} actor tells an asynchronous store about its own redeliveries
 * ({@link AsyncMessageStore#renew}), so that a store which reclaims by idle time (Redis) does not hand
 * them to another process as well; a first delivery is not renewed.
 */
class AsyncStoreRenewTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("renew-test").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
    }

    /** The adapted in-memory store, recording renew calls. */
    static final class Recording implements AsyncMessageStore {
        final AsyncMessageStore delegate = AsyncMessageStore.of(InMemoryMessageStore.create());
        final ConcurrentLinkedQueue<Long> renewed = new ConcurrentLinkedQueue<>();

        @Override
        public Mono<Void> renew(String subject, String group, long[] offsets) {
            for (long o : offsets) {
                renewed.add(o);
            }
            return Mono.empty();
        }

        @Override
        public Mono<Long> append(String subject, byte[] payload) {
            return delegate.append(subject, payload);
        }

        @Override
        public boolean denseOffsets() {
            return true;
        }

        @Override
        public Mono<List<Message>> fetch(String subject, String group, long fromOffset, int maxMessages) {
            return delegate.fetch(subject, group, fromOffset, maxMessages);
        }

        @Override
        public Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed) {
            return delegate.acknowledge(subject, group, offsets, committed);
        }

        @Override
        public Mono<Reclaimed> reclaim(String subject, String group, long cursor, Duration minIdle, int maxMessages) {
            return delegate.reclaim(subject, group, cursor, minIdle, maxMessages);
        }

        @Override
        public Mono<Position> position(String subject, String group) {
            return delegate.position(subject, group);
        }

        @Override
        public Disposable addAppendListener(MessageStore.AppendListener listener) {
            return delegate.addAppendListener(listener);
        }
    }

    @Test
    void aRedeliveryIsRenewedAFirstDeliveryIsNot() throws InterruptedException {
        Recording store = new Recording();
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
            AsyncMessageStoreContract.await(() -> store.renewed.contains(y), "the redelivery was renewed");
            assertEquals(List.of(y), List.copyOf(store.renewed));
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
        Recording store = new Recording();
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
            AsyncMessageStoreContract.await(() -> store.renewed.contains(x), "the redelivery was renewed");
            assertEquals(List.of(x), List.copyOf(store.renewed));
        } finally {
            c.dispose();
        }
    }
}
