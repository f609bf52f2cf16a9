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
     * cancel came from; a failure after {@code next()} is a nack too. A JVM-fatal error thrown by
     * {@code onNext} ({@code OutOfMemoryError}, {@code StackOverflowError}, {@code LinkageError}) is
     * handled the same way and is also reported through {@code Schedulers.onHandleError}, as the
     * scheduler reports a task's fatal error.
     *
     * <p>A message is acknowledged only when it is known to be handled. Not acknowledged, so redelivered
     * (to this group's next consumer, at once): the element that stops a {@code takeWhile}; an element
     * {@code timeout()} drops because its timer fired first (Reactor hands such an element to
     * {@code Hooks.onNextDropped}; also the second element of a {@code single()}); and the message whose
     * {@code onNext} is running when a {@code timeout()}, {@code take(Duration)} or {@code takeUntilOther}
     * timer cancels on another thread, because whether it was handled or dropped cannot be told apart (a
     * duplicate at worst). Any other cancel from another thread (a {@code dispose()}, a closed connection)
     * leaves the message in progress acknowledged once its {@code onNext} returns normally.
     *
     * <p><b>Operators that cancel on a timer</b> ({@code timeout()}, {@code take(Duration)},
     * {@code takeUntilOther}, {@code sample}, anything that serializes its downstream): such an operator drops
     * an element that arrives just after its timer fired, and its cancel reaches the consumer only after that,
     * so this mode can still acknowledge such an element, rarely (about one in 50,000 in a stress of consumers
     * timing out mid-delivery). Where no message may be lost, use {@link #EXPLICIT} with them (a
     * dropped element is never acknowledged there, and the cancel redelivers it).
     *
     * <p>A message counts as handled when it reaches the first operator below the consumer: an operator that
     * queues elements or hands them on asynchronously returns before they are handled ({@code flatMap},
     * {@code concatMap}, {@code publishOn}, {@code limitRate}, {@code buffer}, {@code window},
     * {@code collectList}), and what it still holds when the stream is cancelled was acknowledged all the same:
     * with such operators use {@link #EXPLICIT}.
     */
    AFTER_ON_NEXT,
    /**
     * When the application calls {@link Delivery#ack()} (or {@link Delivery#nack(Throwable)}); e.g.
     * {@code consume(..).concatMap(d -> handle(d.message()).doOnSuccess(x -> d.ack()))}. Unacknowledged messages are
     * redelivered when the consumer is cancelled or after the consumer's ack timeout.
     */
    EXPLICIT
}
