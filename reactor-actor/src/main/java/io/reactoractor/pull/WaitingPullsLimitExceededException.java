package io.reactoractor.pull;

/**
 * A long poll of a (subject, group) that already holds {@linkplain PullConsumer.Builder#maxWaitingPulls
 * maxWaitingPulls} waiting long polls: it was refused, nothing was delivered. Waiting polls end at their
 * timeout or when messages come, so a later poll may succeed; the HTTP sample answers {@code 503} with
 * {@code Retry-After}. A {@link PullConsumer#consume consume()} stream gets it only at its first pull, before
 * it delivered anything: once the group answered a stream, its pulls are never refused. An
 * {@link IllegalStateException}, as this refusal was before it had a type of its own.
 */
public final class WaitingPullsLimitExceededException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** The configured maximum of waiting long polls per group (part of the serialized form). */
    private final int limit;

    /**
     * @param subject the subject
     * @param group   the consumer group
     * @param waiting the long polls waiting
     * @param limit   the configured maximum of waiting long polls per group
     */
    public WaitingPullsLimitExceededException(String subject, String group, int waiting, int limit) {
        super("pull group " + subject + "/" + group + " has " + waiting
                + " waiting long polls, the maximum (maxWaitingPulls = " + limit + ")");
        this.limit = limit;
    }

    /** @return the configured maximum of waiting long polls per (subject, group) ({@code maxWaitingPulls}) */
    public int limit() {
        return limit;
    }
}
