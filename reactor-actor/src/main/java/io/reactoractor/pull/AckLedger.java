package io.reactoractor.pull;

import java.util.ArrayDeque;
import java.util.PriorityQueue;
import java.util.TreeMap;

import io.reactoractor.pull.ConsumerGroupCommand.Pull;

/**
 * The at-least-once bookkeeping of one {@link ConsumerGroupActor}: the delivery cursor, the messages
 * in flight (delivered, not yet settled), the redelivery queue, the ack deadlines, the failure policy
 * of a nack, and the committed offset. Confined to the actor's thread; the few figures other threads
 * read ({@code hasData}, stats) are published through volatile fields.
 *
 * <p>{@code nextOffset} is the first offset never delivered. A delivered, unacknowledged message is an
 * {@link InFlight} in {@code pending} (by offset; see its state diagram). An ack removes it; a nack
 * applies the {@link FailurePolicy}; a release (consumer cancelled) or an ack timeout re-queues it in
 * {@code redeliver} (by due time), from where it is delivered ahead of new messages. The committed
 * offset is the smallest pending offset, or {@code nextOffset} when nothing is pending: everything
 * before it was acknowledged.
 *
 * <p>What a settlement means to the store goes to exactly one of {@code store} (synchronous: commit and
 * dead-letter in the turn) or {@code remote} (asynchronous: gathered for its next calls).
 */
final class AckLedger {

    private final String subject;
    private final String group;
    private final long ackTimeoutNanos;
    private final ConsumerGroupCounters counters;
    /** The synchronous store, or {@code null} when {@link #remote} is used. */
    private final MessageStore store;
    /** The asynchronous store's calls, or {@code null} when {@link #store} is used. */
    private final AsyncStoreCalls remote;

    // ---- actor-confined
    private final TreeMap<Long, InFlight> pending = new TreeMap<>();
    private final PriorityQueue<InFlight> redeliver = new PriorityQueue<>(InFlight.BY_DUE);
    private final ArrayDeque<AckDeadline> ackOrder = new ArrayDeque<>();

    // ---- written by the actor, read by any thread (hasData, stats)
    private volatile long nextOffset;
    private volatile long nextRedeliveryDue = Long.MAX_VALUE;
    /** Only the actor writes it (volatile for stats); commits are monotonic. */
    private volatile long committedOffset;
    private volatile int inFlight;

    AckLedger(String subject, String group, long ackTimeoutNanos, ConsumerGroupCounters counters, MessageStore store,
            AsyncStoreCalls remote) {
        this.subject = subject;
        this.group = group;
        this.ackTimeoutNanos = ackTimeoutNanos;
        this.counters = counters;
        this.store = store;
        this.remote = remote;
    }

    // ---- any thread

    /** @return the first offset never delivered */
    long nextOffset() {
        return nextOffset;
    }

    /** @return every message before it was acknowledged */
    long committedOffset() {
        return committedOffset;
    }

    /** @return messages delivered and not settled (or queued for redelivery) */
    int inFlight() {
        return inFlight;
    }

    /** @return when the earliest queued redelivery is due ({@code Long.MAX_VALUE}: none) */
    long nextRedeliveryDue() {
        return nextRedeliveryDue;
    }

    // ---- actor thread

    /** Starts the cursor and the committed offset at {@code start} (a synchronous store's position). */
    void startAt(long start) {
        this.nextOffset = start;
        this.committedOffset = start;
    }

    /** Moves the delivery cursor to {@code offset} (a message read or passed over). */
    void advanceTo(long offset) {
        nextOffset = offset;
    }

    /** @return whether nothing is in flight */
    boolean isEmpty() {
        return pending.isEmpty();
    }

    /**
     * @return whether messages were settled past the offset the store holds: a commit the store refused
     *     ({@link OffsetLimitExceededException}) or failed is still to be made (a synchronous store only)
     */
    boolean hasUncommittedProgress() {
        return store != null && settledOffset() > committedOffset;
    }

