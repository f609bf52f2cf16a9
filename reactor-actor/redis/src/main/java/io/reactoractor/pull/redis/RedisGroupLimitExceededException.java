package io.reactoractor.pull.redis;

import java.util.concurrent.RejectedExecutionException;

/**
 * A fetch named a consumer group new to its subject while the subject's stream already had
 * {@linkplain RedisStreamsMessageStore.Builder#maxGroupsPerSubject maxGroupsPerSubject} groups: no group was
 * created. Group names come from clients, and a Redis consumer group lives until it is destroyed (it is the
 * group's position in the stream), so their number per stream is bounded; a group nobody read for
 * {@linkplain RedisStreamsMessageStore.Builder#groupRetention groupRetention} is destroyed to make room first,
 * so this means there was none (or the stream's groups were walked for one less than a second before). The pull consumer
 * fails the group's waiting pulls with a {@link io.reactoractor.pull.MessageStoreException} caused by this; the
 * HTTP sample answers {@code 503}.
 */
public final class RedisGroupLimitExceededException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    /** The configured maximum of groups per subject (part of the serialized form). */
    private final int limit;

    /**
     * @param subject the subject
     * @param group   the new consumer group
     * @param limit   the configured maximum of groups per subject
     */
    public RedisGroupLimitExceededException(String subject, String group, int limit) {
        super("cannot create consumer group " + group + " on subject " + subject + ": its stream has at least "
                + limit + " groups, the maximum (maxGroupsPerSubject)");
        this.limit = limit;
    }

    /** @return the configured maximum of consumer groups per subject ({@code maxGroupsPerSubject}) */
    public int limit() {
        return limit;
    }
}
