package io.reactoractor.pull;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;

import io.reactoractor.pull.ConsumerGroupCommand.Pull;
import io.reactoractor.pull.ConsumerGroupCommand.Settle;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The calls a {@link ConsumerGroupActor} makes to an {@link AsyncMessageStore}, and what it holds
 * between them. The actor never waits for the store: it issues a call and goes on; the call's
 * {@link StoreReply} is posted to the actor's mailbox when the Mono completes (on whatever thread
 * completes it, typically the store's I/O thread, which does nothing but the post), and its result is
 * applied in a later turn of the actor (Zeebe's {@code runOnCompletion}). While a pull waits only for a
 * store call, nothing is servable ({@link #mayHaveData} is false while {@code fetching} and nothing is
 * buffered), so the actor suspends as for data; the reply's post resumes it. At most one fetch (up to
 * {@value #MAX_FETCH_CALLS} if the store allows {@linkplain AsyncMessageStore#pipelinedFetches() pipelined
 * fetches}), one reclaim and {@value #MAX_ACK_CALLS} acknowledge calls are outstanding; new messages
 * fetched are kept in {@code fetched} (in this process's name in the store) until a pull takes them.
 *
 * <h2>Read-ahead</h2>
 * While pulls take messages from {@code fetched} and the last fetch came back full ({@code maybeMore}),
 * the next fetch is issued before the buffer runs dry: when the buffer and the outstanding fetches hold
 * fewer than {@value #READ_AHEAD_BELOW} messages and the buffer fewer than
 * {@value #READ_AHEAD_BELOW_BYTES} payload bytes, and pulls took messages since the fetch before the last
 * one was issued (the demand of two fetch intervals, so that a fetch that lands while pulls keep taking
 * is followed at once by the next one), for twice that demand (at least what the waiting pulls want, at
 * most {@value #MAX_FETCH}, or {@value #MAX_PIPELINED_FETCH} when pipelined). A store that allows
 * pipelined fetches (Redis: {@code XREADGROUP ... >} keeps the cursor) gets up to
 * {@value #MAX_FETCH_CALLS} such smaller fetches outstanding once one answer came back full: it is never
 * idle between a fetch's answer and the next fetch, and an acknowledge call queued behind a fetch on its
 * connection waits for at most a small one. Answers are applied in the order the fetches were issued
 * (a later one that completes first waits). So {@code fetched} never holds more than
 * {@code READ_AHEAD_BELOW + MAX_FETCH - 1} messages, nor much more than 16 MiB and one fetch's bytes. A
 * buffered message is already in the store's pending list in this process's name (for Redis: in the
 * PEL of this consumer, its idle clock running since the fetch), so:
 * <ul>
 *   <li>a message handed out after {@code ackTimeout / 4} or more in the buffer is {@linkplain
 *       AsyncMessageStore#renew renewed}, like a redelivery, so that its consumer gets its whole ack
 *       timeout before another process may reclaim it;</li>
 *   <li>a message left in the buffer for the ack timeout or longer (its pulls stopped) may meanwhile
 *       have been reclaimed by another process: both then deliver it (a duplicate, as with any reclaim;
 *       at-least-once holds). It is not dropped from the buffer: a store that keeps no pending list of
 *       its own (the {@linkplain AsyncMessageStore#of adapted} synchronous store reads from the caller's
 *       cursor) would never hand it out again;</li>
 *   <li>an actor that retires with a buffer (nothing in flight, no pull for its idle timeout) strands
 *       nothing: its messages are pending in the store, read again by the pair's next actor here (the
 *       first fetch reads this consumer's own pending entries, or from the committed offset) or
 *       reclaimed by any process after the ack timeout.</li>
 * </ul>
 *
 * <h2>Freshness and failing fast</h2>
 * A new pull makes the next turn fetch ({@code maybeMore}) unless a fetch was issued less than
 * {@value #FRESH_FETCH_NANOS} ns before it (outstanding or answered): that fetch, or the append
 * notification of anything appended since, serves it. A pull arriving while the store says it is
 * {@linkplain AsyncMessageStore#connected() disconnected} fails at once ({@code ConsumerGroupActor}); one
 * waiting when a fetch fails is failed with it, unless the store then says it is disconnected: an outage, which
 * the pulls waiting wait out (their deadline, or the fetch that the store's reconnection or a new pull asks for).
 *
 * <h2>Store calls (actor thread, but for {@code maybeMore})</h2>
 * <pre>
 *   call          | issued (actor turn, end unless said)         | reply applied (actor turn)
 *   --------------+----------------------------------------------+---------------------------------------
 *   fetch         | none outstanding and maybeMore, or (pipelined| in the order issued (a later answer waits
 *                 | store) fewer than MAX_FETCH_CALLS, the last  | for the earlier ones): fetching=false
 *                 | answer full and the cursor known; and either | when none is left; messages to fetched
 *                 | pulls wait with fetched empty (none out), or | (a batch, with its time); a full batch
 *                 | pulls took in the last two fetch intervals   | sets maybeMore; an error fails every
 *                 | and fetched + outstanding &lt; READ_AHEAD_BELOW | waiting pull ({@link MessageStoreException})
 *                 | (read-ahead): fetching=true,                 | unless the store then says disconnected
 *                 | maybeMore=false (an append listener, on any  | (they wait on; maybeMore stays false)
 *                 | thread, or a pull not covered by a fresh     |
 *                 | fetch sets maybeMore again)                  |
 *   acknowledge   | a consumer's ack handled (at once, in the    | one call fewer outstanding; the acks it
 *                 | command's handling), or at the turn's end:   | carried are answered (committed offset)
 *                 | acks / ack-on-delivery / commit pending;     | or failed; a failure keeps its offsets
 *                 | fewer than MAX_ACK_CALLS outstanding; after  | and the commit for the next call and
 *                 | a failure, its back-off passed or an ack     | sets the back-off (10 ms doubling to
 *                 | waits for an answer: one call with every     | 1 s; the timer's turn sends them); a
 *                 | offset gathered                              | success ends the back-off
 *   reclaim       | pulls wait, now &gt;= nextReclaimAt, not       | messages not already in this process
 *                 | reclaiming                                   | are queued for redelivery (due now)
 *   renew         | a pull is answered with redeliveries, or with| a failure is logged (another process
 *                 | messages that waited &gt;= ackTimeout/4 in the  | may take them over too: a duplicate)
 *                 | buffer (restarts their idle clock)           |
 *   dead letter   | a nack's policy dead-letters a message (it   | the copy made: the message is settled;
 *                 | stays pending here, DEAD_LETTERING)          | a failure is logged and the message is
 *                 |                                              | redelivered after the ack timeout
 * </pre>
 * A pull never waits past its deadline for a call: the deadline timer answers it {@code TIMED_OUT}
 * whatever is outstanding, and a late fetch's messages stay in {@code fetched} for the next pull. The
 * actor does not retire while a call is outstanding or acks wait for one, nor while the store has not
 * recorded what was acknowledged ({@link #idle}).
 */
final class AsyncStoreCalls {

    private static final Logger LOG = Loggers.getLogger(ConsumerGroupActor.class);
    /** The most messages one fetch asks for. */
    static final int MAX_FETCH = 2048;
    /** The most messages one fetch asks for when fetches are pipelined (several outstanding). */
    static final int MAX_PIPELINED_FETCH = 512;
    /** Read-ahead fetches while the buffer and the outstanding fetches hold fewer messages than this... */
    static final int READ_AHEAD_BELOW = 4096;
    /** ...and fewer payload bytes than this. */
    static final long READ_AHEAD_BELOW_BYTES = 16L << 20;
    /** The most messages one reclaim asks for. */
    static final int MAX_RECLAIM = 1024;
    /** Acknowledge calls outstanding at most (pipelined on the store's connection). */
    static final int MAX_ACK_CALLS = 4;
    /** The back-off before acknowledgements a failed call carried are sent again: doubling from this... */
    static final long ACK_RETRY_MIN_NANOS = 10_000_000L;
    /** ...up to this. */
    static final long ACK_RETRY_MAX_NANOS = 1_000_000_000L;
    /** Fetches outstanding at most when the store allows it ({@link AsyncMessageStore#pipelinedFetches()}). */
    static final int MAX_FETCH_CALLS = 4;
    /** A fetch issued this recently covers a new pull (see the class comment). */
    static final long FRESH_FETCH_NANOS = 1_000_000L;

    private final ConsumerGroupActor actor;
    private final AsyncMessageStore remote;
    private final String subject;
    private final String group;
    /** Offsets of the store are dense: a gap before a fetched message was retention. */
    private final boolean dense;
    /** Fetches outstanding at most: {@link #MAX_FETCH_CALLS} if the store allows pipelined fetches, else 1. */
    private final int maxFetchCalls;
    /** The most messages one fetch asks for: {@link #MAX_PIPELINED_FETCH} if pipelined, else {@link #MAX_FETCH}. */
    private final int maxFetch;
    private final long ackTimeoutNanos;
    /** How often waiting pulls make the actor reclaim long-unacknowledged messages. */
    private final long reclaimIntervalNanos;
    private final WaitingPulls waiting;
    private final ConsumerGroupCounters counters;

    // ---- actor-confined (see the table)
    private final ArrayDeque<Message> fetched = new ArrayDeque<>();
    /** The batches of {@code fetched}, oldest first: {remaining messages, when fetched (nanoTime)}. */
    private final ArrayDeque<long[]> fetchedBatches = new ArrayDeque<>();
    /** The fetches outstanding, in the order issued (their answers are applied in that order). */
    private final ArrayDeque<Fetched> fetchCalls = new ArrayDeque<>();
    /** Messages the outstanding fetches asked for. */
    private long fetchWanted;
    /** The last fetch answered came back full: the store holds more (a pipelined fetch may go out). */
    private boolean lastFetchFull;
    /** Messages pulls took from {@code fetched} since the last fetch was issued (read-ahead's measure of demand). */
    private long takenSinceFetch;
    /** {@code takenSinceFetch} when the last fetch was issued (see read-ahead in the class comment). */
    private long demandOfLastFetch;
    /** Payload bytes in {@code fetched}. */
    private long bufferedBytes;
    /** When the last fetch was issued. */
    private long lastFetchAt;
    /** How long a fetched message may wait in the buffer before it is renewed when handed out. */
    private final long renewAfterNanos;
    /** The offset after the last message fetched, or -1 before the first one. */
    private long fetchCursor = -1;
    /** Messages retention dropped before a fetch reached them, told to the next pull answered. */
    private long skipCarry;
    /** Acknowledge calls outstanding. */
    private int ackCalls;
    private boolean reclaiming;
    /** Offsets acknowledged while a reclaim was outstanding: its answer must not bring them back. */
    private final HashSet<Long> ackedWhileReclaiming = new HashSet<>();
    private long reclaimCursor;
    private long nextReclaimAt;
    /** Offsets acknowledged since the last acknowledge call. */
    private long[] toAck = new long[16];
    private int toAckCount;
    /** Whether the committed offset moved since the last acknowledge call. */
    private boolean commitDirty;
    /** Acks answered when the next acknowledge call completes. */
    private List<Settle> ackWaiters = new ArrayList<>();
    /**
     * The acknowledge calls outstanding (at most {@link #MAX_ACK_CALLS}), whose acks are answered when the call
     * ends, or when the actor terminates first (a store that never answers must not hold them for good).
     */
    private final List<Acked> acksInFlight = new ArrayList<>(MAX_ACK_CALLS);
    /** Acknowledge calls failed in a row (0: the last one succeeded); sets the back-off of the retry. */
    private int ackFailures;
    /** When the acknowledgements of a failed call are sent again (meaningful while {@code ackFailures > 0}). */
    private long ackRetryAt;
    /** Store calls outstanding (the actor does not retire while one is). */
    private int outstanding;

    // ---- written by the actor (but maybeMore, knownEnd), read by any thread (hasData, stats)
    /** A fetch is outstanding. */
    private volatile boolean fetching;
    /** The store may hold messages not fetched yet (set by listeners and pulls). */
    private volatile boolean maybeMore = true;
    /** {@code fetched.size()}, for {@link #mayHaveData} on other threads. */
    private volatile int buffered;
    /** The end offset last heard of (an append listener or a fetch), for stats. */
    private volatile long knownEnd;

    /**
     * @param now when the actor started: the first reclaim is due then (the store keeps the group's
     *            position: the first fetch tells where it stands)
     */
    AsyncStoreCalls(ConsumerGroupActor actor, AsyncMessageStore remote, String subject, String group,
            long ackTimeoutNanos, WaitingPulls waiting, ConsumerGroupCounters counters, long now) {
        this.actor = actor;
        this.remote = remote;
        this.subject = subject;
        this.group = group;
        this.dense = remote.denseOffsets();
        this.maxFetchCalls = remote.pipelinedFetches() ? MAX_FETCH_CALLS : 1;
        this.maxFetch = remote.pipelinedFetches() ? MAX_PIPELINED_FETCH : MAX_FETCH;
        this.ackTimeoutNanos = ackTimeoutNanos;
        this.reclaimIntervalNanos = Math.max(ackTimeoutNanos, 1_000_000L);
        this.waiting = waiting;
        this.counters = counters;
        this.nextReclaimAt = now;
        this.lastFetchAt = now - FRESH_FETCH_NANOS;
        this.renewAfterNanos = ackTimeoutNanos / 4;
    }

    // ================================================================== any thread

    /** The store appended to the subject: a fetch may find more (set before the actor is woken). */
    void appended(long endOffset) {
        maybeMore = true; // before the wake-up: the woken actor must see it
        if (endOffset > knownEnd) {
            knownEnd = endOffset; // racy max: for stats only
        }
    }

    /** @return whether a pull could get a new message now: one fetched, or a fetch worth issuing */
    boolean mayHaveData() {
        return buffered > 0 || (maybeMore && !fetching);
    }

    boolean fetching() {
        return fetching;
    }

    /** @return the end offset last heard of */
    long knownEnd() {
        return knownEnd;
    }

    /** @return whether offsets count messages (see {@link AsyncMessageStore#denseOffsets()}) */
    boolean dense() {
        return dense;
    }

    /** @return messages fetched and not yet handed to a pull */
    int buffered() {
        return buffered;
    }

    // ================================================================== actor thread

    /**
     * A pull arrived: another process may have appended, so the pull asks the store, unless a fetch
     * issued less than {@link #FRESH_FETCH_NANOS} ago covers it (see the class comment).
     */
    void pullArrived(long now) {
        if (now - lastFetchAt >= FRESH_FETCH_NANOS) {
            maybeMore = true;
        }
    }

    /** @return whether the store can be reached, as far as it knows (its connection is up) */
    boolean connected() {
        return remote.connected();
    }

    /**
     * Whether a call failed because the store could not be reached, as the store says
     * ({@link AsyncMessageStore#isConnectionFailure}, by default {@code !connected()}). An I/O failure alone does not
     * tell here (a store whose {@code connected()} always says {@code true} fails every call with one while it is
     * down, and new pulls must then fail fast): only the store knows its client. A store whose answer throws is taken
     * as reachable (the failure is then the store's, as any other).
     *
     * @param error the call's failure
     * @return whether it is an outage rather than the store refusing the call
     */
    private boolean outage(Throwable error) {
        try {
            return remote.isConnectionFailure(error);
        } catch (Throwable t) {
            reactor.core.Exceptions.throwIfJvmFatal(t);
            return false;
        }
    }

    /** A consumer acknowledged {@code offset}: every offset, known here or not (another process may have delivered it). */
    void acked(long offset) {
        addToAck(offset);
        if (reclaiming) {
            ackedWhileReclaiming.add(offset); // the reclaim's answer may still hold it
        }
    }

    /** Answers {@code ack} when the store has recorded it. */
    void answerWhenRecorded(Settle ack) {
        ackWaiters.add(ack);
    }

    /** A message was acknowledged on delivery: recorded with the next acknowledge call. */
    void acknowledged(long offset) {
        addToAck(offset);
    }

    /** The committed offset moved: told to the store with the next acknowledge call. */
    void committedMoved() {
        commitDirty = true;
    }

    /** Moves {@code message} to the dead-letter subject; {@code answer} (the nack) is answered with the store's reply. */
    void deadLetter(Message message, ConsumerGroupCommand.Settle answer) {
        call(() -> remote.deadLetter(subject, group, message), new DeadLettered(message, answer));
    }

    /** Asks the store which of these messages (their ack timeout passed) are still pending; see {@link InFlight}. */
    void checkPending(long[] offsets) {
        call(() -> remote.renewPending(subject, group, offsets), new Checked(offsets));
    }

    /** Restarts the store's idle clock of the first {@code n} messages of {@code out}. */
    void renew(List<InFlight> out, int n) {
        long[] offsets = new long[n];
        for (int i = 0; i < n; i++) {
            offsets[i] = out.get(i).message.offset();
        }
        renew(offsets);
    }

    /** Restarts the store's idle clock of these messages (delivered again). */
    void renew(long[] offsets) {
        call(() -> remote.renew(subject, group, offsets), new Renewed());
    }

    /**
     * Takes fetched messages into {@code out} (see {@code ConsumerGroupActor.take}); those that waited
     * long in the buffer are renewed (see the class comment).
     */
    void takeFetched(Pull p, long now, List<InFlight> out, long bytes, long maxBytes, AckLedger ledger) {
        int first = out.size();
        int aged = 0;
        Message m;
        while (out.size() < p.max && (m = fetched.peekFirst()) != null) {
            long size = m.payload().length;
            if (!out.isEmpty() && bytes + size > maxBytes) {
                break;
            }
            long[] batch = fetchedBatches.peekFirst();
            if (now - batch[1] >= renewAfterNanos) {
                aged++; // the oldest come first: the aged ones are a prefix of those taken
            }
            pollFetched();
            bytes += size;
            InFlight n = new InFlight(m);
            ledger.deliver(n, p, now);
            out.add(n);
            ledger.advanceTo(Math.max(ledger.nextOffset(), m.offset() + 1));
        }
        takenSinceFetch += out.size() - first;
        if (aged > 0) {
            renew(out.subList(first, first + aged), aged);
        }
        if (skipCarry > 0 && !out.isEmpty()) {
            p.skipped += skipCarry;
            skipCarry = 0;
        }
        buffered = fetched.size();
    }

    private Message pollFetched() {
        long[] batch = fetchedBatches.peekFirst();
        if (--batch[0] == 0) {
            fetchedBatches.pollFirst();
        }
        Message m = fetched.pollFirst();
        bufferedBytes -= m.payload().length;
        return m;
    }

    private void addToAck(long offset) {
        if (toAckCount == toAck.length) {
            toAck = Arrays.copyOf(toAck, toAckCount * 2);
        }
        toAck[toAckCount++] = offset;
    }

    /** End of a turn: issues the calls the state asks for (see the table). */
    void issueCalls(long now, long committedOffset) {
        issueFetch(now);
        issueAck(now, committedOffset);
        issueReclaim(now);
    }

    /**
     * A consumer's ack was handled: its acknowledge call goes out now if fewer than
     * {@value #MAX_ACK_CALLS} are outstanding, not at the end of the turn with the acks of every other
     * consumer handled in it (each consumer's ack is answered when its own call is; see the table).
     */
    void ackHandled(long now, long committedOffset) {
        issueAck(now, committedOffset);
    }

    private void issueFetch(long now) {
        while (issueOneFetch(now)) {
            // a pipelined store may take another one (demand stops it after two: see read-ahead)
        }
    }

    private boolean issueOneFetch(long now) {
        // a first fetch, or a pipelined one while the last answer was full and the cursor is known
        boolean mayFetch = fetchCalls.isEmpty() ? maybeMore
                : fetchCalls.size() < maxFetchCalls && lastFetchFull && fetchCursor >= 0;
        if (mayFetch) {
            boolean need = fetched.isEmpty() && !waiting.isEmpty() && fetchCalls.isEmpty();
            // demand: what pulls took since the fetch before the last one was issued (two intervals: a
            // fetch that lands is followed at once by the next one while pulls keep taking)
            long demand = takenSinceFetch + demandOfLastFetch;
            boolean readAhead = demand > 0 && fetched.size() + fetchWanted < READ_AHEAD_BELOW
                    && bufferedBytes < READ_AHEAD_BELOW_BYTES;
            if (need || readAhead) {
                int want = (int) Math.min(maxFetch, Math.max(waiting.isEmpty() ? 1 : waiting.wanted(maxFetch),
                        2 * demand));
                fetching = true;
                maybeMore = false;
                demandOfLastFetch = takenSinceFetch;
                takenSinceFetch = 0;
                lastFetchAt = now;
                fetchWanted += want;
                Fetched f = new Fetched(fetchCursor, want);
                fetchCalls.addLast(f);
                call(() -> remote.fetch(subject, group, fetchCursor, want), f);
                return true;
            }
        }
        return false;
    }

    private void issueAck(long now, long committedOffset) {
        // after a failed call, what it carried waits for its back-off unless a consumer's ack waits for an
        // answer (its call carries them too): a store that fails at once is not called in a loop of turns
        if (ackCalls < MAX_ACK_CALLS && (toAckCount > 0 || commitDirty)
                && (ackFailures == 0 || now - ackRetryAt >= 0 || !ackWaiters.isEmpty())) {
            ackCalls++;
            long[] offsets = Arrays.copyOf(toAck, toAckCount);
            toAckCount = 0;
            if (toAck.length > 1024) {
                toAck = new long[16]; // a burst's array is not kept
            }
            commitDirty = false;
            List<Settle> waiters = ackWaiters;
            ackWaiters = new ArrayList<>();
            Acked acked = new Acked(offsets, waiters);
            acksInFlight.add(acked);
            call(() -> remote.acknowledge(subject, group, offsets, committedOffset), acked);
        }
    }

    private void issueReclaim(long now) {
        if (!reclaiming && !waiting.isEmpty() && now >= nextReclaimAt) {
            reclaiming = true;
            for (int i = 0; i < toAckCount; i++) {
                ackedWhileReclaiming.add(toAck[i]); // settled here, XACK not sent yet (one is outstanding)
            }
            call(() -> remote.reclaim(subject, group, reclaimCursor, Duration.ofNanos(ackTimeoutNanos), MAX_RECLAIM),
                    new Reclaim());
        }
    }

    /** @return when the next reclaim is due, for the timer ({@code Long.MAX_VALUE} while one is outstanding) */
    long nextReclaimAt() {
        return reclaiming ? Long.MAX_VALUE : nextReclaimAt;
    }

    /**
     * @return when acknowledgements a failed call carried are due to be sent again, for the timer
     *     ({@code Long.MAX_VALUE} if none wait for a back-off)
     */
    long nextAckRetryAt() {
        return ackFailures > 0 && (toAckCount > 0 || commitDirty) ? ackRetryAt : Long.MAX_VALUE;
    }

    /**
     * @return whether no call is outstanding and nothing waits to be told to the store (the actor may
     *     retire): acknowledgements not recorded yet, also those of a failed call, keep it, as a
     *     synchronous store's uncommitted progress does
     */
    boolean idle() {
        return outstanding == 0 && ackWaiters.isEmpty() && toAckCount == 0 && !commitDirty;
    }

    /**
     * The actor terminated: the acks waiting for an acknowledge call, or for an outstanding one to end, are
     * answered with the error {@code closed} makes for each one's subscriber Context. The store may still record
     * an outstanding call's acknowledgements; its answer, if it comes, finds no one to tell.
     */
    void failAckWaiters(java.util.function.Function<reactor.util.context.ContextView, Throwable> closed) {
        for (Settle s : ackWaiters) {
            s.fail(closed);
        }
        ackWaiters.clear();
        for (Acked a : acksInFlight) {
            a.fail(closed);
        }
        acksInFlight.clear();
    }

    /** Subscribes {@code reply} to a store call: it is posted back to the actor when the call ends. */
    /**
     * Makes a store call and subscribes its reply. The call itself is made inside the guard: a store may
     * throw in the call (the SPI's own stores do for bad arguments) instead of failing its Mono, and the
     * state changed for the call (a fetch in progress, an acknowledgement slot taken) must then be undone by
     * the reply's failure as for a failed Mono, or the pair would wait for that call for good.
     */
    private <T> void call(java.util.function.Supplier<Mono<T>> storeCall, StoreReply<T> reply) {
        outstanding++;
        try {
            storeCall.get().subscribe(reply); // a null Mono: a NullPointerException, a failure as well
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            reply.onError(t); // a store that throws instead of failing its Mono
        }
    }

    private boolean isFetched(long offset) {
        if (fetched.isEmpty() || offset < fetched.peekFirst().offset() || offset > fetched.peekLast().offset()) {
            return false; // fetched is in offset order
        }
        for (Message m : fetched) {
            if (m.offset() == offset) {
                return true;
            }
        }
        return false;
    }

    /**
     * The answer of a store call, posted to the actor by the thread that completes the call's Mono
     * (see the table); {@link #applied} runs in the actor's turn. One subscriber per call.
     */
    abstract class StoreReply<T> extends ConsumerGroupCommand implements CoreSubscriber<T> {
        T value;
        Throwable error;
        private boolean done;

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(T t) {
            value = t;
        }

        @Override
        public void onError(Throwable t) {
            if (!done) {
                done = true;
                error = t;
                actor.post(this);
            }
        }

        @Override
        public void onComplete() {
            if (!done) {
                done = true;
                actor.post(this);
            }
        }

        /** The call ended: applies its answer (actor thread). */
        final void applied(long now) {
            outstanding--;
            apply(now);
        }

        abstract void apply(long now);

        @Override
        void fail(java.util.function.Function<reactor.util.context.ContextView, Throwable> closed) {
            // the actor terminated before applying the answer
        }
    }

    /** A fetch's answer. */
    private final class Fetched extends StoreReply<List<Message>> {
        private final long from;
        private final int wanted;

        Fetched(long from, int wanted) {
            this.from = from;
            this.wanted = wanted;
        }

        /** Answered, waiting for an earlier fetch's answer to be applied first. */
        private boolean answered;

        @Override
        void apply(long now) {
            answered = true;
            // in the order issued: a later fetch answered first (another thread completed it) waits
            Fetched head;
            while ((head = fetchCalls.peekFirst()) != null && head.answered) {
                fetchCalls.pollFirst();
                fetchWanted -= head.wanted;
                fetching = !fetchCalls.isEmpty();
                head.applyInOrder(now);
            }
        }

        private void applyInOrder(long now) {
            if (error != null) {
                lastFetchFull = false;
                if (outage(error)) {
                    // the store went down (its connection lost, as it says): the pulls waiting wait on, as those
                    // waiting while no fetch was under way do. Their deadlines answer them TIMED_OUT, or the store's
                    // reconnection (appendsMissed) or a new pull makes a turn fetch again; not before (a fetch now
                    // would fail at once, turn after turn)
                    return;
                }
                maybeMore = true; // ask again with the next pull
                // the store could not answer what the waiting pulls wait for
                waiting.failAll(new MessageStoreException("pull group " + subject + "/" + group
                        + ": the message store failed", error));
                return;
            }
            List<Message> got = value == null ? List.of() : value;
            if (!got.isEmpty()) {
                long first = got.get(0).offset();
                if (dense && from >= 0 && first > from) {
                    // dropped by retention before this group read them
                    counters.evicted.add(first - from);
                    skipCarry += first - from;
                }
                fetched.addAll(got);
                for (Message m : got) {
                    bufferedBytes += m.payload().length;
                }
                fetchedBatches.addLast(new long[] {got.size(), now});
                buffered = fetched.size();
                fetchCursor = got.get(got.size() - 1).offset() + 1;
                if (fetchCursor > knownEnd) {
                    knownEnd = fetchCursor;
                }
            }
            lastFetchFull = got.size() >= wanted;
            if (lastFetchFull) {
                maybeMore = true;
            }
        }

        @Override
        public String toString() {
            return "Fetched";
        }
    }

    /**
     * An acknowledge call's answer: answers the acks it carried. A failure keeps what the call carried:
     * its offsets and the committed offset are sent again with the next call, after a back-off (doubling
     * from {@link #ACK_RETRY_MIN_NANOS} to {@link #ACK_RETRY_MAX_NANOS}) unless a consumer's ack goes out
     * sooner; the messages are settled here, so without it they stayed pending in the store and were
     * delivered again once the pair's actor retired (a cursor-based store reads from its older offset) or
     * another process reclaimed them.
     */
    private final class Acked extends StoreReply<Void> {
        private final long[] offsets;
        private final List<Settle> waiters;

        Acked(long[] offsets, List<Settle> waiters) {
            this.offsets = offsets;
            this.waiters = waiters;
        }

        @Override
        void apply(long now) {
            ackCalls--;
            acksInFlight.remove(this);
            if (error != null) {
                for (long offset : offsets) {
                    addToAck(offset);
                    if (reclaiming) {
                        ackedWhileReclaiming.add(offset); // an outstanding reclaim must not bring it back
                    }
                }
                commitDirty = true;
                if (ackFailures++ == 0) {
                    LOG.warn("pull group " + actor.path() + ": the store did not record acknowledgements; they "
                            + "are kept and sent again (logged once until a call succeeds)", error);
                }
                ackRetryAt = now + Math.min(ACK_RETRY_MAX_NANOS, ACK_RETRY_MIN_NANOS << Math.min(ackFailures - 1, 7));
                MessageStoreException e = new MessageStoreException("pull group " + subject + "/" + group
                        + ": acknowledgement not recorded yet (it is kept, and sent again until the store records it)",
                        error);
                for (Settle s : waiters) {
                    s.fail(e);
                }
            } else {
                if (ackFailures > 0) {
                    ackFailures = 0;
                    LOG.info("pull group " + actor.path() + ": the store records acknowledgements again");
                }
                long committed = actor.ledger.committedOffset();
                for (Settle s : waiters) {
                    s.done(committed);
                }
            }
        }

        @Override
        void fail(java.util.function.Function<reactor.util.context.ContextView, Throwable> closed) {
            for (Settle s : waiters) {
                s.fail(closed); // the acks waiting for this call: each with its own subscriber's error
            }
            waiters.clear(); // answered once: by the termination, then not again by the call's late reply
        }

        @Override
        public String toString() {
            return "Acked";
        }
    }

    /** A reclaim's answer: messages nobody acknowledged in time, redelivered from here. */
    private final class Reclaim extends StoreReply<AsyncMessageStore.Reclaimed> {
        @Override
        void apply(long now) {
            reclaiming = false;
            nextReclaimAt = now + reclaimIntervalNanos;
            try {
                takeOver(now);
            } finally {
                ackedWhileReclaiming.clear();
            }
        }

        private void takeOver(long now) {
            if (error != null) {
                LOG.debug("pull group " + actor.path() + ": reclaim failed", error);
                return;
            }
            AsyncMessageStore.Reclaimed r = value;
            if (r == null) {
                return;
            }
            reclaimCursor = r.cursor();
            AckLedger ledger = actor.ledger;
            for (Message m : r.messages()) {
                if (ledger.isPending(m.offset()) || isFetched(m.offset())) {
                    continue; // ours already: our own ack timeout redelivers it
                }
                if (ackedWhileReclaiming.contains(m.offset())) {
                    continue; // claimed before our XACK reached the store, acknowledged since
                }
                ledger.adopt(m, now);
            }
        }

        @Override
        public String toString() {
            return "Reclaim";
        }
    }

    /** A renew call's answer: a failure only means another process may take the messages over too. */
    private final class Renewed extends StoreReply<Void> {
        @Override
        void apply(long now) {
            if (error != null) {
                LOG.debug("pull group " + actor.path() + ": renewing redelivered messages failed", error);
            }
        }

        @Override
        public String toString() {
            return "Renewed";
        }
    }

    /** A pending check's answer (see {@link #checkPending}): a failure redelivers them all. */
    private final class Checked extends StoreReply<long[]> {
        private final long[] asked;

        Checked(long[] asked) {
            this.asked = asked;
        }

        @Override
        void apply(long now) {
            if (error != null) {
                LOG.debug("pull group " + actor.path() + ": checking timed-out messages failed (redelivered)", error);
            }
            actor.ledger.checked(asked, error == null && value != null ? value : null, now);
        }

        @Override
        public String toString() {
            return "Checked";
        }
    }

    /** A dead-letter call's answer: a failure leaves the message pending in the store. */
    private final class DeadLettered extends StoreReply<Void> {
        private final Message message;
        /** The nack that dead-lettered the message: answered now, as the synchronous path answers it in its turn. */
        private final ConsumerGroupCommand.Settle answer;

        DeadLettered(Message message, ConsumerGroupCommand.Settle answer) {
            this.message = message;
            this.answer = answer;
        }

        @Override
        void apply(long now) {
            actor.ledger.deadLetterAnswered(message.offset(), error, now);
            if (error != null) {
                LOG.warn("pull group " + actor.path() + ": dead-lettering " + message + " failed (it stays pending and"
                        + " is redelivered after the ack timeout): " + error);
                answer.fail(new MessageStoreException("pull group " + subject + "/" + group + ": dead-lettering offset "
                        + message.offset() + " failed (it stays pending and is redelivered after the ack timeout)", error));
            } else {
                actor.ledger.commitIfAdvanced();
                answer.done(actor.ledger.committedOffset());
            }
        }

        @Override
        void fail(java.util.function.Function<reactor.util.context.ContextView, Throwable> closed) {
            answer.fail(closed);
        }

        @Override
        public String toString() {
            return "DeadLettered";
        }
    }
}
