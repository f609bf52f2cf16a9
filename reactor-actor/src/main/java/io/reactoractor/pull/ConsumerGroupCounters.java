package io.reactoractor.pull;

import java.util.concurrent.atomic.LongAdder;

/**
 * The event counters of one {@link ConsumerGroupActor}: written by the actor (and, for
 * {@link #resumes}, by whichever thread ends its wait for data), summed by any thread for
 * {@link GroupStats}. Each field is the {@link GroupStats} component of the same name.
 */
final class ConsumerGroupCounters {

    final LongAdder pulls = new LongAdder();
    final LongAdder pullsTimedOut = new LongAdder();
    final LongAdder pullsExpired = new LongAdder();
    final LongAdder suspends = new LongAdder();
    final LongAdder resumes = new LongAdder();
    final LongAdder delivered = new LongAdder();
    final LongAdder acknowledged = new LongAdder();
    final LongAdder redelivered = new LongAdder();
    final LongAdder skipped = new LongAdder();
    final LongAdder deadLettered = new LongAdder();
    final LongAdder evicted = new LongAdder();
    final LongAdder queueTimeNanos = new LongAdder();

    /** @return the mean time a pull waited in the mailbox, over every pull so far (0 before the first) */
    long meanQueueTimeNanos(long pulls) {
        return pulls == 0 ? 0 : queueTimeNanos.sum() / pulls;
    }
}
