package io.reactoractor.pull;

/**
 * A snapshot of one consumer group on one subject.
 *
 * @param subject               the subject
 * @param group                 the consumer group
 * @param schedulingGroup       the scheduler group whose CPU share the group's actor uses
 * @param endOffset             the subject's end offset (next append's offset)
 * @param committedOffset       every message before it was acknowledged by the group (settled: also while
 *                              the store refuses or fails to record it, which the consumer retries; the
 *                              store's own figure is {@link MessageStore#committedOffset})
 * @param lag                   {@code endOffset - committedOffset}: messages not yet acknowledged; with an
 *                              {@link AsyncMessageStore} whose offsets have gaps, the messages this process
 *                              holds (fetched, not yet acknowledged): the group's lag is the store's
 *                              {@link AsyncMessageStore#position position}
 * @param waitingPulls          long polls waiting for messages now
 * @param inFlight              messages delivered and not yet acknowledged (or queued for redelivery)
 * @param suspended             whether the group's actor is suspended (waiting for data)
 * @param pulls                 pulls received
 * @param pullsTimedOut         pulls answered empty at their timeout
 * @param pullsExpired          of those, pulls that had expired before the actor first saw them
 * @param suspends              times the actor suspended for lack of data
 * @param resumes               times it was resumed by an append, its timer or a command
 * @param delivered             messages delivered (redeliveries included)
 * @param acknowledged          messages settled: acknowledged, skipped or dead-lettered
 * @param redelivered           redeliveries (nack with retry, released by a cancelled consumer, ack timeout)
 * @param skipped               messages dropped by {@link FailurePolicy#skip()}
 * @param deadLettered          messages moved to the dead-letter subject
 * @param evicted               messages the store dropped (retention) before the group read them
 * @param meanPullQueueTimeNanos mean time from a pull's submission to the actor handling it
 */
public record GroupStats(String subject, String group, String schedulingGroup, long endOffset,
        long committedOffset, long lag, int waitingPulls, int inFlight, boolean suspended, long pulls,
        long pullsTimedOut, long pullsExpired, long suspends, long resumes, long delivered, long acknowledged,
        long redelivered, long skipped, long deadLettered, long evicted, long meanPullQueueTimeNanos) {
}
