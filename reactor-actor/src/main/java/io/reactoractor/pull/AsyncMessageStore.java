package io.reactoractor.pull;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * A {@link PullConsumer}'s store when it is remote: every call that may cross the network returns a
 * {@link Mono}, so no scheduler thread ever waits on it. The actor of a {@code (subject, consumer group)}
 * issues a call, goes on (or suspends, if its waiting pulls have nothing else to wait for) and handles
 * the answer in a later turn of its own (see the store table of the package-private
 * {@code AsyncStoreCalls}): an implementation may complete its Monos on any thread, its own I/O threads
 * included.
 *
 * <p>Unlike {@link MessageStore}, the store keeps each consumer group's delivery state itself, so that
 * several processes can serve one group (a Redis consumer group, for one):
 * <ul>
 *   <li>{@link #fetch} hands out messages the group has not been given yet, to this process; a message
 *       is handed out to one process of a group, until it is {@linkplain #reclaim reclaimed};</li>
 *   <li>{@link #acknowledge} settles messages; a message handed out and not acknowledged stays
 *       pending in the store, whatever happens to the process that took it;</li>
 *   <li>{@link #reclaim} takes over pending messages that nobody acknowledged for a while (this
 *       process's own slow consumers, or a process that died).</li>
 * </ul>
 * Offsets are {@code >= 0} and increase with every append to a subject; they may have gaps (a store
 * that maps its own identifiers to offsets documents the mapping). {@link #denseOffsets()} says when
 * they have none.
 *
 * <p>{@link #of(MessageStore)} adapts a synchronous store: its Monos complete at once, on the calling
 * thread. A {@link PullConsumer} given a plain {@link MessageStore} calls it directly instead.
 *
 * <p>Errors: a Mono that fails with anything but an {@link IllegalArgumentException} means the store
 * could not be reached or did not answer; the consumer reports it to the waiting callers as a
 * {@link MessageStoreException}. A call that throws instead of returning a Mono counts as a failed
 * call. Nothing is acknowledged to a producer before {@link #append}
 * completes: a failed append may or may not have been stored.
 *
 * <p>Time-outs: the consumer puts none on a store call (a pull never waits past its own deadline, but
 * the call it started stays outstanding), and it keeps one fetch and a few acknowledgements in flight
 * per {@code (subject, group)}, so a Mono that never completes holds that pair's fetches, or one of its
 * acknowledgement slots, for good. A store must therefore fail its calls after a time-out of its own, as
 * the Redis store does ({@code commandTimeout}).
 *
 * <p>Arguments: the stores of this library ({@link #of(MessageStore)}, the Redis store) and the default
 * methods here check them in the call itself, before any Mono is returned, as Reactor's factories do: a
 * {@code null} subject, group, payload, offsets array, message or duration throws
 * {@link NullPointerException} naming it; a count below 1, a negative cursor or a negative offset among the
 * offsets of {@link #acknowledge}, {@link #renew} or {@link #renewPending} throws {@link IllegalArgumentException}
 * naming it ({@code fetch}'s {@code fromOffset} and {@code acknowledge}'s {@code committed} take {@code -1} for
 * "none"). Other implementations should do the same.
 */
public interface AsyncMessageStore {

    /**
     * Appends a message, creating the subject if needed; the append listeners (of every process
     * sharing the store) are notified once it is stored.
     *
     * @param subject the subject
     * @param payload the bytes (not copied)
     * @return the new message's offset, once the store holds it
     */
    Mono<Long> append(String subject, byte[] payload);

    /**
     * The store's offset space; see {@link MessageStore#epoch()}.
     *
     * @return the current epoch, not empty
     */
    default String epoch() {
        return "durable";
    }

    /**
     * @return {@code true} if the offsets of a subject are {@code 0, 1, 2, ...} without gaps, so that
     *         the distance between two offsets counts messages (messages dropped by retention are then
     *         counted as {@code evicted})
     */
    default boolean denseOffsets() {
        return false;
    }

    /**
     * Whether {@link #fetch} may be called again before an earlier fetch of the same group answered:
     * each fetch then hands out messages after those of the fetches issued before it, whatever
     * {@code fromOffset} says (the store keeps the group's cursor, e.g. Redis {@code XREADGROUP ... >}),
     * so that a consumer can keep two fetches outstanding and the store is never idle between them. The
     * consumer applies the answers in the order the fetches were issued. The default, {@code false},
     * suits a store that reads from the caller's cursor: one fetch at a time.
     *
     * @return {@code true} if fetches may be pipelined
     */
    default boolean pipelinedFetches() {
        return false;
    }

    /**
     * Whether the store can be reached, as far as it knows without asking it (a client's connection
     * state): a {@link PullConsumer} fails a new pull at once with a {@link MessageStoreException} while
     * this is {@code false}, instead of letting it wait for data that cannot come. A pull already waiting is not
     * failed by the outage: when a fetch fails and this then says {@code false}, the waiting pulls wait on, until
     * their timeout or until a fetch brings data again; so a store that can say {@code false} tells its append
     * listeners {@link MessageStore.AppendListener#appendsMissed} once it is reachable again (until then, only a new
     * pull makes its group fetch). Called on scheduler threads: must not block. The default says {@code true} (the
     * calls' own failures tell: a failed fetch then fails the pulls waiting for it).
     *
     * @return {@code false} while the store is known to be unreachable (e.g. disconnected, reconnecting)
     */
    default boolean connected() {
        return true;
    }

    /**
     * Whether a call failed because the store could not be reached (its connection lost or down), rather than
     * because it refused the call: a {@link PullConsumer} then leaves the long polls waiting for a failed fetch
     * waiting, as for any outage ({@link #connected()}), where it fails them for any other failure. A client may
     * report a call that the lost connection broke (a read under way: "connection reset") before it reports the
     * connection down, which only the store can tell. Called on scheduler threads: must not block. The default is
     * {@code !connected()}: a store whose {@code connected()} always says {@code true} has its waiting pulls fail
     * with each failed fetch, and a store that overrides this should also say {@code false} from
     * {@code connected()} while it cannot be reached, so that new pulls fail fast then.
     *
     * @param error a call's failure
     * @return {@code true} if it means the store could not be reached
     */
    default boolean isConnectionFailure(Throwable error) {
        return !connected();
    }

    /**
     * Hands out the group's next messages to this process, creating the subject and the group if
     * needed (a new group starts at the oldest message still held).
     *
     * @param subject     the subject
     * @param group       the consumer group
     * @param fromOffset  the caller's cursor: the offset after the last message it was handed, or
     *                    {@code -1} (any negative value) if it was handed none yet; a store that keeps the
     *                    group's cursor itself (shared by processes) ignores it
     * @param maxMessages at most this many (≥ 1)
     * @return the messages in offset order, possibly none
     */
    Mono<List<Message>> fetch(String subject, String group, long fromOffset, int maxMessages);

    /**
     * Settles messages of a group.
     *
     * @param subject   the subject
     * @param group     the consumer group
     * @param offsets   the messages acknowledged (possibly none)
     * @param committed the caller's committed offset (every message before it it has settled), or
     *                  {@code -1} (any negative value: none); a store that tracks each message ignores it
     * @return completes once the store recorded it
     */
    Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed);

    /**
     * Takes over messages of the group that were handed out (to any process) and not acknowledged for
     * at least {@code minIdle}: they are handed to this process now. A store whose groups live in one
     * process only (where the consumer tracks every delivery) returns none.
     *
     * @param subject     the subject
     * @param group       the consumer group
     * @param cursor      where to continue scanning: {@code 0} first, then {@link Reclaimed#cursor()}
     * @param minIdle     how long a message must have gone unacknowledged
     * @param maxMessages at most this many (≥ 1)
     * @return the messages taken over, and the cursor of the next call
     */
    Mono<Reclaimed> reclaim(String subject, String group, long cursor, Duration minIdle, int maxMessages);

    /**
     * Tells the store that this process hands out these messages again (its own redelivery after an
     * ack timeout, a release or a nack): a store that reclaims by idle time restarts their clock, so
     * that no other process takes them over meanwhile. Best effort; the default does nothing.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param offsets the messages delivered again
     * @return completes once the store recorded it
     */
    default Mono<Void> renew(String subject, String group, long[] offsets) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(group, "group");
        Names.offsets(offsets);
        return Mono.empty();
    }

    /**
     * Before this process hands out again messages whose ack timeout passed: renews them as {@link #renew}
     * does and answers which of them are still pending for the group. One that another process
     * acknowledged (an acknowledgement that reached another instance) or skipped meanwhile is not, and is
     * not delivered again. The default renews and answers all of them (a store that cannot tell).
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param offsets the messages whose ack timeout passed
     * @return the offsets among {@code offsets} still pending in the store
     */
    default Mono<long[]> renewPending(String subject, String group, long[] offsets) {
        return renew(subject, group, offsets).thenReturn(offsets);
    }

    /**
     * Moves a message to the group's dead letters ({@link FailurePolicy#deadLetterSubject}) and
     * acknowledges it; when the copy fails nothing is acknowledged (the message stays pending).
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param message the message
     * @return completes once both are recorded
     */
    default Mono<Void> deadLetter(String subject, String group, Message message) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(message, "message");
        return append(FailurePolicy.deadLetterSubject(group), message.payload())
                .then(acknowledge(subject, group, new long[] {message.offset()}, -1));
    }

    /**
     * Reads a group's position.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @return where the subject ends and the group stands
     */
    Mono<Position> position(String subject, String group);

    /**
     * Registers a listener called after appends to any subject, by this process or (for a shared
     * store) another one; on any thread, possibly the store's I/O thread.
     *
     * @param listener must be fast and should not throw (the stores of this library log a listener that
     *                 throws and go on with the others); the end offset it is given may be {@code -1}
     *                 (unknown)
     * @return disposing it unregisters the listener
     */
    Disposable addAppendListener(MessageStore.AppendListener listener);

    /**
     * Adapts a synchronous store: every Mono completes at once, on the subscribing thread; the group
     * cursor is the caller's ({@code fromOffset}), reclaim finds nothing (the consumer tracks every
     * delivery in this process).
     *
     * @param store the store
     * @return the adapter
     * @throws IllegalArgumentException if {@code store} is {@code null}
     */
    static AsyncMessageStore of(MessageStore store) {
        if (store == null) {
            throw new IllegalArgumentException("store must not be null");
        }
        return new SyncStoreAdapter(store);
    }

    /**
     * What {@link #reclaim} took over.
     *
     * @param messages the messages now handed to this process, in offset order
     * @param cursor   where the next scan continues ({@code 0}: from the start)
     */
    record Reclaimed(List<Message> messages, long cursor) {
        /** No message, scan from the start next time. */
        public static final Reclaimed NONE = new Reclaimed(List.of(), 0);

        /**
         * Copies the list.
         *
         * @param messages the messages
         * @param cursor   the next cursor, ≥ 0
         */
        public Reclaimed {
            messages = List.copyOf(messages);
            if (cursor < 0) {
                throw new IllegalArgumentException("cursor must be >= 0 but was " + cursor);
            }
        }
    }

    /**
     * A group's position in a subject.
     *
     * @param endOffset       the offset after the newest message ({@code 0} for an empty subject)
     * @param committedOffset every message before it was acknowledged by the group ({@code -1}: the
     *                        group does not exist)
     * @param lag             messages not yet acknowledged by the group: pending plus never handed out
     * @param pending         messages handed out and not yet acknowledged
     */
    record Position(long endOffset, long committedOffset, long lag, long pending) {
    }
}
