package io.reactoractor.ring;

import java.time.Duration;
import java.util.Objects;

/**
 * What a ring does when a {@link RingHandler} throws. Never an endless retry, never a blocked thread.
 *
 * <ul>
 *   <li>{@link #STOP} / {@link #stop()} (the default): the ring stops.</li>
 *   <li>{@link #SKIP} / {@link #skip()}: the failing consumer skips the event and goes on.</li>
 *   <li>{@link #retry(int, Duration)}: the failing consumer calls its handler again on the same event
 *       after a back-off ({@code backoff × 2^(attempt-1)}, each delay capped at 30 s), up to
 *       {@code maxRetries} times, then stops the ring with the last failure;
 *       {@link #retryThenSkip(int, Duration)} skips the event instead.</li>
 * </ul>
 *
 * <p>During a back-off the consumer is <em>suspended</em>: it is neither queued nor running and holds
 * no thread, and the scheduler's timer resumes it when the back-off is over. Its sequence stays just
 * below the failing event, so its dependents do not see that event and, once the ring is full, the
 * producer waits for it (the retry gates the ring like a slow consumer). A downstream cancel, a
 * {@code request(n <= 0)} or a stop of the ring ends the back-off at once; closing the ring does not
 * (the event was accepted and is still retried).
 *
 * <p>{@code STOP} and {@code SKIP} are constants (as when this type was an enum) and the factory
 * methods return them; retry policies are values ({@link #equals} compares their settings).
 */
public final class RingErrorPolicy {

    /** The longest single back-off, whatever the attempt. */
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private static final int K_STOP = 0;
    private static final int K_SKIP = 1;
    private static final int K_RETRY = 2;

    /**
     * Stop the ring: the upstream is cancelled, waiting publishes fail, and every consumer (the
     * failing one included) signals {@code onError} with the handler's exception at its next turn,
     * without handling further events. {@link RingBuffer#whenTerminated()} fails with it too.
     */
    public static final RingErrorPolicy STOP = new RingErrorPolicy(K_STOP, 0, Duration.ZERO, false);

    /**
     * Skip the event: it counts as handled by the failing consumer (dependents still see it), no
     * result is emitted for it, and {@link RingConsumer#skippedEvents()} is incremented.
     */
    public static final RingErrorPolicy SKIP = new RingErrorPolicy(K_SKIP, 0, Duration.ZERO, false);

    private final int kind;
    private final int maxRetries;
    private final Duration backoff;
    private final boolean skipWhenExhausted;

    private RingErrorPolicy(int kind, int maxRetries, Duration backoff, boolean skipWhenExhausted) {
        this.kind = kind;
        this.maxRetries = maxRetries;
        this.backoff = backoff;
        this.skipWhenExhausted = skipWhenExhausted;
    }

    /** @return {@link #STOP} */
    public static RingErrorPolicy stop() {
        return STOP;
    }

    /** @return {@link #SKIP} */
    public static RingErrorPolicy skip() {
        return SKIP;
    }

    /**
     * Retries the failing event with an exponential back-off, then stops the ring with the last
     * failure (as {@link #STOP}).
     *
     * @param maxRetries how many times the handler is called again after its first failure, at least 1
     * @param backoff    the first back-off, positive; each further one doubles (capped at 30 s)
     * @return the policy
     * @throws IllegalArgumentException if {@code maxRetries < 1}, or {@code backoff} is {@code null},
     *                                  zero or negative
     */
    public static RingErrorPolicy retry(int maxRetries, Duration backoff) {
        return retrying(maxRetries, backoff, false);
    }

    /**
     * Retries the failing event with an exponential back-off, then skips it (as {@link #SKIP}: counted
     * in {@link RingConsumer#skippedEvents()}, dependents still see it).
     *
     * @param maxRetries how many times the handler is called again after its first failure, at least 1
     * @param backoff    the first back-off, positive; each further one doubles (capped at 30 s)
     * @return the policy
     * @throws IllegalArgumentException if {@code maxRetries < 1}, or {@code backoff} is {@code null},
     *                                  zero or negative
     */
    public static RingErrorPolicy retryThenSkip(int maxRetries, Duration backoff) {
        return retrying(maxRetries, backoff, true);
    }

    private static RingErrorPolicy retrying(int maxRetries, Duration backoff, boolean skip) {
        if (maxRetries < 1) {
            throw new IllegalArgumentException("maxRetries must be at least 1 but was " + maxRetries);
        }
        if (backoff == null || backoff.isZero() || backoff.isNegative()) {
            throw new IllegalArgumentException("backoff must be a positive duration but was " + backoff);
        }
        return new RingErrorPolicy(K_RETRY, maxRetries, backoff, skip);
    }

    /** @return whether a failing event is retried ({@link #retry} or {@link #retryThenSkip}) */
    public boolean retries() {
        return kind == K_RETRY;
    }

    /** @return the retries after the first failure (0 for {@code STOP} and {@code SKIP}) */
    public int maxRetries() {
        return maxRetries;
    }

    /** @return the first back-off ({@link Duration#ZERO} for {@code STOP} and {@code SKIP}) */
    public Duration backoff() {
        return backoff;
    }

    /**
     * @return whether the failing event is skipped in the end: {@code true} for {@code SKIP} and
     *         {@link #retryThenSkip}, {@code false} for {@code STOP} and {@link #retry}
     */
    public boolean skipsFailedEvent() {
        return kind == K_SKIP || skipWhenExhausted;
    }

    /**
     * @param attempt the retry about to be made, from 1
     * @return the back-off before it in nanoseconds: the first back-off doubled {@code attempt - 1}
     *         times, at most {@link #MAX_BACKOFF}
     */
    long backoffNanos(int attempt) {
        long cap = MAX_BACKOFF.toNanos();
        long first = backoff.compareTo(MAX_BACKOFF) >= 0 ? cap : backoff.toNanos();
        int doublings = Math.min(attempt - 1, 62);
        // first <= cap < 2^35, so a shift that would pass the cap is recognised before it overflows
        return doublings >= Long.numberOfLeadingZeros(first) - 1 || (first << doublings) > cap
                ? cap
                : first << doublings;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RingErrorPolicy p && p.kind == kind && p.maxRetries == maxRetries
                && p.skipWhenExhausted == skipWhenExhausted && p.backoff.equals(backoff);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, maxRetries, skipWhenExhausted, backoff);
    }

    @Override
    public String toString() {
        switch (kind) {
            case K_STOP:
                return "RingErrorPolicy.STOP";
            case K_SKIP:
                return "RingErrorPolicy.SKIP";
            default:
                return "RingErrorPolicy." + (skipWhenExhausted ? "retryThenSkip(" : "retry(") + maxRetries + ", "
                        + backoff + ")";
        }
    }
}
