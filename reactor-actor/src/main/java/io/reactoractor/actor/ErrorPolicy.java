package io.reactoractor.actor;

import java.time.Duration;
import java.util.Objects;

/**
 * What an {@link Actor} does when its {@link Behaviour} throws. Never an endless retry, never a dead
 * thread.
 *
 * <ul>
 *   <li>{@link #stop()}: the actor fails: {@code onError} downstream, upstreams cancelled (default).</li>
 *   <li>{@link #skip()}: the message is dropped from the mailbox and counted; the actor goes on.</li>
 *   <li>{@link #retry(int, Duration)}: the message stays at the head; the actor suspends itself and
 *       a timer resumes it after an exponential back-off ({@code backoff × 2^(attempt-1)}, capped at
 *       30 s); after {@code maxRetries} failed retries the actor stops with the last error, or skips
 *       the message with {@link #retryThenSkip(int, Duration)}.</li>
 * </ul>
 * Results a behaviour {@linkplain ActorContext#emit emitted} before it threw are kept: with {@code skip} and
 * {@code retry} they are delivered (a retry calls it again on the same message, so they may come twice: at
 * least once); with {@code stop} those within the downstream's demand are delivered, then the error, at
 * once (as Reactor's operators signal an error eagerly), and any beyond the demand go to the discard hook.
 * A behaviour that must not repeat them emits after the part that can fail. The error the policy sees is
 * what {@code Hooks.onOperatorError} returns; a hook that throws gives its own error, and the policy
 * still decides (never an endless retry of the message).
 *
 * <p>The policy is the actor's own, set on its builder: a downstream {@code onErrorContinue} does not change it.
 * Reactor applies {@code onErrorContinue} only in the operators whose Javadoc says they support it, and an
 * actor is not one of them, so under {@code stop} the stream still ends with the behaviour's error (which
 * {@code onErrorContinue} does not catch, as for any upstream error); to go on past a failing message, build the
 * actor with {@link #skip()} (its skipped messages go to the discard hook).
 *
 * <p>Two errors are not the behaviour's and bypass the policy: a downstream {@code onNext} that throws inside
 * {@link ActorContext#emit} (rule 2.13: the subscription counts as cancelled, see {@link Actor}), and a task
 * run by {@link ActorContext#schedule}, whose error is reported through {@code Schedulers.onHandleError} while
 * the actor goes on, as a task on one of Reactor's workers.
 */
public final class ErrorPolicy {

    enum Kind { STOP, SKIP, RETRY }

    private static final ErrorPolicy STOP = new ErrorPolicy(Kind.STOP, 0, Duration.ZERO, false);
    private static final ErrorPolicy SKIP = new ErrorPolicy(Kind.SKIP, 0, Duration.ZERO, false);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private final Kind kind;
    private final int maxRetries;
    private final Duration backoff;
    private final boolean skipWhenExhausted;

    private ErrorPolicy(Kind kind, int maxRetries, Duration backoff, boolean skipWhenExhausted) {
        this.kind = kind;
        this.maxRetries = maxRetries;
        this.backoff = backoff;
        this.skipWhenExhausted = skipWhenExhausted;
    }

    /** @return fail the actor on the first error */
    public static ErrorPolicy stop() {
        return STOP;
    }

    /** @return drop the failing message and go on */
    public static ErrorPolicy skip() {
        return SKIP;
    }

    /**
     * @param maxRetries retries after the first failure, at least 1
     * @param backoff    first back-off, positive
     * @return retry with back-off, then stop
     */
    public static ErrorPolicy retry(int maxRetries, Duration backoff) {
        return retry(maxRetries, backoff, false);
    }

    /**
     * @param maxRetries retries after the first failure, at least 1
     * @param backoff    first back-off, positive
     * @return retry with back-off, then skip the message
     */
    public static ErrorPolicy retryThenSkip(int maxRetries, Duration backoff) {
        return retry(maxRetries, backoff, true);
    }

    private static ErrorPolicy retry(int maxRetries, Duration backoff, boolean skip) {
        if (maxRetries < 1) {
            throw new IllegalArgumentException("maxRetries must be >= 1 but was " + maxRetries);
        }
        if (backoff == null || backoff.isNegative() || backoff.isZero()) {
            throw new IllegalArgumentException("backoff must be positive but was " + backoff);
        }
        return new ErrorPolicy(Kind.RETRY, maxRetries, backoff, skip);
    }

    Kind kind() {
        return kind;
    }

    int maxRetries() {
        return maxRetries;
    }

    boolean skipWhenExhausted() {
        return skipWhenExhausted;
    }

    /** Back-off before retry number {@code attempt} (1-based). */
    Duration backoff(int attempt) {
        Duration d = backoff;
        for (int i = 1; i < attempt && d.compareTo(MAX_BACKOFF) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d;
    }

    @Override
    public String toString() {
        return switch (kind) {
            case STOP -> "ErrorPolicy.stop()";
            case SKIP -> "ErrorPolicy.skip()";
            case RETRY -> (skipWhenExhausted ? "ErrorPolicy.retryThenSkip(" : "ErrorPolicy.retry(") + maxRetries
                    + ", " + backoff + ")";
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ErrorPolicy p && p.kind == kind && p.maxRetries == maxRetries
                && p.backoff.equals(backoff) && p.skipWhenExhausted == skipWhenExhausted;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, maxRetries, backoff, skipWhenExhausted);
    }
}