    /**
     * Every message before it is settled (acknowledged, or dead-lettered): what a commit records, and what
     * {@link GroupStats#committedOffset()} reports (the group's progress, also while the store refuses or
     * fails its commit, which is retried).
     */
    long settledOffset() {
        return pending.isEmpty() ? nextOffset : Math.min(pending.firstKey(), nextOffset);
    }

    /** @return whether {@code offset} is in flight here */
    boolean isPending(long offset) {
        return pending.containsKey(offset);
    }

    /** @return the earliest ack deadline ({@code Long.MAX_VALUE}: none) */
    long nextAckDeadline() {
        AckDeadline head = ackOrder.peekFirst();
        return head == null ? Long.MAX_VALUE : head.deadline;
    }

    /** An ack: settles {@code offset} if it is in flight here (an unknown or settled one is ignored). */
    void ack(long offset) {
        InFlight f = pending.get(offset);
        if (f != null && f.state != InFlight.DONE) {
            settle(f);
        }
    }

    /**
     * A nack: the policy decides what becomes of {@code offset} if it was delivered and is unsettled, also
     * when it already waits for its redelivery (its consumer cancelled, or its ack deadline passed before
     * the handler failed), as an ack settles it then too: the failure still counts against the policy's
     * attempts (a last attempt is dead-lettered rather than delivered once more). An unknown or settled
     * offset is ignored. So is the nack of an older delivery ({@code attempt}, when known, below the
     * message's current count) while a newer delivery is in flight: that holder's outcome decides.
     *
     * @param attempt the failed delivery's attempt number, {@code 0} if unknown (a nack by offset)
     * @param answer  the nack's caller, answered by the store's reply when the message is being dead-lettered
     *                or skipped with an asynchronous store
     * @return whether {@code answer} was taken over (answered when the store confirms or fails the copy, or
     *         records or fails the skip's acknowledgement); otherwise the caller answers it now
     */
    boolean nack(long offset, FailurePolicy policy, int attempt, long now, ConsumerGroupCommand.Settle answer) {
        InFlight f = pending.get(offset);
        if (f != null && attempt > 0 && f.state == InFlight.DELIVERED && f.attempts != attempt) {
            return false; // stale: delivered again since, and that delivery is in flight
        }
        if (f != null && f.state != InFlight.NEW && f.state != InFlight.DONE && f.state != InFlight.DEAD_LETTERING) {
            return applyFailurePolicy(f, policy, now, answer);
        } else if (f == null && remote != null && policy.kind() == FailurePolicy.Kind.SKIP) {
            // delivered by another process sharing the store (or settled here already): skipping is
            // acknowledging it in the store; a retry is that process's ack timeout, and a dead letter
            // needs its delivery count, which only that process keeps
            counters.skipped.increment();
            remote.acked(offset);
            // answered once the store recorded it, as an ack is: answered at once, the caller's next pull could reach
            // the store first (a new actor reading its own pending entries) and get the skipped message again
            remote.answerWhenRecorded(answer);
            return true;
        }
        return false;
    }

    /** A consumer went away: what it holds unacknowledged is redelivered now. */
    void release(long consumerId, long now) {
        for (InFlight f : pending.values()) {
            if (f.state == InFlight.DELIVERED && f.consumerId == consumerId) {
                requeue(f, now);
            }
        }
    }

    /**
     * Queues these messages, delivered to {@code consumerId} but never handed to the application (an answer
     * the consumer did not deliver downstream: a {@code consume()} cancelled mid-batch, a {@code pull()}
     * cancelled or unrequested), for redelivery at {@code now}. That delivery does not count as an attempt:
     * {@link Delivery#attempt()} is 1 at the first delivery the application sees, and a failure policy's
     * {@code maxAttempts} counts only those. A message the consumer's release of everything it held
     * (its cancel, posted first) or an ack timeout already re-queued, and that was not delivered again since,
     * is uncounted the same way, once. A message delivered again since (its ack timeout passed before this
     * release arrived) is left alone: {@code attempts} names the delivery released, and each counted delivery
     * has a number of its own ({@code pull()} answers all release under one consumer id).
     *
     * @param attempts the attempt number each of {@code offsets} was delivered with
     */
    void release(long consumerId, long[] offsets, int[] attempts, long now) {
        for (int i = 0; i < offsets.length; i++) {
            InFlight f = pending.get(offsets[i]);
            if (f == null || f.consumerId != consumerId || f.lastDeliveryUncounted || f.attempts != attempts[i]) {
                continue;
            }
            if (f.state == InFlight.DELIVERED) {
                uncountLastDelivery(f);
                requeue(f, now);
            } else if (f.state == InFlight.QUEUED) {
                uncountLastDelivery(f);
            }
        }
    }

