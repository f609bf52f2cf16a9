package io.reactoractor.pull;

import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;

import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * Something for a {@link ConsumerGroupActor} to do, posted to its mailbox by any thread and handled in
 * its turn: a {@link Pull}, an {@link Ack}, a {@link Nack} or a {@link Release} (the actor's own timer
 * tick and store replies are commands too). {@link #fail} answers a command that cannot be done.
 */
abstract class ConsumerGroupCommand {

    /** Answers the command with an error (the actor retired or terminated, or handling it failed). */
    final void fail(Throwable error) {
        fail(context -> error);
    }

    /**
     * Answers the command with the error {@code errorFor} makes for the {@linkplain #context() Context} of each
     * subscriber waiting for it; a command no one waits for makes none. A rejection (the scheduler, or the pair's
     * scheduling group, terminated) is made this way ({@code SchedulerEngine.rejectSignal}), so each subscriber's
     * own rejection hook sees its own, as a Reactor operator's rejection goes through its subscriber's. The one
     * method a command overrides to be answered with an error.
     */
    void fail(Function<ContextView, Throwable> errorFor) {
    }

    /** The {@code Context} of the subscriber that waits for this command's answer ({@code Context.empty()}: none). */
    ContextView context() {
        return Context.empty();
    }

    /** Receives the answer of a pull (on the actor's thread) or its failure. */
    interface PullCallback {
        void answer(PullResult result, int[] attempts);

        void fail(Throwable error);

        /** @return the Context of the subscriber the answer is for (see {@link ConsumerGroupCommand#context()}) */
        ContextView context();
    }

    /** A pull: up to {@code max} messages, waiting at most {@code timeoutNanos}. */
    static final class Pull extends ConsumerGroupCommand {
        final int max;
        final long timeoutNanos;
        final long createdNanos;
        final long deadline;
        final long consumerId;
        final boolean ackOnDelivery;
        final PullCallback callback;
        volatile boolean cancelled;
        /** Messages retention dropped before this group read them, passed over for this pull (actor). */
        long skipped;
        /**
         * Set by the actor (actor-confined) when a long poll's deadline had passed before the actor first saw
         * it (a busy or starved actor, or a timeout shorter than the trip to it): it is then served as a
         * pull-once, so it still gets what is there, and is answered {@code TIMED_OUT} (not {@code EMPTY}) if
         * nothing is. A timeout too short to wait is never worse than a zero one.
         */
        boolean expiredOnArrival;
        /**
         * A pull of a {@code consume()} stream that the group already answered at least once: never refused for
         * {@code maxWaitingPulls} (it still takes a slot). A stream is admitted or refused at its first pull,
         * before it delivered anything; refusing a later one cut a stream that was delivering (over HTTP: a
         * response already started), although a stream holds at most one pull at a time.
         */
        final boolean admitted;

        Pull(int max, long timeoutNanos, long consumerId, boolean ackOnDelivery, PullCallback callback) {
            this(max, timeoutNanos, consumerId, ackOnDelivery, false, callback);
        }

        Pull(int max, long timeoutNanos, long consumerId, boolean ackOnDelivery, boolean admitted,
                PullCallback callback) {
            this.max = max;
            this.timeoutNanos = timeoutNanos;
            this.createdNanos = System.nanoTime();
            this.deadline = createdNanos + timeoutNanos;
            this.consumerId = consumerId;
            this.ackOnDelivery = ackOnDelivery;
            this.admitted = admitted;
            this.callback = callback;
        }

        /** @return whether this pull waits for messages up to its deadline (a long poll that has time left to wait) */
        boolean waits() {
            return timeoutNanos > 0 && !expiredOnArrival;
        }

        void answer(PullResult r, int[] attempts) {
            callback.answer(r, attempts);
        }

        @Override
        void fail(Function<ContextView, Throwable> errorFor) {
            callback.fail(errorFor.apply(callback.context()));
        }

        @Override
        ContextView context() {
            return callback.context();
        }
    }

    /** A command answered with the group's committed offset once handled. */
    abstract static class Settle extends ConsumerGroupCommand {
        private final LongConsumer done;
        private final Consumer<Throwable> failed;
        /** The waiting subscriber's Context, or {@code null}: no one waits for the outcome. */
        private final ContextView context;

        Settle(LongConsumer done, Consumer<Throwable> failed, ContextView context) {
            this.done = done;
            this.failed = failed;
            this.context = context;
        }

        void done(long committed) {
            done.accept(committed);
        }

        @Override
        void fail(Function<ContextView, Throwable> errorFor) {
            if (context != null) { // else no one waits: the outcome is dropped
                failed.accept(errorFor.apply(context));
            }
        }

        @Override
        ContextView context() {
            return context != null ? context : Context.empty();
        }
    }

    /** Acknowledges offsets. */
    static final class Ack extends Settle {
        final long[] offsets;

        /** An acknowledgement no one waits for (the outcome is dropped). */
        Ack(long[] offsets, LongConsumer done, Consumer<Throwable> failed) {
            super(done, failed, null);
            this.offsets = offsets;
        }

        /** An acknowledgement answered to {@code sink}. */
        Ack(long[] offsets, MonoSink<Long> sink) {
            super(sink::success, sink::error, sink.contextView());
            this.offsets = offsets;
        }
    }

    /** Reports a failed message: the failure policy decides. */
    static final class Nack extends Settle {
        final long offset;
        final FailurePolicy policy;
        /**
         * The attempt number of the delivery that failed ({@link Delivery#nack}, or a nack by offset that names
         * it), or {@code 0} when unknown (a nack by offset alone): a nack of an older delivery leaves a newer one
         * in flight alone.
         */
        final int attempt;

        /** A nack no one waits for (the outcome is dropped). */
        Nack(long offset, FailurePolicy policy, int attempt, LongConsumer done,
                Consumer<Throwable> failed) {
            this(offset, policy, attempt, done, failed, null);
        }

        /** A nack of the delivery {@code attempt} ({@code 0}: the current one) answered to {@code sink}. */
        Nack(long offset, FailurePolicy policy, int attempt, MonoSink<Long> sink) {
            this(offset, policy, attempt, sink::success, sink::error, sink.contextView());
        }

        private Nack(long offset, FailurePolicy policy, int attempt, LongConsumer done,
                Consumer<Throwable> failed, ContextView context) {
            super(done, failed, context);
            this.offset = offset;
            this.policy = policy;
            this.attempt = attempt;
        }
    }

    /** A consumer went away: its unacknowledged messages are redelivered. */
    static final class Release extends ConsumerGroupCommand {
        final long consumerId;
        /** The offsets to release, or {@code null}: every message delivered to the consumer. */
        final long[] offsets;
        /**
         * With {@link #offsets}: the attempt number each of those messages was delivered with, which names
         * the delivery given back (a later delivery of the same message is left alone); else {@code null}.
         */
        final int[] attempts;

        /** Releases every message delivered to the consumer and not acknowledged (it cancelled). */
        Release(long consumerId) {
            this(consumerId, null, null);
        }

        /** Releases these deliveries of the consumer's (an answer it did not deliver downstream). */
        Release(long consumerId, long[] offsets, int[] attempts) {
            this.consumerId = consumerId;
            this.offsets = offsets;
            this.attempts = attempts;
        }
    }
}
