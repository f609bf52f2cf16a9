package io.reactoractor.pull;

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
 */
public record PullResult(String subject, String group, Status status, List<Message> messages, String epoch,
        long skipped) {

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
     * Copies {@code messages} defensively.
     *
     * @param subject  the subject pulled
     * @param group    the consumer group
     * @param status   why the pull was answered
     * @param messages the messages delivered
     * @param epoch    the store epoch the messages were delivered in
     * @param skipped  messages dropped by retention before this group read them, at least 0
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
}
