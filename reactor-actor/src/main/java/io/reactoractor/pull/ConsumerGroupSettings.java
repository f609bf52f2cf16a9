package io.reactoractor.pull;

import java.util.function.Consumer;

import io.reactoractor.internal.metrics.PullMetrics;

/**
 * What a {@link PullConsumer} gives each of its {@link ConsumerGroupActor}s: the store, the limits and
 * timeouts from its {@link PullConsumer.Builder}, its metrics and the callback for an actor that
 * retired. Built once per consumer, so an actor never reaches back into the consumer.
 */
final class ConsumerGroupSettings {

    /** The synchronous store, or {@code null} when the store is asynchronous. */
    final MessageStore syncStore;
    /** The asynchronous store given, or an adapter of {@link #syncStore}. */
    final AsyncMessageStore asyncStore;
    final long ackTimeoutNanos;
    final int maxWaitingPulls;
    final long maxBytesPerPull;
    /** How long an idle actor lives; {@code 0}: forever. */
    final long idleTimeoutNanos;
    final PullMetrics metrics;
    /** Removes a retired actor from its consumer's registries (see {@link PullConsumer}). */
    final Consumer<ConsumerGroupActor> retired;
    /** Whether the consumer {@linkplain PullConsumer#quiesce() quiesces}: long polls are answered at once. */
    private final java.util.function.BooleanSupplier quiescing;
    /**
     * Tells the consumer an actor terminated (its scheduler disposed, or the consumer itself): the
     * consumer ends the streams attached to it, also those with no pull in flight (see {@link PullConsumer}),
     * each with the error the function makes for its subscriber's Context (a rejection is one per subscriber).
     */
    final java.util.function.BiConsumer<ConsumerGroupActor,
            java.util.function.Function<reactor.util.context.ContextView, Throwable>> terminated;
    /** Whether the consumer was {@linkplain PullConsumer#dispose() disposed} (a volatile read). */
    private final java.util.function.BooleanSupplier consumerDisposed;

    ConsumerGroupSettings(MessageStore syncStore, AsyncMessageStore asyncStore, long ackTimeoutNanos,
            int maxWaitingPulls, long maxBytesPerPull, long idleTimeoutNanos, PullMetrics metrics,
            Consumer<ConsumerGroupActor> retired, java.util.function.BooleanSupplier quiescing,
            java.util.function.BiConsumer<ConsumerGroupActor,
                    java.util.function.Function<reactor.util.context.ContextView, Throwable>> terminated,
            java.util.function.BooleanSupplier consumerDisposed) {
        this.terminated = terminated;
        this.consumerDisposed = consumerDisposed;
        this.syncStore = syncStore;
        this.asyncStore = asyncStore;
        this.ackTimeoutNanos = ackTimeoutNanos;
        this.maxWaitingPulls = maxWaitingPulls;
        this.maxBytesPerPull = maxBytesPerPull;
        this.idleTimeoutNanos = idleTimeoutNanos;
        this.metrics = metrics;
        this.retired = retired;
        this.quiescing = quiescing;
    }

    /** @return whether long polls are answered at once ({@link PullConsumer#quiesce()}; a volatile read) */
    boolean quiescing() {
        return quiescing.getAsBoolean();
    }

    /** @return whether the consumer was disposed (a volatile read) */
    boolean consumerDisposed() {
        return consumerDisposed.getAsBoolean();
    }

    /** @return the store's current epoch (asked each time: a store may start a new one) */
    String epoch() {
        return syncStore != null ? syncStore.epoch() : asyncStore.epoch();
    }
}
