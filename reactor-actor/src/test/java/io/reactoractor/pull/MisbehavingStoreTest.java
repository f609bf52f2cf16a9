package io.reactoractor.pull;

import static io.reactoractor.pull.PullConsumerTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * A store a user wrote, which does what the SPI does not allow or allows awkwardly: the consumer names the
 * problem in a {@link MessageStoreException}, never hangs, never delivers twice what the store returned
 * out of order, and never spins on a store that reports an end it cannot read yet.
 */
class MisbehavingStoreTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("misbehaving-store").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    /** Delegates to an in-memory store, with the test's twists. */
    static final class OddStore extends ForwardingMessageStore {
        final AtomicInteger reads = new AtomicInteger();
        /** Added to the end offset: slots reserved and not readable yet. */
        volatile long reserved;
        volatile UnaryOperator<List<Message>> readTwist = UnaryOperator.identity();
        volatile String epoch = "durable";
        volatile boolean nullAppendRegistration;
        volatile boolean failCommittedOffset;

        @Override
        public String epoch() {
            return epoch;
        }

        @Override
        public List<Message> read(String subject, long fromOffset, int maxMessages) {
            reads.incrementAndGet();
            return readTwist.apply(inner.read(subject, fromOffset, maxMessages));
        }

        @Override
        public long endOffset(String subject) {
            return inner.endOffset(subject) + reserved;
        }

        @Override
        public long committedOffset(String subject, String group) {
            if (failCommittedOffset) {
                throw new IllegalStateException("test: the store is down");
            }
            return inner.committedOffset(subject, group);
        }

        @Override
        public Disposable addAppendListener(AppendListener listener) {
            return nullAppendRegistration ? null : inner.addAppendListener(listener);
        }
    }

    @Test
    void anEndOffsetAheadOfWhatReadReturnsIsWaitedForNotReadInALoop() throws InterruptedException {
        OddStore store = new OddStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            store.append("s", b("m0"));
            assertEquals(0L, consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10))
                    .messages().get(0).offset());
            store.reserved = 1; // offset 1 is reserved: the end says 2, read from 1 returns nothing yet
            List<PullResult> answered = new java.util.concurrent.CopyOnWriteArrayList<>();
            consumer.pull("s", "g", 1, Duration.ofSeconds(30)).subscribe(answered::add);
            Thread.sleep(100);
            int before = store.reads.get();
            Thread.sleep(300);
            int during = store.reads.get() - before;
            // a retry every 10 ms while the pull waits (about 30); without it, about a million a second
            assertTrue(during <= 100, during + " reads in 300 ms");
            assertEquals(List.of(), answered);
            // the other groups are served meanwhile
            store.inner.append("other", b("x"));
            assertEquals(PullResult.Status.MESSAGES, consumer.pull("other", "g2", 1, Duration.ofSeconds(5))
                    .block(Duration.ofSeconds(10)).status());
            // the reserved slot is filled: the waiting pull gets it
            store.reserved = 0;
            store.append("s", b("m1"));
            long until = System.nanoTime() + 10_000_000_000L;
            while (answered.isEmpty() && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            assertEquals(1, answered.size());
            assertEquals(1L, answered.get(0).messages().get(0).offset());
        } finally {
            consumer.dispose();
        }
    }

    @Test
    void offsetsThatDoNotIncreaseFromTheOneAskedForFailThePullNamingThem() {
        OddStore store = new OddStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            for (int i = 0; i < 3; i++) {
                store.append("s", b("m" + i));
            }
            store.readTwist = read -> {
                List<Message> reversed = new ArrayList<>(read);
                java.util.Collections.reverse(reversed);
                return reversed;
            };
            StepVerifier.create(consumer.pull("s", "g", 3, Duration.ofSeconds(5)))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof MessageStoreException, e::toString);
                        assertTrue(e.getCause().getMessage().contains("returned offset 1 after offset 2"),
                                e.getCause().getMessage());
                    })
                    .verify(Duration.ofSeconds(10));
            store.readTwist = UnaryOperator.identity();
            PullResult r = consumer.pull("s", "g", 3, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(List.of(0L, 1L, 2L), r.messages().stream().map(Message::offset).toList(),
                    "served again once the store answers in order, nothing delivered twice");
        } finally {
            consumer.dispose();
        }
    }

    @Test
    void moreMessagesThanAskedAreNotPassedOn() {
        OddStore store = new OddStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            for (int i = 0; i < 7; i++) {
                store.append("s", b("m" + i));
            }
            store.readTwist = read -> store.inner.read("s", read.isEmpty() ? 0 : read.get(0).offset(), 100);
            PullResult first = consumer.pull("s", "g", 2, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(List.of(0L, 1L), first.messages().stream().map(Message::offset).toList());
            PullResult second = consumer.pull("s", "g", 2, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(List.of(2L, 3L), second.messages().stream().map(Message::offset).toList(),
                    "the rest is read again, not lost");
        } finally {
            consumer.dispose();
        }
    }

    @Test
    void anEpochThatIsNullFailsThePullInsteadOfLeavingItWaiting() {
        OddStore store = new OddStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            store.append("s", b("m"));
            store.epoch = null;
            StepVerifier.create(consumer.pull("s", "g", 1, Duration.ofSeconds(30)))
                    .expectError(MessageStoreException.class)
                    .verify(Duration.ofSeconds(10));
        } finally {
            consumer.dispose();
        }
    }

    /**
     * A store whose epoch changes under a live pair (it restarted, its offsets begin again): the pair's
     * position belongs to the old epoch, so it refuses to serve, saying why, where it used to skip the new
     * epoch's first messages without a word. A consumer built again over the store serves the new epoch.
     */
    @Test
    void anEpochThatChangesUnderALivePairFailsItsPullsSayingSo() {
        OddStore store = new OddStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            for (int i = 0; i < 3; i++) {
                store.append("s", b("m" + i));
            }
            PullResult r = consumer.pull("s", "g", 3, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            consumer.ack("s", "g", r.epoch(), List.of(0L, 1L, 2L)).block(Duration.ofSeconds(10));
            store.epoch = "after-restart";
            StepVerifier.create(consumer.pull("s", "g", 3, Duration.ofSeconds(5)))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof MessageStoreException, e::toString);
                        assertTrue(e.getCause().getMessage().contains("epoch changed"), e.getCause().getMessage());
                    })
                    .verify(Duration.ofSeconds(10));
        } finally {
            consumer.dispose();
        }
    }

    @Test
    void aStoreFailingAsAPairIsCreatedIsAMessageStoreException() {
        OddStore store = new OddStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            store.append("s", b("m"));
            store.failCommittedOffset = true;
            StepVerifier.create(consumer.pull("s", "g", 1, Duration.ofSeconds(5)))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof MessageStoreException, e::toString);
                        assertEquals("test: the store is down", e.getCause().getMessage());
                    })
                    .verify(Duration.ofSeconds(10));
            store.failCommittedOffset = false;
            assertEquals(PullResult.Status.MESSAGES, consumer.pull("s", "g", 1, Duration.ofSeconds(5))
                    .block(Duration.ofSeconds(10)).status());
        } finally {
            consumer.dispose();
        }
    }

    @Test
    void anAppendListenerRegistrationThatIsNullIsRefusedNamingTheStore() {
        OddStore store = new OddStore();
        store.nullAppendRegistration = true;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PullConsumer.builder(scheduler).store(store).build());
        assertTrue(e.getMessage().startsWith("store"), e.getMessage());
    }

    @Test
    void anAsyncStoreThatThrowsInTheCallFailsThePullAndThePairRecovers() {
        RecordingAsyncStore store = new RecordingAsyncStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            consumer.appendAsync("s", b("m0")).block(Duration.ofSeconds(10));
            consumer.appendAsync("s", b("m1")).block(Duration.ofSeconds(10));
            store.throwInTheCall = true;
            StepVerifier.create(consumer.pull("s", "g", 1, Duration.ofSeconds(2)))
                    .expectError(MessageStoreException.class)
                    .verify(Duration.ofSeconds(10));
            store.throwInTheCall = false;
            PullResult r = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.MESSAGES, r.status(), "the pair fetches again");
            // an acknowledgement whose store call throws fails; the next ones are not stuck behind it
            store.throwInTheCall = true;
            long offset = r.messages().get(0).offset();
            StepVerifier.create(consumer.ack("s", "g", r.epoch(), List.of(offset)))
                    .expectError()
                    .verify(Duration.ofSeconds(10));
            store.throwInTheCall = false;
            // more acknowledgements than the consumer keeps store calls for at once (4): none is left waiting
            // for a call that never was
            for (int i = 0; i < 6; i++) {
                consumer.appendAsync("s", b("n" + i)).block(Duration.ofSeconds(10));
                PullResult next = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
                assertEquals(PullResult.Status.MESSAGES, next.status());
                consumer.ack("s", "g", next.epoch(), List.of(next.messages().get(0).offset()))
                        .block(Duration.ofSeconds(10));
            }
        } finally {
            consumer.dispose();
        }
    }
}
