package io.reactoractor.pull;

import java.util.ArrayDeque;
import java.util.Iterator;

import io.reactoractor.pull.ConsumerGroupCommand.Pull;

/**
 * The long polls a {@link ConsumerGroupActor} holds, oldest first, and their earliest deadline. The
 * queue is confined to the actor's thread; {@link #count()} and {@link #earliestDeadline()} are
 * published (volatile) after every change, for the checks other threads make ({@code hasWork}, an
 * append's wake-up, stats).
 */
final class WaitingPulls {

    /**
     * The longest a pull-once waits for a store fetch already under way (then it is answered
     * {@code EMPTY}): a fetch normally answers in a round trip, a hung store only at its command timeout.
     */
    static final long PULL_ONCE_FETCH_WAIT_NANOS = 100_000_000L;

    private final ArrayDeque<Pull> queue = new ArrayDeque<>();
    private volatile int count;
    private volatile long earliestDeadline = Long.MAX_VALUE;

    // ---- any thread

    /** @return how many pulls wait, as of the actor's last change */
    int count() {
        return count;
    }

    /** @return the earliest deadline of a waiting long poll ({@code Long.MAX_VALUE}: none) */
    long earliestDeadline() {
        return earliestDeadline;
    }

    // ---- actor thread

    boolean isEmpty() {
        return queue.isEmpty();
    }

    int size() {
        return queue.size();
    }

    /** Adds a pull at the end; its deadline is published by the next {@link #publish()}. */
    void add(Pull p) {
        queue.addLast(p);
        count = queue.size();
    }

    Pull peekFirst() {
        return queue.peekFirst();
    }

    /**
     * Removes the oldest pull; the count is published at once (an answer that follows must not find its
     * pull still counted as waiting), the earliest deadline by the next {@link #publish()}.
     */
    Pull pollFirst() {
        Pull p = queue.pollFirst();
        count = queue.size();
        return p;
    }

    /**
     * Oldest first; {@link Iterator#remove()} drops a pull: then {@link #removed()} before it is answered,
     * and {@link #publish()} after.
     */
    Iterator<Pull> iterator() {
        return queue.iterator();
    }

    /**
     * Publishes the count at once after an {@link Iterator#remove()}: an answer that follows must not find its
     * pull still counted as waiting ({@code GroupStats.waitingPulls} read right after a pull-once's
     * {@code EMPTY} counted it); the earliest deadline by the next {@link #publish()}.
     */
    void removed() {
        count = queue.size();
    }

    /** @return how many of the waiting pulls are long polls (pull-once requests are not limited) */
    int longPolls() {
        int n = 0;
        for (Pull p : queue) {
            if (p.waits()) {
                n++;
            }
        }
        return n;
    }

    /** Publishes the count and the earliest deadline after the actor answered or dropped pulls. */
    void publish() {
        publish(0L, Long.MAX_VALUE);
    }

    /**
     * Publishes the count and the earliest deadline after the actor answered or dropped pulls.
     *
     * @param quiescedAt when the actor first saw its consumer quiescing, {@code 0} if not: a long poll then
     *                   waits as a pull-once does, from this moment or its own start, whichever is later
     * @param dueNow     a moment some pulls are due by already (answers the quota cut short), or
     *                   {@code Long.MAX_VALUE}
     */
    void publish(long quiescedAt, long dueNow) {
        count = queue.size();
        long earliest = dueNow;
        for (Pull p : queue) {
            if (p.waits()) {
                earliest = Math.min(earliest, quiescedAt == 0 ? p.deadline
                        : Math.min(p.deadline, Math.max(p.createdNanos, quiescedAt) + PULL_ONCE_FETCH_WAIT_NANOS));
            } else {
                // a pull-once waits for an outstanding fetch at most this long: then serve() answers it EMPTY
                // whatever else holds (so a passed deadline cannot keep the actor spinning)
                earliest = Math.min(earliest, p.createdNanos + PULL_ONCE_FETCH_WAIT_NANOS);
            }
        }
        earliestDeadline = earliest;
    }

    /** @return the messages the waiting pulls ask for together, at most {@code cap} */
    int wanted(int cap) {
        int want = 0;
        for (Pull p : queue) {
            want = (int) Math.min(cap, (long) want + p.max);
        }
        return want;
    }

    /**
     * Drops the pulls their callers cancelled (they are never answered), then publishes.
     *
     * @return whether any was dropped
     */
    boolean dropCancelled() {
        boolean dropped = queue.removeIf(p -> p.cancelled);
        if (dropped) {
            publish();
        }
        return dropped;
    }

    /** Answers every waiting pull with {@code error} and empties the queue. */
    void failAll(Throwable error) {
        failAll(context -> error);
    }

    /**
     * Answers every waiting pull with the error {@code errorFor} makes for its subscriber's Context (a rejection
     * is one per subscriber) and empties the queue.
     */
    void failAll(java.util.function.Function<reactor.util.context.ContextView, Throwable> errorFor) {
        if (queue.isEmpty()) {
            return;
        }
        // empty and published before the answers go out: whoever saw a failed pull's answer finds it
        // no longer counted as waiting
        Pull[] failed = queue.toArray(new Pull[0]);
        queue.clear();
        count = 0;
        earliestDeadline = Long.MAX_VALUE;
        for (Pull p : failed) {
            p.fail(errorFor);
        }
    }
}