    private static void uncountLastDelivery(InFlight f) {
        if (f.attempts > 0) {
            f.attempts--;
        }
        f.lastDeliveryUncounted = true;
    }

    /** A message another process left unacknowledged, taken over: queued for redelivery at {@code now}. */
    void adopt(Message m, long now) {
        InFlight f = new InFlight(m);
        pending.put(m.offset(), f);
        requeue(f, now);
        inFlight = pending.size();
    }

    private void settle(InFlight f) {
        pending.remove(f.message.offset());
        f.state = InFlight.DONE;
        inFlight = pending.size();
        counters.acknowledged.increment();
        if (pending.isEmpty()) {
            ackOrder.clear(); // every deadline left is stale: it must not hold the timer (or the idle clock)
        }
    }

    private boolean applyFailurePolicy(InFlight f, FailurePolicy policy, long now, ConsumerGroupCommand.Settle answer) {
        switch (policy.kind()) {
            case SKIP:
                counters.skipped.increment();
                settle(f);
                if (remote != null) {
                    remote.acked(f.message.offset()); // settled in the store too: no other process takes it over
                    remote.answerWhenRecorded(answer); // as an ack is (see nack)
                    return true;
                }
                break;
            case RETRY_FOREVER:
                requeue(f, now + PullConsumer.saturatedNanos(policy.backoff()));
                break;
            case RETRY_THEN_DEAD_LETTER:
            default:
                if (f.attempts >= policy.maxAttempts()) {
                    if (store != null) {
                        store.append(FailurePolicy.deadLetterSubject(group), f.message.payload()); // throws: unsettled
                        counters.deadLettered.increment();
                        settle(f);
                    } else {
                        // settled only once the store confirms the copy (deadLetterAnswered): settled now, a failed
                        // copy was lost, the committed offset moving past it at the next ack
                        if (f.state == InFlight.QUEUED) {
                            redeliver.remove(f);
                        }
                        f.state = InFlight.DEAD_LETTERING;
                        f.generation++; // its ack deadline, if any, is stale now
                        remote.deadLetter(f.message, answer);
                        return true;
                    }
                } else {
                    requeue(f, now + PullConsumer.saturatedNanos(policy.backoff()));
                }
                break;
        }
        return false;
    }

    /**
     * The store answered a dead-letter call ({@code InFlight.DEAD_LETTERING}): the message is settled if the
     * copy was made, else it stays pending and is redelivered after the ack timeout (its next failure
     * dead-letters it again). Ignored if it was settled meanwhile (an ack).
     *
     * @param error the call's failure, {@code null} if the copy was made
     */
    void deadLetterAnswered(long offset, Throwable error, long now) {
        InFlight f = pending.get(offset);
        if (f == null || f.state != InFlight.DEAD_LETTERING) {
            return;
        }
        if (error == null) {
            counters.deadLettered.increment();
            settle(f);
        } else {
            requeue(f, now + ackTimeoutNanos);
        }
    }

    private void requeue(InFlight f, long due) {
        if (f.state == InFlight.QUEUED) {
            // a nack of a queued message (rare): its due time changes, so it leaves the heap before (O(n))
            redeliver.remove(f);
        }
        f.state = InFlight.QUEUED;
        f.due = due;
        f.generation++;
        redeliver.add(f);
        updateRedeliveryDue();
    }

