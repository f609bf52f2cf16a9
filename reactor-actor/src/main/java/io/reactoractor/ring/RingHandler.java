package io.reactoractor.ring;

/**
 * What a {@link RingConsumer} does with each event: called on the consumer's actor turn, one event
 * at a time, in sequence order, never concurrently with itself.
 *
 * <p>{@code endOfBatch} is {@code true} on the last event of a batch: after it the consumer publishes
 * its sequence (so dependents and the producer see the progress) and re-reads its barrier, possibly
 * ending its turn. It is the place to flush anything buffered per batch, as with the Disruptor's
 * {@code BatchEventProcessor}. A batch ends at the barrier read at its start, or earlier when the
 * quota bound of the turn or the downstream demand of a published consumer cuts it.
 *
 * <p>A thrown exception is handled by the ring's {@link RingErrorPolicy}. The batch ends at the failed
 * event without an {@code endOfBatch} call: the consumer publishes its sequence up to the event before
 * it, as the Disruptor's processor does when a handler throws, also when the policy retries the event
 * after a back-off (the events before it are handled, and dependents and the producer go on with them
 * meanwhile). A handler that buffers per batch and must not let dependents see unflushed events
 * flushes before it throws.
 *
 * @param <T> the event type
 * @param <R> the result type; a {@code null} result emits nothing
 */
@FunctionalInterface
public interface RingHandler<T, R> {

    /**
     * Handles one event.
     *
     * @param event      the event (never {@code null})
     * @param sequence   the event's sequence number (0 for the first event of the ring)
     * @param endOfBatch whether this is the last event of the current batch
     * @return the result to emit to the consumer's subscriber (if it is published), or {@code null}
     *         to emit nothing for this event
     * @throws Exception to report a failure to the error policy
     */
    R onEvent(T event, long sequence, boolean endOfBatch) throws Exception;
}
