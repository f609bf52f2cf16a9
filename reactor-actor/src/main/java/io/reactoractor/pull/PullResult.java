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
 */
public record PullResult(String subject, String group, Status status, List<Message> messages) {

    /** Why a pull was answered. */
    public enum Status {
        /** At least one message was delivered. */
        MESSAGES,
        /** A pull-once (zero timeout) found nothing. */
        EMPTY,
        /** Nothing arrived before the pull's timeout (also: the pull had expired before its turn). */
        TIMED_OUT
    }

    /** Copies {@code messages} defensively. */
    public PullResult {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(status, "status");
        messages = List.copyOf(messages);
    }

    /** @return whether no message was delivered */
    public boolean isEmpty() {
        return messages.isEmpty();
    }
}
