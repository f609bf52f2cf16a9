package io.reactoractor.pull;

import java.time.Duration;

/**
 * How a reactive consumer ({@link PullConsumer#consume(String, String, ConsumerOptions)}) pulls and
 * acknowledges. Immutable; built with {@link #builder()}, every parameter validated when set.
 *
 * @param ackMode       when a delivered message counts as acknowledged (default {@link AckMode#AFTER_ON_NEXT})
 * @param failurePolicy what a {@link Delivery#nack} does (default: the consumer's, see
 *                      {@link PullConsumer.Builder#failurePolicy})
 * @param batchSize     most messages per pull, also bounded by the subscriber's outstanding demand (default 64)
 * @param pollTimeout   how long one pull waits for messages before the consumer pulls again (default 30 s; a
 *                      very short one gets the messages there are, but polls busily while there are none)
 */
public record ConsumerOptions(AckMode ackMode, FailurePolicy failurePolicy, int batchSize, Duration pollTimeout) {

    /** The defaults; {@code failurePolicy} {@code null} means "the consumer's default". */
    public static final ConsumerOptions DEFAULTS = new ConsumerOptions(AckMode.AFTER_ON_NEXT, null, 64,
            Duration.ofSeconds(30));

    /**
     * Validates.
     *
     * @param ackMode       when a delivered message counts as acknowledged, not {@code null}
     * @param failurePolicy what a nack does; {@code null} for the consumer's
     * @param batchSize     most messages per pull, at least 1
     * @param pollTimeout   how long one pull waits, positive
     * @throws IllegalArgumentException if a value is invalid (named in the message)
     */
    public ConsumerOptions {
        checkAckMode(ackMode);
        checkBatchSize(batchSize);
        checkPollTimeout(pollTimeout);
    }

    private static AckMode checkAckMode(AckMode ackMode) {
        if (ackMode == null) {
            throw new IllegalArgumentException("ackMode must not be null");
        }
        return ackMode;
    }

    private static int checkBatchSize(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1 but was " + batchSize);
        }
        return batchSize;
    }

    private static Duration checkPollTimeout(Duration pollTimeout) {
        if (pollTimeout == null || pollTimeout.isNegative() || pollTimeout.isZero()) {
            throw new IllegalArgumentException("pollTimeout must be > 0 but was " + pollTimeout);
        }
        return pollTimeout;
    }

    /** @return a builder starting from {@link #DEFAULTS} */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link ConsumerOptions}. */
    public static final class Builder {
        private AckMode ackMode = DEFAULTS.ackMode();
        private FailurePolicy failurePolicy;
        private int batchSize = DEFAULTS.batchSize();
        private Duration pollTimeout = DEFAULTS.pollTimeout();

        private Builder() {
        }

        /**
         * @param ackMode see {@link AckMode}
         * @return this
         */
        public Builder ackMode(AckMode ackMode) {
            this.ackMode = checkAckMode(ackMode);
            return this;
        }

        /**
         * @param failurePolicy applied to nacked messages
         * @return this
         */
        public Builder failurePolicy(FailurePolicy failurePolicy) {
            if (failurePolicy == null) {
                throw new IllegalArgumentException("failurePolicy must not be null");
            }
            this.failurePolicy = failurePolicy;
            return this;
        }

        /**
         * @param batchSize most messages per pull (≥ 1)
         * @return this
         */
        public Builder batchSize(int batchSize) {
            this.batchSize = checkBatchSize(batchSize);
            return this;
        }

        /**
         * @param pollTimeout how long one pull waits (&gt; 0)
         * @return this
         */
        public Builder pollTimeout(Duration pollTimeout) {
            this.pollTimeout = checkPollTimeout(pollTimeout);
            return this;
        }

        /** @return the options */
        public ConsumerOptions build() {
            return new ConsumerOptions(ackMode, failurePolicy, batchSize, pollTimeout);
        }
    }
}
