package io.reactoractor.pull;

/** When a message delivered by {@link PullConsumer#consume} counts as acknowledged (its offset may be committed). */
public enum AckMode {
    /**
     * When the subscriber's {@code onNext} returned normally: the message was handled synchronously.
     * This is the default. For asynchronous handling use {@link #EXPLICIT}.
     */
    AFTER_ON_NEXT,
    /**
     * When the application calls {@link Delivery#ack()} (or {@link Delivery#nack(Throwable)}); e.g.
     * {@code consume(..).concatMap(d -> handle(d.message()).doOnSuccess(x -> d.ack()))}. Unacknowledged messages are
     * redelivered when the consumer is cancelled or after the consumer's ack timeout.
     */
    EXPLICIT
}
