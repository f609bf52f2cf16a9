package io.reactoractor.pull;

import java.util.concurrent.RejectedExecutionException;

/**
 * A call named a new subject while the {@link InMemoryMessageStore} held
 * {@linkplain InMemoryMessageStore.Builder#maxSubjects maxSubjects} subjects, all of them holding
 * messages or a committed offset: nothing was created and the call was not carried out. Subjects
 * that never held a message are removed to make room before this is thrown, so it means the store
 * is full of data; the HTTP sample answers {@code 503}. The Redis store ({@code reactor-actor-redis})
 * throws it too, from an append that would create a stream while its registry of subject names holds its
 * own {@code maxSubjects} (there the names count, whether their streams hold messages or not). Nothing was
 * stored: {@link PullConsumer#appendAsync} passes it on as it is, not as a {@link MessageStoreException}.
 */
public final class SubjectLimitExceededException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    /** The configured maximum of subjects (part of the serialized form). */
    private final int limit;

    /**
     * @param subject the new subject
     * @param limit   the configured maximum of subjects
     */
    public SubjectLimitExceededException(String subject, int limit) {
        super("cannot create subject " + subject + ": the store holds " + limit
                + " subjects it may not remove, the maximum (maxSubjects)");
        this.limit = limit;
    }

    /** @return the configured maximum of subjects ({@code maxSubjects}) */
    public int limit() {
        return limit;
    }
}