    /**
     * Re-queues every delivery whose ack deadline passed (and was not superseded by a later one). With an
     * asynchronous store they are checked first ({@code CHECKING}, see {@link InFlight}): another process
     * sharing the store may have settled them.
     */
    void sweepAckTimeouts(long now) {
        AckDeadline d;
        long[] check = null;
        int n = 0;
        while ((d = ackOrder.peekFirst()) != null && d.deadline <= now) {
            ackOrder.pollFirst();
            InFlight f = d.flight;
            if (f.generation == d.generation && f.state == InFlight.DELIVERED) {
                if (remote == null) {
                    requeue(f, now);
                    continue;
                }
                f.state = InFlight.CHECKING;
                f.generation++;
                if (check == null) {
                    check = new long[8];
                } else if (n == check.length) {
                    check = java.util.Arrays.copyOf(check, n * 2);
                }
                check[n++] = f.message.offset();
            }
        }
        if (n > 0) {
            remote.checkPending(java.util.Arrays.copyOf(check, n));
        }
    }

    /**
     * The store's answer for messages being checked: those still pending there are queued for redelivery,
     * the others were settled by another process and are settled here too. {@code stillPending} is
     * {@code null} when the check failed: all are redelivered (at least once).
     */
    void checked(long[] asked, long[] stillPending, long now) {
        java.util.Set<Long> pendingThere = null;
        if (stillPending != null) {
            pendingThere = new java.util.HashSet<>();
            for (long o : stillPending) {
                pendingThere.add(o);
            }
        }
        for (long o : asked) {
            InFlight f = pending.get(o);
            if (f == null || f.state != InFlight.CHECKING) {
                continue; // acknowledged or nacked here meanwhile
            }
            if (pendingThere == null || pendingThere.contains(o)) {
                f.renewedByCheck = pendingThere != null;
                requeue(f, now);
            } else {
                settle(f);
            }
        }
    }

    /**
     * @return the queued redelivery due first if it is due at {@code now}, else {@code null}; take it
     *         with {@link #pollRedelivery()} (entries settled meanwhile are dropped here)
     */
    InFlight dueRedelivery(long now) {
        InFlight f;
        while ((f = redeliver.peek()) != null && f.due <= now) {
            if (f.state == InFlight.QUEUED) {
                return f;
            }
            redeliver.poll(); // acknowledged meanwhile
        }
        return null;
    }

    /** Takes the redelivery {@link #dueRedelivery} returned off the queue. */
    void pollRedelivery() {
        redeliver.poll();
    }

    /** Hands {@code f} to the pull {@code p}: in flight until acked, or settled at once (ack-on-delivery). */
    void deliver(InFlight f, Pull p, long now) {
        f.attempts++;
        f.lastDeliveryUncounted = false;
        f.consumerId = p.consumerId;
        counters.delivered.increment();
        if (p.ackOnDelivery) {
            if (f.state != InFlight.NEW) {
                pending.remove(f.message.offset());
            }
            f.state = InFlight.DONE;
            counters.acknowledged.increment();
            if (remote != null) {
                remote.acknowledged(f.message.offset());
            }
        } else {
            f.state = InFlight.DELIVERED;
            f.generation++;
            pending.put(f.message.offset(), f);
            ackOrder.addLast(new AckDeadline(f, f.generation, now + ackTimeoutNanos));
        }
        inFlight = pending.size();
    }

    /** Publishes when the next redelivery is due, after dropping settled entries at the queue's head. */
    void updateRedeliveryDue() {
        InFlight head;
        while ((head = redeliver.peek()) != null && head.state != InFlight.QUEUED) {
            redeliver.poll();
        }
        nextRedeliveryDue = head == null ? Long.MAX_VALUE : head.due;
    }

    /** Moves the committed offset over what was settled, and tells the store (see the class comment). */
    void commitIfAdvanced() {
        long committed = settledOffset();
        if (committed > committedOffset) {
            if (store != null) {
                store.commit(subject, group, committed); // first: a commit that throws is retried next time
                committedOffset = committed;
            } else {
                committedOffset = committed;
                remote.committedMoved();
            }
        }
    }

    /** An ack deadline of one delivery ({@code generation} tells stale entries apart). */
    private record AckDeadline(InFlight flight, long generation, long deadline) {
    }
}
