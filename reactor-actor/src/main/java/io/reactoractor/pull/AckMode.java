package io.reactoractor.pull;

/** When a message delivered by {@link PullConsumer#consume} counts as acknowledged (its offset may be committed). */
public enum AckMode {
    /**
     * When the subscriber's {@code onNext} returned normally: the message was handled synchronously.
     * This is the default. For asynchronous handling use {@link #EXPLICIT}.
     *
     * <p>A handler that fails is a nack (the consumer's {@link FailurePolicy} decides), then the consumer
     * ends: an {@code onNext} that throws, and also Reactor's own subscribers and operators, which catch
     * what a handler throws, cancel and signal {@code onError} downstream, so their {@code onNext} returns
     * normally: {@code subscribe(d -> ship(d))}, {@code doOnNext}, {@code map}, {@code handle},
     * {@code BaseSubscriber}. The consumer tells their cancel from that of a {@code take(n)}, {@code next()}
     * or {@code blockFirst()} after its last element (which did handle it: acknowledged) by where the
     * cancel came from. A handler that hands the message on asynchronously ({@code flatMap},
     * {@code concatMap}, {@code publishOn}) returns before handling it: use {@link #EXPLICIT}.
     */
    AFTER_ON_NEXT,
    /**
     * When the application calls {@link Delivery#ack()} (or {@link Delivery#nack(Throwable)}); e.g.
     * {@code consume(..).concatMap(d -> handle(d.message()).doOnSuccess(x -> d.ack()))}. Unacknowledged messages are
     * redelivered when the consumer is cancelled or after the consumer's ack timeout.
     */
    EXPLICIT
}
