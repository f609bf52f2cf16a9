package io.reactoractor.pull;

import java.util.List;
import java.util.Set;

import reactor.core.Disposable;

/**
 * Where a {@link PullConsumer} reads messages and keeps consumer-group offsets: subjects (topics)
 * holding ordered messages at offsets {@code 0, 1, 2, ...}, per {@code (subject, group)} committed
 * offsets, and a listener fired after each append.
 *
 * <p>{@link InMemoryMessageStore} is the embedded default. An implementation backed by a real log
 * (a file, a database, a broker) implements the same contract:
 * <ul>
 *   <li>all methods are thread-safe and non-blocking enough to be called from scheduler threads
 *       (no network round trip per call: cache or batch if the backing store is remote);</li>
 *   <li>subjects are created on first use, by {@link #append} or {@link #ensureSubject};</li>
 *   <li>{@link #endOffset} is updated <em>before</em> the append listeners run, so a listener (or
 *       anybody woken by it) that reads from the old end offset sees the new message;</li>
 *   <li>a store may drop old messages (retention): {@link #startOffset} is then the oldest offset
 *       still readable and {@link #read} starts there when asked for an older one.</li>
 * </ul>
 * Names are validated by the {@link PullConsumer}, not by the store.
 */
public interface MessageStore {

    /**
     * Appends a message, creating the subject if needed, then notifies the append listeners.
     *
     * @param subject the subject
     * @param payload the bytes (not copied)
     * @return the new message's offset
     */
    long append(String subject, byte[] payload);

    /**
     * Identifies this store's offset space. Offsets name messages only within one epoch: a store
     * whose offsets can be reused for other messages (the in-memory store after a restart starts again
     * at 0) must return a new epoch each time that can happen. A {@link PullResult} carries the epoch
     * of its delivery and an acknowledgement from another epoch is refused
     * ({@link StaleDeliveryException}). A durable store that never reuses an offset may keep the
     * default, a constant. A pull consumer does not carry a {@code (subject, group)} it serves across a
     * change of epoch: its position and deliveries name the old epoch's offsets, so its pulls then fail
     * with a {@link MessageStoreException} saying so, and the consumer is to be built again over the store
     * (a pair created after the change starts in the new epoch).
     *
     * @return the current epoch, not empty
     */
    default String epoch() {
        return "durable";
    }

    /**
     * Creates {@code subject} (empty) unless it exists.
     *
     * @param subject the subject
     */
    void ensureSubject(String subject);

    /** @return the subjects that exist */
    Set<String> subjects();

    /**
     * Reads messages in offset order. The pull consumer refuses an answer whose offsets do not increase
     * from {@code fromOffset} (or that holds another subject's message) with a
     * {@link MessageStoreException} naming them, and reads again what is above {@code maxMessages}. An
     * {@link #endOffset} above the messages a read can return yet (a slot reserved, filled later) is
     * allowed: the consumer reads again when the end moves, or after a short wait while pulls wait.
     *
     * @param subject     the subject (an unknown subject reads as empty)
     * @param fromOffset  the first offset wanted; when it is older than {@link #startOffset} the read
     *                    starts at the start offset
     * @param maxMessages at most this many (≥ 1)
     * @return the messages, possibly empty, never {@code null}
     */
    List<Message> read(String subject, long fromOffset, int maxMessages);

    /**
     * @param subject the subject
     * @return the oldest offset still readable (0 for a new or unknown subject)
     */
    long startOffset(String subject);

    /**
     * @param subject the subject
     * @return the offset the next append will get (0 for a new or unknown subject)
     */
    long endOffset(String subject);

    /**
     * @param subject the subject
     * @param group   the consumer group
     * @return the group's committed offset: every message before it was acknowledged by the group;
     *         {@code -1} if the group never committed on this subject
     */
    long committedOffset(String subject, String group);

    /**
     * Moves the group's committed offset forward; a smaller value than the current one is ignored
     * (commits are monotonic, so a late commit cannot rewind the group). A store may refuse a commit by
     * throwing (the in-memory store does when it holds its maximum of offsets,
     * {@link OffsetLimitExceededException}): the pull consumer keeps the group's progress, reports the error
     * to the acknowledgement that caused the commit, and commits again at the group's next turns.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param offset  the new committed offset
     */
    void commit(String subject, String group, long offset);

    /**
     * Registers a listener called after every append, on the appending thread.
     *
     * @param listener called with the subject and its new end offset; must be fast and should not throw (the
     *                 stores of this library log a listener that throws and go on: the append reports its
     *                 offset and the other listeners are called)
     * @return disposing it unregisters the listener
     */
    Disposable addAppendListener(AppendListener listener);

    /** Called after messages were appended to a subject. */
    @FunctionalInterface
    interface AppendListener {
        /**
         * @param subject   the subject appended to
         * @param endOffset its end offset after the append
         */
        void appended(String subject, long endOffset);

        /**
         * Called when the store may have failed to report appends: any subject may have new messages, and a
         * consumer waiting for them should look again. The Redis store calls it once its notification channel
         * (Pub/Sub) is subscribed again after a lost connection and its command connection is up: appends
         * made meanwhile were not heard. Must be fast and should not throw (a store logs a listener that
         * throws and goes on). The default does nothing.
         */
        default void appendsMissed() {
        }
    }
}
