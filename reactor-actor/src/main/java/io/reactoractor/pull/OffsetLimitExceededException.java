package io.reactoractor.pull;

import java.util.concurrent.RejectedExecutionException;

/**
 * A commit named a new (subject, group) pair while the {@link InMemoryMessageStore} held
 * {@linkplain InMemoryMessageStore.Builder#maxCommittedOffsets maxCommittedOffsets} committed offsets,
 * all of them used within the {@linkplain InMemoryMessageStore.Builder#offsetRetention offset retention}:
 * the offset was not recorded. Offsets idle for longer are removed to make room before this is thrown.
 * The pull consumer keeps the group's progress in memory (the group does not retire while it holds some)
 * and commits again at each of the group's turns until the store has room, so nothing is lost: each
 * acknowledgement (or rejection) that moves the group while the store has no room fails with this error,
 * and the group's pulls go on being served.
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
