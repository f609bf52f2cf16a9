package io.reactoractor.pull;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One message of a subject, as stored: immutable, identified by {@code (subject, offset)}.
 *
 * <p>The payload array is shared, not copied, on every read: treat it as read-only.
 *
 * @param subject         the subject (topic) it was appended to
 * @param offset          its position in the subject: from 0 without gaps in a {@link MessageStore};
 *                        increasing, possibly with gaps, in an {@link AsyncMessageStore} that maps its own
 *                        identifiers (see {@link AsyncMessageStore#denseOffsets()})
 * @param timestampMillis wall-clock time of the append ({@code System.currentTimeMillis()})
 * @param payload         the bytes appended
 */
public record Message(String subject, long offset, long timestampMillis, byte[] payload) {

    /**
     * Validates.
     *
     * @param subject         the subject it was appended to
     * @param offset          its position in the subject, at least 0
     * @param timestampMillis wall-clock time of the append
     * @param payload         the bytes appended (shared, not copied)
     * @throws NullPointerException     if {@code subject} or {@code payload} is {@code null}
     * @throws IllegalArgumentException if {@code offset} is negative
     */
    public Message {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(payload, "payload");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0 but was " + offset);
        }
    }

    /** @return the payload decoded as UTF-8 */
    public String payloadAsString() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    /** Equal when subject, offset, timestamp and payload <em>contents</em> are equal. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Message m && offset == m.offset && timestampMillis == m.timestampMillis
                && subject.equals(m.subject) && Arrays.equals(payload, m.payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(subject, offset) * 31 + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "Message[" + subject + "@" + offset + ", " + payload.length + " bytes]";
    }
}
