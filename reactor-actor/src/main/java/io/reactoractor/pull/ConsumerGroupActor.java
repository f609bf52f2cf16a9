package io.reactoractor.pull;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.TreeMap;

import io.reactoractor.ActorGroup;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.metrics.PullMetrics;
import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.TimerEntry;
import io.reactoractor.internal.scheduling.Turn;
import io.reactoractor.pull.ConsumerGroupCommand.Ack;
import io.reactoractor.pull.ConsumerGroupCommand.Nack;
import io.reactoractor.pull.ConsumerGroupCommand.Pull;
import io.reactoractor.pull.ConsumerGroupCommand.Release;
import io.reactoractor.pull.ConsumerGroupCommand.Settle;
import reactor.core.Exceptions;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The actor of one {@code (subject, consumer group)}: QMQ's {@code PullMessageWorker} on the fair
 * scheduler. Every pull, ack, nack and release of the group goes through its mailbox and is handled
 * in its turns, so a group's state (its delivery cursor, in-flight messages, waiting pulls) has a
 * single writer and groups are isolated from each other; however many consumers a group has, it is
 * one actor and gets one fair share.
 *
 * <h2>Long polling</h2>
 * Pulls that find no message wait in {@link WaitingPulls} (FIFO). When the actor has waiting pulls and
 * nothing to give them it <em>suspends</em> ({@link ActorCell#suspend()}) after arming one timer at the
 * earliest moment something becomes due (a pull's timeout, a redelivery's back-off, an ack timeout).
 * It is resumed by:
 * <ul>
 *   <li>an append to the subject (the store's listener): one resume per wait, however many messages
 *       arrive, because only the caller that flips {@code waitingForData} from true to false resumes;</li>
 *   <li>the timer firing;</li>
 *   <li>any new command (a pull, an ack...), which must not wait for data to be handled.</li>
 * </ul>
 * A waiting pull whose deadline passed is answered {@code TIMED_OUT}; one whose Mono was cancelled is
 * dropped. Nothing is left unanswered: termination answers every waiting pull with an error.
 *
 * <h2>Wait state ({@code waitingForData}, changed by CAS; the suspension itself is the cell's count)</h2>
 * <pre>
 *   state                | event (thread)                       | next state / action
 *   ---------------------+--------------------------------------+------------------------------------------
 *   running (flag false) | turn ends, waiters, nothing servable | cell.suspend(), then flag false->true,
 *                        | (actor)                              | then re-check servable/commands: if so and
 *                        |                                      | flag true->false wins, cell.resume()
 *   waiting (flag true)  | append / timer / command (any)       | flag true->false wins: cell.resume()
 *                        |                                      | (re-schedules the actor); losers do nothing
 *   any                  | terminate (any)                      | cell terminates; drainTerminated answers all
 * </pre>
 * Suspending <em>before</em> publishing the flag closes the lost-wake-up window: a waker that runs
 * before the flag is set changed the state first (appended, posted a command), so the actor's
 * re-check after setting the flag sees it.
 *
 * <h2>At-least-once bookkeeping (actor thread only)</h2>
 * {@code nextOffset} is the first offset never delivered. A delivered, unacknowledged message is an
 * {@link InFlight} in {@code pending} (by offset). An ack removes it; a nack applies the failure policy;
 * a release (consumer cancelled) or an ack timeout re-queues it in {@code redeliver} (by due time),
 * from where it is delivered ahead of new messages. The committed offset is the smallest pending
 * offset, or {@code nextOffset} when nothing is pending: everything before it was acknowledged.
 *
 * <h2>Idle retirement ({@code entry}: posts in progress, or {@code RETIRED}; changed by CAS)</h2>
 * An actor with no waiting pull, nothing in flight, no attached reactive consumer and no command for
 * the consumer's {@linkplain PullConsumer.Builder#idleTimeout idle timeout} retires: it leaves the
 * consumer's registries and its meters are removed; the committed offset stays in the store (nothing
 * is in flight, so it equals the delivery cursor), and the next call for the pair creates a new actor
 * that starts there.
 * <pre>
 *   entry      | event (thread)                          | next / action
 *   -----------+-----------------------------------------+-------------------------------------------
 *   n &gt;= 0     | tryPost / tryAttach (any)               | n+1; offer the command (or count the
 *              |                                         | consumer); n-1; signal
 *   0          | idle timeout, idle (actor)              | RETIRED; then if a command or consumer
 *              |                                         | slipped in before the CAS: back to 0, go on;
 *              |                                         | else unbind meters, terminate, leave registries
 *   n &gt; 0      | idle timeout (actor)                    | CAS fails: a post is in progress, its
 *              |                                         | command will keep the actor busy
 *   RETIRED    | tryPost / tryAttach (any)               | refused: the caller asks the consumer for the
 *              |                                         | pair's actor again (a new one once removed)
 * </pre>
 * A post holds {@code entry} above zero from before its offer until after it, so the actor's CAS to
 * {@code RETIRED} (which needs zero) is ordered after every completed offer: the emptiness check that
 * follows the CAS sees each command posted before, and no post starts after it.
 *
 * <h2>Asynchronous store ({@link AsyncMessageStore}: {@code remote != null})</h2>
 * With a synchronous {@link MessageStore} the actor reads and commits in its turn. With an
 * asynchronous one it never waits: it issues a call and goes on; the call's {@link StoreReply} is
 * posted to its own mailbox when the Mono completes (on whatever thread completes it, typically the
 * store's I/O thread, which does nothing but the post), and its result is applied in a later turn of
 * the actor (Zeebe's {@code runOnCompletion}). While a pull waits only for a store call, nothing is
 * servable ({@link #hasData} is false while {@code fetching}), so the actor suspends as for data; the
 * reply's post resumes it. At most one call of each kind is outstanding; new messages fetched are kept
 * in {@code fetched} (in this process's name in the store) until a pull takes them.
 * <pre>
 *   call          | issued (actor turn, end)                     | reply applied (actor turn)
 *   --------------+----------------------------------------------+---------------------------------------
 *   fetch         | pulls wait, {@code fetched} empty, maybeMore,| fetching=false; messages to fetched;
 *                 | not fetching: fetching=true, maybeMore=false | a full batch sets maybeMore; an error
 *                 | (an append listener or a new pull sets       | fails every waiting pull
 *                 | maybeMore again, any thread)                 | ({@link MessageStoreException})
 *   acknowledge   | acks / ack-on-delivery / commit pending, not | acking=false; the acks it carried are
 *                 | acking: one call with every offset gathered  | answered (committed offset) or failed
 *   reclaim       | pulls wait, now &gt;= nextReclaimAt, not       | messages not already in this process
 *                 | reclaiming                                   | are queued for redelivery (due now)
 *   renew         | a pull is answered with redeliveries         | a failure is logged (another process
 *                 | (restarts their idle clock in the store)     | may take them over too: a duplicate)
 *   dead letter   | a nack's policy dead-letters a message       | a failure is logged: the message stays
 *                 |                                              | pending in the store, reclaimed later
 * </pre>
 * A pull never waits past its deadline for a call: the deadline timer answers it {@code TIMED_OUT}
 * whatever is outstanding, and a late fetch's messages stay in {@code fetched} for the next pull. The
 * actor does not retire while a call is outstanding or acks wait for one ({@link #idle}).
 */
final class ConsumerGroupActor extends ActorCell {

    private static final Logger LOG = Loggers.getLogger(ConsumerGroupActor.class);
    private static final VarHandle WAITING_FOR_DATA;
    private static final VarHandle ENTRY;
    /** {@code entry} of a retired actor: no post or consumer may enter any more. */
    private static final int RETIRED = Integer.MIN_VALUE;
    /** Async store: the most messages one fetch or reclaim asks for. */
    private static final int MAX_FETCH = 1024;

    static {
        try {
            WAITING_FOR_DATA = MethodHandles.lookup().findVarHandle(ConsumerGroupActor.class, "waitingForData", boolean.class);
            ENTRY = MethodHandles.lookup().findVarHandle(ConsumerGroupActor.class, "entry", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final String subject;
    final String group;
    private final ConsumerGroupSettings settings;
    private final ActorGroup schedulingGroupHandle;
    /** The synchronous store, or {@code null} when {@link #remote} is used. */
    private final MessageStore store;
    /** The asynchronous store, or {@code null} when {@link #store} is used. */
    private final AsyncMessageStore remote;
    /** Offsets of the asynchronous store are dense: a gap before a fetched message was retention. */
    private final boolean denseRemote;
    /** How often waiting pulls make the actor reclaim long-unacknowledged messages (async store). */
    private final long reclaimIntervalNanos;
    private final long ackTimeoutNanos;
    private final int maxWaitingPulls;
    private final long maxBytesPerPull;
    private final long idleTimeoutNanos;
    private final PullMetrics.GroupRecorder recorder;
    /** Held here because Micrometer keeps only weak references to the objects its function meters read. */
    private final java.util.function.Supplier<GroupStats> statsSupplier = this::stats;

    private final MpscChunkedArrayQueue<ConsumerGroupCommand> commands = new MpscChunkedArrayQueue<>();
    private final Tick tick = new Tick();

    // ---- actor-confined
    private final WaitingPulls waiting = new WaitingPulls();
    private final TreeMap<Long, InFlight> pending = new TreeMap<>();
    private final PriorityQueue<InFlight> redeliver = new PriorityQueue<>(InFlight.BY_DUE);
    private final ArrayDeque<AckDeadline> ackOrder = new ArrayDeque<>();
    // ---- actor-confined, asynchronous store only (see the store table)
    private final ArrayDeque<io.reactoractor.pull.Message> fetched = new ArrayDeque<>();
    /** The offset after the last message fetched, or -1 before the first one. */
    private long fetchCursor = -1;
    /** Messages retention dropped before a fetch reached them, told to the next pull answered. */
    private long skipCarry;
    private boolean acking;
    private boolean reclaiming;
    /** Offsets acknowledged while a reclaim was outstanding: its answer must not bring them back. */
    private final java.util.HashSet<Long> ackedWhileReclaiming = new java.util.HashSet<>();
    private long reclaimCursor;
    private long nextReclaimAt;
    /** Offsets acknowledged since the last acknowledge call. */
    private long[] toAck = new long[16];
    private int toAckCount;
    /** Whether the committed offset moved since the last acknowledge call. */
    private boolean commitDirty;
    /** Acks answered when the next acknowledge call completes. */
    private List<Settle> ackWaiters = new ArrayList<>();
    /** Store calls outstanding (the actor does not retire while one is). */
    private int outstanding;
    private long armedAt = Long.MAX_VALUE;
    /** When the actor last handled a pull, an ack, a nack or a release (the idle clock). */
    private long lastActive;
    private boolean metricsUnbound;

    // ---- written by the actor, read by any thread (hasWork, stats)
    private volatile long nextOffset;
    private volatile long nextRedeliveryDue = Long.MAX_VALUE;
    /** Only the actor writes it (volatile for stats); commits are monotonic. */
    private volatile long committedOffset;
    private volatile int inFlight;
    private volatile boolean waitingForData;
    /** Async store: a fetch is outstanding (written by the actor, read by {@link #hasData}). */
    private volatile boolean fetching;
    /** Async store: the store may hold messages not fetched yet (set by listeners and pulls). */
    private volatile boolean maybeMore = true;
    /** Async store: {@code fetched.size()}, for {@link #hasData} on other threads. */
    private volatile int buffered;
    /** Async store: the end offset last heard of (an append listener or a fetch), for stats. */
    private volatile long knownEnd;
    /** Posts in progress, or {@link #RETIRED} (see the retirement table). */
    private volatile int entry;
    /** Reactive consumers attached ({@link PullConsumer#consume}); an actor with one never retires. */
    private final java.util.concurrent.atomic.AtomicInteger consumers = new java.util.concurrent.atomic.AtomicInteger();
    /** Test seam: runs in {@link #maybeSuspend()} between the suspension and publishing the flag. */
    static volatile Runnable afterSuspendForTest;

    final ConsumerGroupCounters counters = new ConsumerGroupCounters();


    ConsumerGroupActor(ConsumerGroupSettings settings, ActorGroup schedulingGroup, String subject, String group) {
        super(Internals.engine(schedulingGroup), Internals.schedulingGroup(schedulingGroup), schedulingGroup.name() + "/" + subject, 1);
        this.settings = settings;
        this.schedulingGroupHandle = schedulingGroup;
        this.store = settings.syncStore;
        this.remote = store == null ? settings.asyncStore : null;
        this.denseRemote = remote != null && remote.denseOffsets();
        this.reclaimIntervalNanos = Math.max(settings.ackTimeoutNanos, 1_000_000L);
        this.subject = subject;
        this.group = group;
        this.ackTimeoutNanos = settings.ackTimeoutNanos;
        this.maxWaitingPulls = settings.maxWaitingPulls;
        this.maxBytesPerPull = settings.maxBytesPerPull;
        this.idleTimeoutNanos = settings.idleTimeoutNanos;
        this.lastActive = System.nanoTime();
        if (store != null) {
            store.ensureSubject(subject);
            long committed = store.committedOffset(subject, group);
            long start = committed >= 0 ? Math.max(committed, store.startOffset(subject)) : store.startOffset(subject);
            this.nextOffset = start;
            this.committedOffset = start;
        } else {
            // the store keeps the group's position: the first fetch tells where it stands
            this.nextReclaimAt = lastActive;
        }
        this.recorder = settings.metrics.bindGroup(subject, group, statsSupplier);
    }

    // ================================================================== any thread

    /** Acknowledges offsets without waiting for the answer (a consumer's ack). */
    void acknowledge(long... offsets) {
        post(new Ack(offsets, committed -> { }, error -> { }));
    }

    /** Reports a failed offset without waiting for the answer (a consumer's nack). */
    void reject(long offset, FailurePolicy policy) {
        post(new Nack(offset, policy, committed -> { }, error -> { }));
    }

    /**
     * Hands a command to the actor; answers it with an error if the actor is terminated. Used where
     * the caller holds the actor (a consumer's ack or release): a retired actor had nothing in flight
     * and no consumer, so such a command has nothing left to act on and is answered "closed".
     */
    void post(ConsumerGroupCommand c) {
        if (!tryPost(c)) {
            c.fail(new IllegalStateException("pull group " + subject + "/" + group + " retired (idle)"));
        }
    }

    /**
     * Hands a command to the actor unless it retired (see the retirement table).
     *
     * @return {@code false} if the actor retired: ask the consumer for the pair's actor again
     */
    boolean tryPost(ConsumerGroupCommand c) {
        if (!enter()) {
            return false;
        }
        try {
            commands.offer(c);
        } finally {
            exit();
        }
        wakeFromDataWait();
        // if terminated, signal() drains: drainTerminated answers what is left, possibly this command
        signal();
        return true;
    }

    /** Attaches a reactive consumer: the actor does not retire until it {@linkplain #detach detaches}. */
    boolean tryAttach() {
        if (!enter()) {
            return false;
        }
        consumers.incrementAndGet();
        exit();
        return true;
    }

    /** A reactive consumer ended (cancelled or terminated); called once per {@link #tryAttach}. */
    void detach() {
        consumers.decrementAndGet();
        signal(); // re-evaluates the idle timer
    }

    private boolean enter() {
        for (;;) {
            int e = entry;
            if (e == RETIRED) {
                return false;
            }
            if (ENTRY.compareAndSet(this, e, e + 1)) {
                return true;
            }
        }
    }

    private void exit() {
        ENTRY.getAndAdd(this, -1);
    }

    /** @return the scheduler group the actor runs in ({@code cg.<group>}) */
    ActorGroup schedulingGroupHandle() {
        return schedulingGroupHandle;
    }

    /** @return whether the actor retired (it is being, or has been, removed from its consumer) */
    boolean isRetired() {
        return entry == RETIRED;
    }

    /**
     * The store appended to our subject: resume if we are waiting for data (coalesced: only the
     * caller that clears the flag resumes). Otherwise, if pulls wait, signal: the notification may be
     * stale (its appender was descheduled between writing the end offset and notifying, and the
     * actor already served that message, suspended again, and was resumed by this very stale call
     * with nothing to do), so the actor can be idle, not suspended, with pulls waiting; a later
     * append must still reach it. {@code signal()} is a volatile read when the actor is scheduled.
     */
    void appended(long endOffset) {
        if (remote != null) {
            maybeMore = true; // before the wake-up: the woken actor must see it
            if (endOffset > knownEnd) {
                knownEnd = endOffset; // racy max: for stats only
            }
        }
        if (!wakeFromDataWait() && waiting.count() > 0) {
            signal();
        }
    }

    /** @return {@code true} if this call ended the wait for data (and resumed the actor) */
    private boolean wakeFromDataWait() {
        if (waitingForData && WAITING_FOR_DATA.compareAndSet(this, true, false)) {
            counters.resumes.increment();
            resume();
            return true;
        }
        return false;
    }

    @Override
    protected boolean hasWork() {
        if (!commands.isEmpty()) {
            return true;
        }
        if (isTerminated()) {
            return false;
        }
        return waiting.count() > 0 && servable(System.nanoTime());
    }

    /** Whether nothing would be lost or kept waiting if the actor retired now (actor thread). */
    private boolean idle() {
        return waiting.isEmpty() && pending.isEmpty() && commands.isEmpty() && consumers.get() == 0
                && outstanding == 0 && ackWaiters.isEmpty() && toAckCount == 0;
    }

    /** Whether a waiting pull could be answered now (any thread; reads volatile state only). */
    private boolean servable(long now) {
        return hasData(now) || waiting.earliestDeadline() <= now;
    }

    /** Whether a message could be handed out now: a new one in the store or a redelivery that is due. */
    private boolean hasData(long now) {
        if (store != null) {
            return store.endOffset(subject) > nextOffset || nextRedeliveryDue <= now;
        }
        return buffered > 0 || (maybeMore && !fetching) || nextRedeliveryDue <= now;
    }

    /** @return the subject's end offset: the store's, or the last heard of (async store) */
    private long endOffset() {
        return store != null ? store.endOffset(subject) : Math.max(knownEnd, nextOffset);
    }

    @Override
    public int pendingWork() {
        return commands.size() + waiting.count();
    }

    /** A snapshot of the actor's scheduling state, for diagnostics (racy by nature). */
    @Override
    public String toString() {
        long earliestDeadline = waiting.earliestDeadline();
        return "ConsumerGroupActor[" + subject + "/" + group + ", scheduled=" + isScheduled() + ", suspends="
                + suspendCount() + ", waitingForData=" + waitingForData + ", waiting=" + waiting.count()
                + ", commands=" + commands.size() + ", nextOffset=" + nextOffset + ", end="
                + endOffset() + ", fetching=" + fetching + ", earliestDeadlineIn=" + (earliestDeadline == Long.MAX_VALUE
                ? "none" : (earliestDeadline - System.nanoTime()) / 1000 + "us") + "]";
    }

    GroupStats stats() {
        long end = endOffset();
        long committed = committedOffset;
        long n = counters.pulls.sum();
        // offsets with gaps (Redis entry IDs) do not count messages: the lag is then what this process
        // holds (fetched, not yet acknowledged); the group's own lag is the store's position()
        long lag = store != null || denseRemote ? Math.max(0, end - committed) : (long) buffered + inFlight;
        return new GroupStats(subject, group, group().name(), end, committed, lag,
                waiting.count(), inFlight, isSuspended(), n, counters.pullsTimedOut.sum(), counters.pullsExpired.sum(),
                counters.suspends.sum(), counters.resumes.sum(), counters.delivered.sum(), counters.acknowledged.sum(), counters.redelivered.sum(),
                counters.skipped.sum(), counters.deadLettered.sum(), counters.evicted.sum(), counters.meanQueueTimeNanos(n));
    }

    // ================================================================== the turn (actor thread)

    @Override
    protected void runTurn(Turn turn) {
        long now;
        ConsumerGroupCommand c;
        while (turn.shouldContinue() && (c = commands.poll()) != null) {
            turn.beginTask();
            try {
                now = System.nanoTime();
                if (c != TICK) {
                    lastActive = now;
                }
                handle(c, now);
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                LOG.error("pull group " + path() + ": command " + c + " failed", t);
                c.fail(t);
            } finally {
                turn.endTask();
            }
        }
        // always: expiry, timer and suspension follow every turn; serve() answers each pull as a task of
        // its own (answers run downstream code), so it stops at the quota like any message loop
        now = System.nanoTime();
        sweepAckTimeouts(now);
        serve(turn, now);
        commitIfAdvanced();
        if (remote != null) {
            callStore(now);
        }
        if (idleTimeoutNanos > 0 && idle() && now - lastActive >= idleTimeoutNanos && tryRetire()) {
            return;
        }
        armTimer();
        maybeSuspend();
    }

    /**
     * Retires an idle actor (see the retirement table): refuses new posts, re-checks that none
     * slipped in, removes the meters, terminates and leaves the consumer's registries.
     *
     * @return {@code true} if the actor retired
     */
    private boolean tryRetire() {
        if (!ENTRY.compareAndSet(this, 0, RETIRED)) {
            return false; // a post is in progress: its command keeps us busy
        }
        if (!idle()) {
            ENTRY.setVolatile(this, 0); // a command or a consumer arrived before the CAS
            return false;
        }
        if (armedAt != Long.MAX_VALUE) {
            engine().cancelTimer(tick);
            armedAt = Long.MAX_VALUE;
        }
        // the meters go before the registry entry, so a successor's meters are never removed by us
        metricsUnbound = true;
        settings.metrics.unbindGroup(subject, group);
        terminate();
        settings.retired.accept(this);
        return true;
    }

    private void handle(ConsumerGroupCommand c, long now) {
        if (c instanceof Pull p) {
            counters.pulls.increment();
            long queued = now - p.createdNanos;
            counters.queueTimeNanos.add(queued);
            recorder.pullQueued(queued);
            if (p.cancelled) {
                return;
            }
            if (p.timeoutNanos > 0 && p.deadline <= now) {
                // it expired in the mailbox (the actor was busy or starved): an explicit answer, never none
                counters.pullsExpired.increment();
                counters.pullsTimedOut.increment();
                answer(p, PullResult.Status.TIMED_OUT, List.of(), null);
                return;
            }
            if (waiting.size() >= maxWaitingPulls) {
                p.fail(new IllegalStateException("pull group " + subject + "/" + group + " has "
                        + waiting.size() + " waiting pulls, the maximum (maxWaitingPulls)"));
                return;
            }
            waiting.add(p);
            if (remote != null) {
                maybeMore = true; // another process may have appended: a pull always asks the store
            }
        } else if (c instanceof Ack a) {
            for (long offset : a.offsets) {
                InFlight f = pending.get(offset);
                if (f != null && f.state != InFlight.DONE) {
                    settle(f);
                }
                if (remote != null) {
                    // every offset, known here or not: another process may have delivered it
                    addToAck(offset);
                    if (reclaiming) {
                        ackedWhileReclaiming.add(offset); // the reclaim's answer may still hold it
                    }
                }
            }
            commitIfAdvanced();
            if (remote != null) {
                ackWaiters.add(a); // answered when the store has recorded it
            } else {
                a.done(committedOffset);
            }
        } else if (c instanceof StoreReply<?> r) {
            outstanding--;
            r.apply(now);
        } else if (c instanceof Nack n) {
            InFlight f = pending.get(n.offset);
            if (f != null && f.state == InFlight.DELIVERED) {
                applyFailurePolicy(f, n.policy, now);
            }
            commitIfAdvanced();
            n.done(committedOffset);
        } else if (c instanceof Release r) {
            for (InFlight f : pending.values()) {
                if (f.state == InFlight.DELIVERED && f.consumerId == r.consumerId) {
                    requeue(f, now);
                }
            }
        } else if (c == TICK) {
            armedAt = Long.MAX_VALUE; // the timer fired and is no longer armed
        }
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

    private void applyFailurePolicy(InFlight f, FailurePolicy policy, long now) {
        switch (policy.kind()) {
            case SKIP:
                counters.skipped.increment();
                settle(f);
                break;
            case RETRY_FOREVER:
                requeue(f, now + policy.backoff().toNanos());
                break;
            case RETRY_THEN_DEAD_LETTER:
            default:
                if (f.attempts >= policy.maxAttempts()) {
                    if (store != null) {
                        store.append(FailurePolicy.deadLetterSubject(group), f.message.payload());
                    } else {
                        call(remote.deadLetter(subject, group, f.message), new DeadLettered(f.message));
                    }
                    counters.deadLettered.increment();
                    settle(f);
                } else {
                    requeue(f, now + policy.backoff().toNanos());
                }
                break;
        }
    }

    private void requeue(InFlight f, long due) {
        f.state = InFlight.QUEUED;
        f.due = due;
        f.generation++;
        redeliver.add(f);
        updateRedeliveryDue();
    }

    private void sweepAckTimeouts(long now) {
        AckDeadline d;
        while ((d = ackOrder.peekFirst()) != null && d.deadline <= now) {
            ackOrder.pollFirst();
            if (d.flight.generation == d.generation && d.flight.state == InFlight.DELIVERED) {
                requeue(d.flight, now);
            }
        }
    }

    /**
     * Answers the waiting pulls that can be answered: expired ones ({@code TIMED_OUT}), then as many
     * as there are messages for, in FIFO order, then pull-once requests that found nothing
     * ({@code EMPTY}). Each answer is a task of the turn; at least one answer per turn is given
     * whatever the quota (progress), the rest stop at the quota and continue next turn
     * ({@link #servable} keeps the actor scheduled while something is answerable).
     */
    private void serve(Turn turn, long now) {
        int answered = 0;
        for (Iterator<Pull> it = waiting.iterator(); it.hasNext(); ) {
            Pull p = it.next();
            if (p.cancelled) {
                it.remove();
            } else if (p.timeoutNanos > 0 && p.deadline <= now) {
                if (answered > 0 && !turn.shouldContinue()) {
                    break;
                }
                it.remove();
                counters.pullsTimedOut.increment();
                answerAsTask(turn, p, PullResult.Status.TIMED_OUT, List.of(), null);
                answered++;
            }
        }
        while (!waiting.isEmpty() && (answered == 0 || turn.shouldContinue())) {
            Pull p = waiting.peekFirst();
            if (p.cancelled) {
                waiting.pollFirst();
                continue;
            }
            List<InFlight> batch = take(p, now);
            if (batch.isEmpty()) {
                break;
            }
            waiting.pollFirst();
            List<io.reactoractor.pull.Message> messages = new ArrayList<>(batch.size());
            int[] attempts = new int[batch.size()];
            for (int i = 0; i < batch.size(); i++) {
                messages.add(batch.get(i).message);
                attempts[i] = batch.get(i).attempts;
            }
            answerAsTask(turn, p, PullResult.Status.MESSAGES, messages, attempts);
            answered++;
        }
        if (!waiting.isEmpty() && !hasData(now) && !fetching) {
            // pull-once requests never wait (but for an outstanding fetch): nothing to give them now means EMPTY now
            for (Iterator<Pull> it = waiting.iterator(); it.hasNext(); ) {
                Pull p = it.next();
                if (p.timeoutNanos == 0) {
                    it.remove();
                    answerAsTask(turn, p, PullResult.Status.EMPTY, List.of(), null);
                }
            }
        }
        waiting.publish();
    }

    /** Answers as one task of the turn: the quota, hog detection and error accounting apply to it. */
    private void answerAsTask(Turn turn, Pull p, PullResult.Status status, List<io.reactoractor.pull.Message> messages,
            int[] attempts) {
        turn.beginTask();
        try {
            answer(p, status, messages, attempts);
        } finally {
            turn.endTask();
        }
    }

    private void answer(Pull p, PullResult.Status status, List<io.reactoractor.pull.Message> messages, int[] attempts) {
        try {
            p.answer(new PullResult(subject, group, status, messages, settings.epoch(), p.skipped), attempts);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.error("pull group " + path() + ": answering a pull failed", t);
        }
    }

    /**
     * Takes up to {@code p.max} messages and {@link #maxBytesPerPull} payload bytes: due redeliveries
     * first, then new ones from the store. The first message is taken whatever its size, so every
     * answer makes progress; a message that would exceed the budget stays for the next pull.
     */
    private List<InFlight> take(Pull p, long now) {
        List<InFlight> out = new ArrayList<>();
        long bytes = 0;
        InFlight f;
        int redeliveries = 0;
        while (out.size() < p.max && (f = redeliver.peek()) != null && f.due <= now) {
            if (f.state != InFlight.QUEUED) {
                redeliver.poll();
                continue; // acknowledged meanwhile
            }
            long size = f.message.payload().length;
            if (!out.isEmpty() && bytes + size > maxBytesPerPull) {
                updateRedeliveryDue();
                return out;
            }
            redeliver.poll();
            bytes += size;
            counters.redelivered.increment();
            deliver(f, p, now);
            out.add(f);
            redeliveries++;
        }
        updateRedeliveryDue();
        if (remote != null && redeliveries > 0) {
            renew(out, redeliveries);
        }
        if (remote != null) {
            takeFetched(p, now, out, bytes);
        } else if (out.size() < p.max && store.endOffset(subject) > nextOffset) {
            long from = nextOffset;
            List<io.reactoractor.pull.Message> read = store.read(subject, from, p.max - out.size());
            long first = read.isEmpty() ? Math.max(from, store.startOffset(subject)) : read.get(0).offset();
            if (first > from) {
                // dropped by retention before this group read them: counted, and said in the answer
                counters.evicted.add(first - from);
                p.skipped += first - from;
                nextOffset = first;
            }
            for (io.reactoractor.pull.Message m : read) {
                long size = m.payload().length;
                if (!out.isEmpty() && bytes + size > maxBytesPerPull) {
                    break;
                }
                bytes += size;
                InFlight n = new InFlight(m);
                deliver(n, p, now);
                out.add(n);
                nextOffset = m.offset() + 1;
            }
        }
        return out;
    }

    /** Async store: restarts the store's idle clock of the first {@code n} messages of {@code out}. */
    private void renew(List<InFlight> out, int n) {
        long[] offsets = new long[n];
        for (int i = 0; i < n; i++) {
            offsets[i] = out.get(i).message.offset();
        }
        call(remote.renew(subject, group, offsets), new Renewed());
    }

    /** Async store: takes fetched messages into {@code out} (see {@link #take}). */
    private void takeFetched(Pull p, long now, List<InFlight> out, long bytes) {
        io.reactoractor.pull.Message m;
        while (out.size() < p.max && (m = fetched.peekFirst()) != null) {
            long size = m.payload().length;
            if (!out.isEmpty() && bytes + size > maxBytesPerPull) {
                break;
            }
            fetched.pollFirst();
            bytes += size;
            InFlight n = new InFlight(m);
            deliver(n, p, now);
            out.add(n);
            nextOffset = Math.max(nextOffset, m.offset() + 1);
        }
        if (skipCarry > 0 && !out.isEmpty()) {
            p.skipped += skipCarry;
            skipCarry = 0;
        }
        buffered = fetched.size();
    }

    private void addToAck(long offset) {
        if (toAckCount == toAck.length) {
            toAck = java.util.Arrays.copyOf(toAck, toAckCount * 2);
        }
        toAck[toAckCount++] = offset;
    }

    /**
     * Async store, end of a turn: issues the calls the state asks for (see the store table), at most
     * one of each kind outstanding.
     */
    private void callStore(long now) {
        if (!fetching && maybeMore && fetched.isEmpty() && !waiting.isEmpty()) {
            int want = waiting.wanted(MAX_FETCH);
            fetching = true;
            maybeMore = false;
            call(remote.fetch(subject, group, fetchCursor, want), new Fetched(fetchCursor, want));
        }
        if (!acking && (toAckCount > 0 || commitDirty)) {
            acking = true;
            long[] offsets = java.util.Arrays.copyOf(toAck, toAckCount);
            toAckCount = 0;
            if (toAck.length > 1024) {
                toAck = new long[16]; // a burst's array is not kept
            }
            commitDirty = false;
            List<Settle> waiters = ackWaiters;
            ackWaiters = new ArrayList<>();
            call(remote.acknowledge(subject, group, offsets, committedOffset), new Acked(waiters));
        }
        if (!reclaiming && !waiting.isEmpty() && now >= nextReclaimAt) {
            reclaiming = true;
            for (int i = 0; i < toAckCount; i++) {
                ackedWhileReclaiming.add(toAck[i]); // settled here, XACK not sent yet (one is outstanding)
            }
            call(remote.reclaim(subject, group, reclaimCursor, java.time.Duration.ofNanos(ackTimeoutNanos), MAX_FETCH),
                    new Reclaim());
        }
    }

    /** Subscribes {@code reply} to a store call: it is posted back to this actor when the call ends. */
    private <T> void call(reactor.core.publisher.Mono<T> mono, StoreReply<T> reply) {
        outstanding++;
        try {
            mono.subscribe(reply);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            reply.onError(t); // a store that throws instead of failing its Mono
        }
    }

    /** Fails every waiting pull: the store could not answer what they wait for. */
    private void failWaiting(Throwable error) {
        MessageStoreException e = new MessageStoreException("pull group " + subject + "/" + group
                + ": the message store failed", error);
        waiting.failAll(e);
    }

    private void deliver(InFlight f, Pull p, long now) {
        f.attempts++;
        f.consumerId = p.consumerId;
        counters.delivered.increment();
        if (p.ackOnDelivery) {
            if (f.state != InFlight.NEW) {
                pending.remove(f.message.offset());
            }
            f.state = InFlight.DONE;
            counters.acknowledged.increment();
            if (remote != null) {
                addToAck(f.message.offset());
            }
        } else {
            f.state = InFlight.DELIVERED;
            f.generation++;
            pending.put(f.message.offset(), f);
            ackOrder.addLast(new AckDeadline(f, f.generation, now + ackTimeoutNanos));
        }
        inFlight = pending.size();
    }

    private void updateRedeliveryDue() {
        InFlight head;
        while ((head = redeliver.peek()) != null && head.state != InFlight.QUEUED) {
            redeliver.poll();
        }
        nextRedeliveryDue = head == null ? Long.MAX_VALUE : head.due;
    }

    private void commitIfAdvanced() {
        long committed = pending.isEmpty() ? nextOffset : Math.min(pending.firstKey(), nextOffset);
        if (committed > committedOffset) {
            committedOffset = committed;
            if (store != null) {
                store.commit(subject, group, committed);
            } else {
                commitDirty = true;
            }
        }
    }

    /** One timer for everything time-based: the earliest pull deadline, redelivery or ack timeout. */
    private void armTimer() {
        long deadline = Long.MAX_VALUE;
        if (!waiting.isEmpty()) {
            deadline = Math.min(waiting.earliestDeadline(), nextRedeliveryDue);
            if (remote != null && !reclaiming) {
                deadline = Math.min(deadline, nextReclaimAt);
            }
        }
        AckDeadline head = ackOrder.peekFirst();
        if (head != null) {
            deadline = Math.min(deadline, head.deadline);
        }
        if (deadline == Long.MAX_VALUE && idleTimeoutNanos > 0 && idle()) {
            long idleDeadline = lastActive + idleTimeoutNanos;
            if (armedAt <= idleDeadline) {
                // an earlier tick is armed: when it fires, the turn re-arms for the idle deadline; this
                // saves re-arming the timer on every call of a busy pair that stays idle between calls
                return;
            }
            deadline = idleDeadline;
        }
        if (deadline == Long.MAX_VALUE) {
            if (armedAt != Long.MAX_VALUE) {
                engine().cancelTimer(tick); // data arrived: the wait is over, so is its timer
                armedAt = Long.MAX_VALUE;
            }
        } else if (deadline != armedAt) {
            armedAt = deadline;
            engine().scheduleTimer(tick, deadline);
        }
    }

    /** Suspends while pulls wait and nothing can be given to them (see the class comment). */
    private void maybeSuspend() {
        if (waiting.isEmpty() || !commands.isEmpty() || servable(System.nanoTime())) {
            return;
        }
        suspend();
        Runnable hook = afterSuspendForTest;
        if (hook != null) {
            hook.run();
        }
        if (!WAITING_FOR_DATA.compareAndSet(this, false, true)) {
            resume();
            return;
        }
        counters.suspends.increment();
        if ((!commands.isEmpty() || servable(System.nanoTime()))
                && WAITING_FOR_DATA.compareAndSet(this, true, false)) {
            // something arrived while we were suspending (an append that saw no flag yet signalled
            // instead of resuming): the wait ends here, and counts as a resume like any other
            counters.resumes.increment();
            resume();
        }
    }

    @Override
    protected void drainTerminated() {
        engine().cancelTimer(tick);
        IllegalStateException closed = new IllegalStateException("pull consumer closed: group " + subject
                + "/" + group + " no longer serves pulls");
        ConsumerGroupCommand c;
        while ((c = commands.poll()) != null) {
            c.fail(closed);
        }
        waiting.failAll(closed);
        for (Settle s : ackWaiters) {
            s.fail(closed);
        }
        ackWaiters.clear();
        if (!metricsUnbound) {
            metricsUnbound = true;
            settings.metrics.unbindGroup(subject, group);
        }
    }

    // ================================================================== commands

    /**
     * The answer of a store call, posted to the actor by the thread that completes the call's Mono
     * (see the store table); {@link #apply} runs in the actor's turn. One subscriber per call.
     */
    private abstract class StoreReply<T> extends ConsumerGroupCommand implements reactor.core.CoreSubscriber<T> {
        T value;
        Throwable error;
        private boolean done;

        @Override
        public void onSubscribe(org.reactivestreams.Subscription s) {
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
                post(this);
            }
        }

        @Override
        public void onComplete() {
            if (!done) {
                done = true;
                post(this);
            }
        }

        /** Applies the answer (actor thread). */
        abstract void apply(long now);

        @Override
        void fail(Throwable closed) {
            // the actor terminated before applying the answer
        }
    }

    /** A fetch's answer. */
    private final class Fetched extends StoreReply<List<io.reactoractor.pull.Message>> {
        private final long from;
        private final int wanted;

        Fetched(long from, int wanted) {
            this.from = from;
            this.wanted = wanted;
        }

        @Override
        void apply(long now) {
            fetching = false;
            if (error != null) {
                maybeMore = true; // ask again with the next pull
                failWaiting(error);
                return;
            }
            List<io.reactoractor.pull.Message> got = value == null ? List.of() : value;
            if (!got.isEmpty()) {
                long first = got.get(0).offset();
                if (denseRemote && from >= 0 && first > from) {
                    // dropped by retention before this group read them
                    counters.evicted.add(first - from);
                    skipCarry += first - from;
                }
                fetched.addAll(got);
                buffered = fetched.size();
                fetchCursor = got.get(got.size() - 1).offset() + 1;
                if (fetchCursor > knownEnd) {
                    knownEnd = fetchCursor;
                }
                if (got.size() >= wanted) {
                    maybeMore = true;
                }
            }
        }

        @Override
        public String toString() {
            return "Fetched";
        }
    }

    /** An acknowledge call's answer: answers the acks it carried. */
    private final class Acked extends StoreReply<Void> {
        private final List<Settle> waiters;

        Acked(List<Settle> waiters) {
            this.waiters = waiters;
        }

        @Override
        void apply(long now) {
            acking = false;
            if (error != null) {
                // settled here, still pending in the store: reclaimed and redelivered later
                MessageStoreException e = new MessageStoreException("pull group " + subject + "/" + group
                        + ": acknowledgement not recorded", error);
                for (Settle s : waiters) {
                    s.fail(e);
                }
            } else {
                for (Settle s : waiters) {
                    s.done(committedOffset);
                }
            }
        }

        @Override
        void fail(Throwable closed) {
            for (Settle s : waiters) {
                s.fail(closed);
            }
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
                LOG.debug("pull group " + path() + ": reclaim failed", error);
                return;
            }
            AsyncMessageStore.Reclaimed r = value;
            if (r == null) {
                return;
            }
            reclaimCursor = r.cursor();
            for (io.reactoractor.pull.Message m : r.messages()) {
                if (pending.containsKey(m.offset()) || isFetched(m.offset())) {
                    continue; // ours already: our own ack timeout redelivers it
                }
                if (ackedWhileReclaiming.contains(m.offset())) {
                    continue; // claimed before our XACK reached the store, acknowledged since
                }
                InFlight f = new InFlight(m);
                pending.put(m.offset(), f);
                requeue(f, now);
            }
            inFlight = pending.size();
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
                LOG.debug("pull group " + path() + ": renewing redelivered messages failed", error);
            }
        }

        @Override
        public String toString() {
            return "Renewed";
        }
    }

    private boolean isFetched(long offset) {
        for (io.reactoractor.pull.Message m : fetched) {
            if (m.offset() == offset) {
                return true;
            }
        }
        return false;
    }

    /** A dead-letter call's answer: a failure leaves the message pending in the store. */
    private final class DeadLettered extends StoreReply<Void> {
        private final io.reactoractor.pull.Message message;

        DeadLettered(io.reactoractor.pull.Message message) {
            this.message = message;
        }

        @Override
        void apply(long now) {
            if (error != null) {
                LOG.warn("pull group " + path() + ": dead-lettering " + message + " failed (it stays pending and"
                        + " is redelivered after the ack timeout): " + error);
            }
        }

        @Override
        public String toString() {
            return "DeadLettered";
        }
    }

    /** Posted by the timer: something became due. */
    private static final ConsumerGroupCommand TICK = new ConsumerGroupCommand() {
        @Override
        public String toString() {
            return "Tick";
        }
    };

    /** The actor's timer: posts {@link #TICK} when due (on the timer thread). */
    private final class Tick extends TimerEntry {
        @Override
        protected void fire() {
            post(TICK);
        }

        @Override
        protected boolean awaitedOnShutdown() {
            return false; // long-poll timeouts never hold up a graceful shutdown
        }
    }

    /** An ack deadline of one delivery ({@code generation} tells stale entries apart). */
    private record AckDeadline(InFlight flight, long generation, long deadline) {
    }
}
