package io.reactoractor.pull;

import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Something for a {@link ConsumerGroupActor} to do, posted to its mailbox by any thread and handled in
 * its turn: a {@link Pull}, an {@link Ack}, a {@link Nack} or a {@link Release} (the actor's own timer
 * tick and store replies are commands too). {@link #fail} answers a command that cannot be done.
 */
abstract class ConsumerGroupCommand {

    /** Answers the command with an error (the actor retired or terminated, or handling it failed). */
    void fail(Throwable error) {
    }

    /** Receives the answer of a pull (on the actor's thread) or its failure. */
    interface PullCallback {
        void answer(PullResult result, int[] attempts);

        void fail(Throwable error);
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

        Pull(int max, long timeoutNanos, long consumerId, boolean ackOnDelivery, PullCallback callback) {
            this.max = max;
            this.timeoutNanos = timeoutNanos;
            this.createdNanos = System.nanoTime();
            this.deadline = createdNanos + timeoutNanos;
            this.consumerId = consumerId;
            this.ackOnDelivery = ackOnDelivery;
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
        void fail(Throwable error) {
            callback.fail(error);
        }
    }

    /** A command answered with the group's committed offset once handled. */
    abstract static class Settle extends ConsumerGroupCommand {
        private final LongConsumer done;
        private final Consumer<Throwable> failed;

        Settle(LongConsumer done, Consumer<Throwable> failed) {
            this.done = done;
            this.failed = failed;
        }

        void done(long committed) {
            done.accept(committed);
        }

        @Override
        void fail(Throwable error) {
            failed.accept(error);
        }
    }

    /** Acknowledges offsets. */
    static final class Ack extends Settle {
        final long[] offsets;

        Ack(long[] offsets, LongConsumer done, Consumer<Throwable> failed) {
            super(done, failed);
            this.offsets = offsets;
        }
    }

    /** Reports a failed message: the failure policy decides. */
    static final class Nack extends Settle {
        final long offset;
        final FailurePolicy policy;
        /**
         * The attempt number of the delivery that failed ({@link Delivery#nack}), or {@code 0} when unknown (a
         * nack by offset): a nack of an older delivery leaves a newer one in flight alone.
         */
        final int attempt;

        Nack(long offset, FailurePolicy policy, int attempt, LongConsumer done,
                Consumer<Throwable> failed) {
            super(done, failed);
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
