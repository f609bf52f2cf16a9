package io.reactoractor.pull;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A message delivered to a reactive consumer, with the means to settle it. Settling is eager (the
 * call hands the ack or nack to the group's actor at once, no subscription needed) and happens at
 * most once: later calls are ignored.
 *
 * <p>It returns before the actor handled it: an ack or nack still queued when {@link PullConsumer#dispose()}
 * runs is dropped with the actor, and its message is delivered again to the group's next consumer (at least
 * once; so is the batch {@link AckMode#AFTER_ON_NEXT} sends as a stream ends, e.g. after
 * {@code take(n)}). To keep them, let the actors finish first: close the consumer's scheduler (or the
 * pair's scheduling group) with {@code disposeGracefully()}, which runs queued acks and, with an asynchronous
 * store (Redis), waits until the store recorded them, then dispose the consumer; or settle with
 * {@link PullConsumer#ack} and wait for its {@code Mono}.
 */
public final class Delivery {

    private final Message message;
    private final int attempt;
    private final ConsumerGroupActor actor;
    private final FailurePolicy policy;
    private final AtomicBoolean settled = new AtomicBoolean();

    Delivery(Message message, int attempt, ConsumerGroupActor actor, FailurePolicy policy) {
        this.message = message;
        this.attempt = attempt;
        this.actor = actor;
        this.policy = policy;
    }

    /** @return the message */
    public Message message() {
        return message;
    }

    /** @return 1 for the first delivery, 2 for the first redelivery, ... */
    public int attempt() {
        return attempt;
    }

    /** @return whether {@link #ack()} or {@link #nack} was called */
    public boolean isSettled() {
        return settled.get();
    }

    /** @return {@code true} if this call settled it (used to batch acks after {@code onNext}) */
    boolean markSettled() {
        return settled.compareAndSet(false, true);
    }

    /** Acknowledges the message: once every earlier message is acknowledged too, its offset is committed. */
    public void ack() {
        if (settled.compareAndSet(false, true)) {
            actor.acknowledge(message.offset());
        }
    }

    /**
     * Reports that processing failed: the consumer's {@link FailurePolicy} decides (skip, redeliver,
     * or dead-letter after the last attempt). A nack that comes after this delivery's ack timeout, once
     * the message was delivered again and that newer delivery is still in flight, is ignored: the newer
     * holder's ack, nack or ack timeout decides (a stale holder's failure neither takes the message from it
     * nor dead-letters it under it).
     *
     * @param cause why (for the application's logs; not stored)
     */
    public void nack(Throwable cause) {
        if (settled.compareAndSet(false, true)) {
            actor.reject(message.offset(), policy, attempt);
        }
    }

    @Override
    public String toString() {
        return "Delivery[" + message + ", attempt " + attempt + (settled.get() ? ", settled" : "") + "]";
    }
}
