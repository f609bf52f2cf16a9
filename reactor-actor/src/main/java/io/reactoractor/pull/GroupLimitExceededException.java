package io.reactoractor.pull;

import java.util.concurrent.RejectedExecutionException;

/**
 * A call named a (subject, group) pair without a live actor while
 * {@linkplain PullConsumer.Builder#maxGroups maxGroups} actors are live: nothing was created and the
 * call was not run. Idle pairs retire after the {@linkplain PullConsumer.Builder#idleTimeout idle
 * timeout}, so the call may succeed later; the HTTP sample answers {@code 503} with {@code Retry-After}.
 */
public final class GroupLimitExceededException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    /** The configured maximum of live pairs (part of the serialized form). */
    private final int limit;

    /**
     * @param subject the subject
     * @param group   the consumer group
     * @param limit   the configured maximum of live pairs
     */
    public GroupLimitExceededException(String subject, String group, int limit) {
        super("cannot serve " + subject + "/" + group + ": " + limit
                + " (subject, group) pairs are live, the maximum (maxGroups); idle pairs retire after the idle timeout");
        this.limit = limit;
    }

    /** @return the configured maximum of live (subject, group) pairs ({@code maxGroups}) */
    public int limit() {
        return limit;
    }
}
