package io.reactoractor.pull;

/** When a message delivered by {@link PullConsumer#consume} counts as acknowledged (its offset may be committed). */
public enum AckMode {
    /**
     * When the subscriber's {@code onNext} returned normally: the message was handled synchronously.
     * This is the default. For asynchronous handling use {@link #EXPLICIT}.
     *
     * <p>An {@code onNext} that throws nacks the message (the consumer's {@link FailurePolicy} decides)
     * and the consumer errors. But Reactor's own subscribers and operators catch what a handler throws:
     * {@code subscribe(d -> ship(d))}, {@code doOnNext}, {@code map} cancel upstream and signal
     * {@code onError} downstream, and their {@code onNext} returns normally, so the message counts as
     * handled and is not redelivered. This mode cannot tell that cancel from a {@code take(n)}'s after its
     * last element, which did handle it. Where a handler can fail and its message must come again, use
     * {@link #EXPLICIT} and {@link Delivery#nack(Throwable)} (at least once), or a subscriber whose
     * {@code onNext} lets the exception out.
     */
    AFTER_ON_NEXT,
    /**
     * When the application calls {@link Delivery#ack()} (or {@link Delivery#nack(Throwable)}); e.g.
     * {@code consume(..).concatMap(d -> handle(d.message()).doOnSuccess(x -> d.ack()))}. Unacknowledged messages are
     * redelivered when the consumer is cancelled or after the consumer's ack timeout.
     */
    EXPLICIT
}
