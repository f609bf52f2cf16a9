package io.reactoractor.pull;

import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The answer to one pull.
 *
 * @param subject  the subject pulled
 * @param group    the consumer group
 * @param status   why the pull was answered
 * @param messages the messages delivered (empty unless {@code status == MESSAGES}), in offset order
 *                 except for redeliveries, which come first
 * @param epoch    the {@linkplain MessageStore#epoch() store epoch} the messages were delivered in:
 *                 pass it back with the acknowledgement ({@link PullConsumer#ack(String, String, String,
 *                 java.util.Collection)})
 * @param skipped  messages the store had dropped (retention) before this group read them, passed over
 *                 by this answer: they will never be delivered to the group. A group starts at the oldest
 *                 message held when it is first used: what retention dropped before that is not counted
 * @param attempts the delivery attempt of each message, by position in {@code messages}: 1 for its first
 *                 delivery to the group, 2 for the first redelivery (after an ack timeout, a retrying nack
 *                 or a released delivery), ... as {@link Delivery#attempt()} counts them; the consumer's
 *                 {@link FailurePolicy} dead-letters a message when a nack comes at its last attempt. With an
 *                 {@link AsyncMessageStore} shared by several processes the count is this process's own (see
 *                 the store's documentation)
 */
public record PullResult(String subject, String group, Status status, List<Message> messages, String epoch,
        long skipped, List<Integer> attempts) {

    /** Why a pull was answered. */
    public enum Status {
        /** At least one message was delivered. */
        MESSAGES,
        /** A pull-once (zero timeout) found nothing. */
        EMPTY,
        /**
         * Nothing arrived before the pull's timeout (also: the pull had expired before its turn, and nothing
         * was there then: such a pull is served as a pull-once).
         */
        TIMED_OUT
    }

    /**
     * Copies {@code messages} and {@code attempts} defensively.
     *
     * @param subject  the subject pulled
     * @param group    the consumer group
     * @param status   why the pull was answered
     * @param messages the messages delivered
     * @param epoch    the store epoch the messages were delivered in
     * @param skipped  messages dropped by retention before this group read them, at least 0
     * @param attempts the delivery attempt of each message (as many as messages, each at least 1)
     * @throws NullPointerException     if an argument, a message or an attempt is {@code null}
     * @throws IllegalArgumentException if {@code skipped} is negative, {@code attempts} and {@code messages}
     *                                  differ in size, or an attempt is below 1
     */
    public PullResult {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(epoch, "epoch");
        if (skipped < 0) {
            throw new IllegalArgumentException("skipped must be >= 0 but was " + skipped);
        }
        messages = List.copyOf(messages);
        attempts = List.copyOf(attempts);
        if (attempts.size() != messages.size()) {
            throw new IllegalArgumentException("attempts must hold one entry per message: " + attempts.size()
                    + " attempts for " + messages.size() + " messages");
        }
        for (int a : attempts) {
            if (a < 1) {
                throw new IllegalArgumentException("attempts must be >= 1 but contained " + a);
            }
        }
    }

    /**
     * An answer whose messages are all at their first delivery.
     *
     * @param subject  the subject pulled
     * @param group    the consumer group
     * @param status   why the pull was answered
     * @param messages the messages delivered
     * @param epoch    the store epoch the messages were delivered in
     * @param skipped  messages dropped by retention before this group read them, at least 0
     */
    public PullResult(String subject, String group, Status status, List<Message> messages, String epoch,
            long skipped) {
        this(subject, group, status, messages, epoch, skipped, firstAttempts(messages));
    }

    /**
     * An answer of a store with the default (durable) epoch that skipped nothing.
     *
     * @param subject  the subject pulled
     * @param group    the consumer group
     * @param status   why the pull was answered
     * @param messages the messages delivered
     */
    public PullResult(String subject, String group, Status status, List<Message> messages) {
        this(subject, group, status, messages, "durable", 0);
    }

    /** @return whether no message was delivered */
    public boolean isEmpty() {
        return messages.isEmpty();
    }

    /**
     * @param index a position in {@link #messages()}
     * @return the delivery attempt of the message there (1 for its first delivery)
     * @throws IndexOutOfBoundsException if there is no message at {@code index}
     */
    public int attempt(int index) {
        return attempts.get(index);
    }

    private static List<Integer> firstAttempts(List<Message> messages) {
        return Collections.nCopies(Objects.requireNonNull(messages, "messages").size(), 1);
    }
}
