package io.reactoractor.pull;

import java.util.concurrent.RejectedExecutionException;

/**
 * A commit named a new (subject, group) pair while the {@link InMemoryMessageStore} held
 * {@linkplain InMemoryMessageStore.Builder#maxCommittedOffsets maxCommittedOffsets} committed offsets,
 * all of them used within the {@linkplain InMemoryMessageStore.Builder#offsetRetention offset retention}:
 * the offset was not recorded. Offsets idle for longer are removed to make room before this is thrown.
 * The pull consumer keeps the group's progress in memory and commits again with its next
 * acknowledgement, so nothing is lost: the acknowledgement that carried the commit fails with this
 * error, and the group's waiting pulls with a {@link MessageStoreException} caused by it.
 */
public final class OffsetLimitExceededException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    /** The configured maximum of committed offsets (part of the serialized form). */
    private final int limit;

    /**
     * @param subject the subject of the refused commit
     * @param group   the group of the refused commit
     * @param limit   the configured maximum of committed offsets
     */
    public OffsetLimitExceededException(String subject, String group, int limit) {
        super("cannot commit an offset of group " + group + " on subject " + subject + ": the store holds "
                + limit + " committed offsets used within the offset retention, the maximum (maxCommittedOffsets)");
        this.limit = limit;
    }

    /** @return the configured maximum of committed offsets ({@code maxCommittedOffsets}) */
    public int limit() {
        return limit;
    }
}
