package io.reactoractor.pull;

import static io.reactoractor.pull.PullConsumerTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A synchronous {@link MessageStore} that throws: the waiting pulls get a {@link MessageStoreException}
 * and the group's actor is left idle (it ran into the same failure turn after turn), a failed commit is
 * retried, and the pair serves again once the store recovers.
 */
class FailingSyncStoreTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("failing-sync-store").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    /** Delegates to an in-memory store; reads and commits throw while {@code failing} is set. */
    static final class FlakyStore extends ForwardingMessageStore {
        final AtomicBoolean failing = new AtomicBoolean();
        final AtomicInteger reads = new AtomicInteger();
        /** Whether the failure is an {@code Error} (a store's assertion, a missing class) rather than an exception. */
        volatile boolean failWithError;
        /** Commits only fail while set (reads succeed). */
        final AtomicBoolean failingCommits = new AtomicBoolean();

        private void fail() {
            if (failWithError) {
                throw new AssertionError("expected test failure: disk on fire");
            }
            throw new IllegalStateException("disk on fire");
        }

        @Override
        public List<Message> read(String subject, long fromOffset, int maxMessages) {
            reads.incrementAndGet();
            if (failing.get()) {
                fail();
            }
            return inner.read(subject, fromOffset, maxMessages);
        }

        @Override
        public void commit(String subject, String group, long offset) {
            if (failing.get() || failingCommits.get()) {
                fail();
            }
            inner.commit(subject, group, offset);
        }
    }

    @Test
    void aThrowingReadFailsTheWaitingPullsAndTheActorDoesNotLoop() throws InterruptedException {
        FlakyStore store = new FlakyStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            store.append("s", b("m"));
            store.failing.set(true);
            Throwable error = null;
            try {
                consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            } catch (RuntimeException e) {
                error = e;
            }
            assertTrue(error instanceof MessageStoreException, "the pull failed with the store's error: " + error);
            int readsAfter = store.reads.get();
            Thread.sleep(200);
            assertTrue(store.reads.get() - readsAfter <= 1, "no turn after turn against the failing store: "
                    + (store.reads.get() - readsAfter) + " more reads");
            store.failing.set(false);
            PullResult r = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.MESSAGES, r.status(), "served again once the store recovered");
        } finally {
            consumer.dispose();
        }
    }

    @Test
    void aReadOrCommitThrowingAnErrorFailsTheWaitingPullAsAnExceptionDoes() {
        // an Error escaped the turn: the pull waited out its whole timeout and was answered TIMED_OUT, as if
        // the subject held no message
        FlakyStore store = new FlakyStore();
        store.failWithError = true;
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            store.append("s", b("m"));
            store.failing.set(true);
            reactor.test.StepVerifier.create(consumer.pull("s", "g", 1, Duration.ofSeconds(30)))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof MessageStoreException, e::toString);
                        assertTrue(e.getCause() instanceof AssertionError, () -> String.valueOf(e.getCause()));
                    })
                    .verify(Duration.ofSeconds(10));
            store.failing.set(false);
            // a pull is acknowledged on delivery: the commit before its answer fails with an Error; the answer
            // still goes out (the message is settled in the ledger, committed by a later call)
            store.failingCommits.set(true);
            PullResult served = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.MESSAGES, served.status(), "answered despite the failed commit");
            store.failingCommits.set(false);
            store.append("s", b("n"));
            PullResult next = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(1L, next.messages().get(0).offset(), "the settled message is not delivered again");
        } finally {
            store.failing.set(false);
            store.failingCommits.set(false);
            consumer.dispose();
        }
    }

    @Test
    void aConsumerFailedByTheStoreReleasesItsUnacknowledgedMessagesAtOnce() {
        FlakyStore store = new FlakyStore();
        // a long ack timeout: a message that comes back soon was released, not timed out
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).ackTimeout(Duration.ofMinutes(10)).build();
        try {
            store.append("s", b("first"));
            ConsumerOptions explicit = ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).build();
            reactor.test.StepVerifier.create(consumer.consume("s", "g", explicit), 1)
                    .expectNextCount(1) // delivered, never acknowledged
                    .then(() -> store.failing.set(true))
                    .then(() -> store.append("s", b("second")))
                    .thenRequest(1)
                    .expectError(MessageStoreException.class)
                    .verify(Duration.ofSeconds(10));
            store.failing.set(false);
            PullResult again = consumer.pull("s", "g", 2, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.MESSAGES, again.status());
            assertEquals(0L, again.messages().get(0).offset(), "the failed consumer's message came back at once");
        } finally {
            consumer.dispose();
        }
    }
}
