package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * With an {@link AsyncMessageStore}, a message is settled by its dead-lettering only once the store confirmed the
 * copy ({@code AsyncMessageStore.deadLetter}: "when the copy fails nothing is acknowledged (the message stays
 * pending)"). A black-box probe found it settled at once: a failed copy was lost, the next ack moving the store's
 * committed offset past it, and a cursor-based store ({@code AsyncMessageStore.of}) never delivered it again.
 * The nack that dead-letters is answered with the store's reply: it fails when the copy does, as with a
 * synchronous store (it completed at once before, with a committed offset that did not count the message).
 */
class AsyncDeadLetterFailureTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("async-dead-letter").threads(2).build();
    private final MessageStore memory = InMemoryMessageStore.create();
    private final AtomicBoolean deadLettersFail = new AtomicBoolean(true);
    private PullConsumer consumer;

    @AfterEach
    void tearDown() {
        if (consumer != null) {
            consumer.dispose();
        }
        scheduler.dispose();
    }

    @Test
    void aFailedDeadLetterCopyLeavesTheMessagePendingAndItIsDeadLetteredOnceTheStoreRecovers() {
        consumer = PullConsumer.builder(scheduler).asyncStore(AsyncMessageStore.of(new DeadLettersMayFail()))
                .ackTimeout(Duration.ofMillis(300)).failurePolicy(FailurePolicy.retryThenDeadLetter(1, Duration.ZERO))
                .build();
        consumer.appendAsync("s", bytes("poison")).block(Duration.ofSeconds(30));
        consumer.appendAsync("s", bytes("fine")).block(Duration.ofSeconds(30));
        PullResult first = consumer.pull("s", "g", 1, Duration.ofSeconds(10)).block(Duration.ofSeconds(30));
        assertEquals(0L, first.messages().get(0).offset());
        // its last attempt: dead-lettered, and the copy fails: the nack says so, as the synchronous path's does
        Throwable refused = assertThrows(MessageStoreException.class,
                () -> consumer.nack("s", "g", first.epoch(), 0).block(Duration.ofSeconds(30)));
        assertTrue(refused.getMessage().contains("redelivered after the ack timeout"), refused.getMessage());
        PullResult second = consumer.pull("s", "g", 1, Duration.ofSeconds(10)).block(Duration.ofSeconds(30));
        assertEquals(1L, second.messages().get(0).offset());
        consumer.ack("s", "g", second.epoch(), List.of(1L)).block(Duration.ofSeconds(30));

        // the copy failed: the message stays pending, so the committed offset stays before it, and it comes back
        PullResult again = consumer.pull("s", "g", 1, Duration.ofSeconds(10)).block(Duration.ofSeconds(30));
        assertEquals(List.of(0L), again.messages().stream().map(Message::offset).toList(),
                "redelivered after the ack timeout, not lost");
        assertEquals(0L, memory.endOffset("dlq.g"));
        assertEquals(0L, consumer.stats("s", "g").deadLettered());

        deadLettersFail.set(false);
        // answered once the store made the copy: the committed offset passes both messages then
        assertEquals(2L, consumer.nack("s", "g", again.epoch(), 0).block(Duration.ofSeconds(30)));
        assertEquals(1L, consumer.stats("s", "g").deadLettered());
        assertEquals(1L, memory.endOffset("dlq.g"), "copied once the store took it");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The in-memory store, whose dead-letter subject refuses appends while {@link #deadLettersFail} is set. */
    private final class DeadLettersMayFail extends ForwardingMessageStore {

        DeadLettersMayFail() {
            super(memory);
        }

        @Override
        public long append(String subject, byte[] payload) {
            if (subject.startsWith("dlq.") && deadLettersFail.get()) {
                throw new IllegalStateException("injected: the dead-letter subject cannot be written");
            }
            return inner.append(subject, payload);
        }
    }
}
