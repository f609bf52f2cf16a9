package io.reactoractor.pull;

import java.time.Duration;
import java.util.Objects;

/**
 * What a consumer group does with a message whose processing failed ({@link Delivery#nack} or
 * {@link PullConsumer#nack}), as in the pull-consumer templates of RocketMQ/MetaQ.
 *
 * <ul>
 *   <li>{@link #skip()}: count it and move on (the message counts as acknowledged);</li>
 *   <li>{@link #retryForever(Duration)}: redeliver it after the back-off, as often as it fails;</li>
 *   <li>{@link #retryThenDeadLetter(int, Duration)}: redeliver up to {@code maxAttempts} deliveries in
 *       all, then append it to the group's dead-letter subject {@code dlq.<group>} (itself an
 *       ordinary subject that can be pulled) and acknowledge it.</li>
 * </ul>
 * A redelivery goes to whichever consumer of the group pulls next, ahead of new messages.
 */
public final class FailurePolicy {

    /** The kinds of policy. */
    public enum Kind {
        /** Failed messages are dropped (counted as skipped). */
        SKIP,
        /** Failed messages are redelivered after the backoff, without limit. */
        RETRY_FOREVER,
        /** Failed messages are redelivered up to a number of deliveries, then moved to {@code dlq.<group>}. */
        RETRY_THEN_DEAD_LETTER
    }

    private static final FailurePolicy SKIP = new FailurePolicy(Kind.SKIP, 0, Duration.ZERO);

    private final Kind kind;
    private final int maxAttempts;
    private final Duration backoff;

    private FailurePolicy(Kind kind, int maxAttempts, Duration backoff) {
        this.kind = kind;
        this.maxAttempts = maxAttempts;
        this.backoff = backoff;
    }

    /** @return drop failed messages (counted as skipped) */
    public static FailurePolicy skip() {
        return SKIP;
    }

    /**
     * @param backoff delay before each redelivery (≥ 0)
     * @return redeliver failed messages forever
     */
    public static FailurePolicy retryForever(Duration backoff) {
        return new FailurePolicy(Kind.RETRY_FOREVER, Integer.MAX_VALUE, checkBackoff(backoff));
    }

    /**
     * Redelivers a failed message until it was delivered {@code maxAttempts} times in all, then
     * dead-letters it: {@code retryThenDeadLetter(3, ..)} is the first delivery and two redeliveries. (The
     * count includes the first delivery, as the attempts of a delivery do, {@link Delivery#attempt()};
     * the actor's {@code ErrorPolicy.retry(n, ..)} and the ring's {@code RingErrorPolicy.retry(n, ..)} count
     * retries after the first failure instead.)
     *
     * @param maxAttempts deliveries in all before the message goes to the dead-letter subject (≥ 1)
     * @param backoff     delay before each redelivery (≥ 0)
     * @return retry, then dead-letter
     */
    public static FailurePolicy retryThenDeadLetter(int maxAttempts, Duration backoff) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1 but was " + maxAttempts);
        }
        return new FailurePolicy(Kind.RETRY_THEN_DEAD_LETTER, maxAttempts, checkBackoff(backoff));
    }

    private static Duration checkBackoff(Duration backoff) {
        if (backoff == null || backoff.isNegative()) {
            throw new IllegalArgumentException("backoff must be >= 0 but was " + backoff);
        }
        return backoff;
    }

    /**
     * @param group a consumer group
     * @return the dead-letter subject of {@code group}: {@code dlq.<group>}
     */
    public static String deadLetterSubject(String group) {
        return "dlq." + Names.group(group);
    }

    /** @return the kind */
    public Kind kind() {
        return kind;
    }

    /** @return deliveries in all before dead-lettering ({@code Integer.MAX_VALUE} when retrying forever, 0 for skip) */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** @return the delay before a redelivery */
    public Duration backoff() {
        return backoff;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FailurePolicy p && p.kind == kind && p.maxAttempts == maxAttempts
                && p.backoff.equals(backoff);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, maxAttempts, backoff);
    }

    @Override
    public String toString() {
        switch (kind) {
            case SKIP:
                return "FailurePolicy.skip()";
            case RETRY_FOREVER:
                return "FailurePolicy.retryForever(" + backoff + ")";
            default:
                return "FailurePolicy.retryThenDeadLetter(" + maxAttempts + ", " + backoff + ")";
        }
    }
}
