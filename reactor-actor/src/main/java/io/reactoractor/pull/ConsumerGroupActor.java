package io.reactoractor.pull;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

import io.reactoractor.ActorGroup;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.metrics.PullMetrics;
import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.SuspensionLatch;
import io.reactoractor.internal.scheduling.TimerEntry;
import io.reactoractor.internal.scheduling.Turn;
import io.reactoractor.pull.ConsumerGroupCommand.Ack;
import io.reactoractor.pull.ConsumerGroupCommand.Nack;
import io.reactoractor.pull.ConsumerGroupCommand.Pull;
import io.reactoractor.pull.ConsumerGroupCommand.Release;
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
 *       arrive, because only the caller that clears the {@code dataWait} latch resumes;</li>
 *   <li>the timer firing;</li>
 *   <li>any new command (a pull, an ack...), which must not wait for data to be handled.</li>
 * </ul>
 * A waiting pull whose deadline passed is answered {@code TIMED_OUT}; one whose Mono was cancelled is
 * dropped. Nothing is left unanswered: termination answers every waiting pull with an error.
 *
 * <p>While the consumer {@linkplain PullConsumer#quiesce() quiesces}, no long poll waits longer than a
 * pull-once would (at most {@link WaitingPulls#PULL_ONCE_FETCH_WAIT_NANOS} for a store fetch, from the
 * quiescence or its own start): each is answered with the messages it can get, else {@code TIMED_OUT}, and
 * the termination's drain answers a caller's long poll {@code TIMED_OUT} rather than with an error (a
 * consumer stream's pull still fails: its stream completes through its own pending signal).
 *
 * <h2>Wait state ({@code dataWait}, a {@link SuspensionLatch}; the suspension itself is the cell's count)</h2>
 * <pre>
 *   state                 | event (thread)                       | next state / action
 *   ----------------------+--------------------------------------+------------------------------------------
 *   running (latch clear) | turn ends, waiters, nothing servable | cell.suspend(), then latch clear->set,
 *                         | (actor)                              | then re-check servable/commands: if so and
 *                         |                                      | latch set->clear wins, cell.resume()
 *   waiting (latch set)   | append / timer / command (any)       | latch set->clear wins: cell.resume()
 *                         |                                      | (re-schedules the actor); losers do nothing
 *   any                   | terminate (any)                      | cell terminates; drainTerminated answers all
 * </pre>
 * The handshake is the engine's, shared with {@code Actor}'s backpressure suspension; why suspending
 * <em>before</em> setting the latch closes the lost-wake-up window is argued in {@link SuspensionLatch}.
 *
 * <h2>Parts</h2>
 * The actor is the cell (mailbox, turn loop, command dispatch, wait state, retirement, timer); the
 * rest of its state lives in package-private parts it owns, each confined to its thread unless said:
 * <ul>
 *   <li>{@link WaitingPulls}: the long polls and their earliest deadline;</li>
 *   <li>{@link AckLedger}: the at-least-once bookkeeping (delivery cursor, in-flight messages,
 *       redeliveries, ack deadlines, failure policy, committed offset);</li>
 *   <li>{@link AsyncStoreCalls}: the calls to an {@link AsyncMessageStore} and what is held between
 *       them (with its state table), {@code null} with a synchronous {@link MessageStore}, which the
 *       actor reads and commits in its turn;</li>
 *   <li>{@link ConsumerGroupCounters}: the counters behind {@link GroupStats}.</li>
 * </ul>
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
 *   RETIRED    | post (any; the caller holds the actor)  | waits until back to 0 (offers) or the actor
 *              |                                         | terminated (answered "retired")
 * </pre>
 * A post holds {@code entry} above zero from before its offer until after it, so the actor's CAS to
 * {@code RETIRED} (which needs zero) is ordered after every completed offer: the emptiness check that
 * follows the CAS sees each command posted before, and no post starts after it.
 *
 * <h2>Asynchronous store</h2>
 * While a pull waits only for a store call, nothing is servable ({@link #hasData} is false while a
 * fetch is outstanding and nothing fetched is buffered), so the actor suspends as for data; the reply's
 * post resumes it. It does not retire while a call is outstanding or acks wait for one ({@link #idle});
 * it may retire with fetched messages buffered (read-ahead): they stay pending in the store in this
 * process's name and are read again by the pair's next actor. A pull that arrives while the store says
 * it is not {@linkplain AsyncMessageStore#connected() connected} is failed at once with a
 * {@link MessageStoreException}. See {@link AsyncStoreCalls} (its store table, read-ahead, freshness).
 */
final class ConsumerGroupActor extends ActorCell {

    private static final Logger LOG = Loggers.getLogger(ConsumerGroupActor.class);
    private static final VarHandle ENTRY;
    /** {@code entry} of a retired actor: no post or consumer may enter any more. */
    private static final int RETIRED = Integer.MIN_VALUE;

    static {
        try {
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
    /** The asynchronous store's calls, or {@code null} when {@link #store} is used. */
    private final AsyncStoreCalls remote;
    private final int maxWaitingPulls;
    private final long maxBytesPerPull;
    private final long idleTimeoutNanos;
    private final PullMetrics.GroupRecorder recorder;
    /** Held here because Micrometer keeps only weak references to the objects its function meters read. */
    private final java.util.function.Supplier<GroupStats> statsSupplier = this::stats;

    private final MpscChunkedArrayQueue<ConsumerGroupCommand> commands = new MpscChunkedArrayQueue<>();
    private final Tick tick = new Tick();

    final ConsumerGroupCounters counters = new ConsumerGroupCounters();
    // ---- actor-confined (but the figures each part publishes)
    private final WaitingPulls waiting = new WaitingPulls();
    /** When a turn first saw the consumer {@linkplain PullConsumer#quiesce() quiescing}; {@code 0}: not yet. */
    private long quiescedAt;
    /** Whether {@link #drainTerminated} ran (with consumer rights: one thread at a time). */
    private boolean drained;
    /** Whether a turn ran (the actor lived under a running scheduler); written by turns, read by the drain. */
    private boolean ran;
    final AckLedger ledger;
    private long armedAt = Long.MAX_VALUE;
    /** When the actor last handled a pull, an ack, a nack or a release (the idle clock). */
    private long lastActive;
    private boolean metricsUnbound;
    /** The store refused this group's last commit for want of room (logged once per run of refusals). */
    private boolean commitRefused;
    /**
     * When a commit last failed or was refused: a quiet group with progress the store has not recorded retries
     * one idle timeout after that (armTimer), and retires once the commit succeeds.
     */
    private long lastCommitFailureAt;
    /**
     * A synchronous store's end offset when its {@code read} at the next offset came back empty although the
     * end was beyond it (a slot reserved and filled later, a gap), or {@code -1}: until the end moves or
     * {@link #emptyReadRetryAt}, there is no data to read, so the actor waits instead of reading in a loop
     * (a million empty reads a second starved the other groups). Written by the turn; read by any thread's
     * {@link #hasData} (volatile: a stale value only delays a wake-up to the retry timer).
     */
    private volatile long emptyReadEnd = -1;
    /** When a read that came back empty is tried again while pulls wait (see {@link #emptyReadEnd}). */
    private volatile long emptyReadRetryAt;
    /** How long a read that came back empty waits before it is tried again. */
    static final long EMPTY_READ_RETRY_NANOS = 10_000_000L;

    // ---- any thread
    /** The wait for data: the engine's suspend/wake handshake (one unit of suspension while set). */
    private final SuspensionLatch dataWait = new SuspensionLatch(this);
    /** Posts in progress, or {@link #RETIRED} (see the retirement table). */
    private volatile int entry;
    /** Reactive consumers attached ({@link PullConsumer#consume}); an actor with one never retires. */
    private final java.util.concurrent.atomic.AtomicInteger consumers = new java.util.concurrent.atomic.AtomicInteger();
    /** Test seam: runs in {@link #maybeSuspend()} between the suspension and setting the latch. */
    static volatile Runnable afterSuspendForTest;

    /**
     * Where a pair on a synchronous store starts: its committed offset, or the subject's start. Asks the
     * store first ({@code ensureSubject} may refuse a new subject, {@link SubjectLimitExceededException}), so
     * it is called before anything is created: the actor registers with its scheduler group as it is
     * built, and a refusal after that left a registered actor, and its group, that nothing reached.
     *
     * @return the first offset the pair delivers
     */
    static long startOffset(MessageStore store, String subject, String group) {
        try {
            store.ensureSubject(subject);
            long committed = store.committedOffset(subject, group);
            return committed >= 0 ? Math.max(committed, store.startOffset(subject)) : store.startOffset(subject);
        } catch (java.util.concurrent.RejectedExecutionException | IllegalArgumentException
                | MessageStoreException refusal) {
            throw refusal; // a limit of the store (SubjectLimitExceededException), a bad name: as documented
        } catch (RuntimeException e) {
            // a store that failed: reported as every other store failure is, so callers can tell it apart
            throw new MessageStoreException("pull group " + subject + "/" + group + ": the message store failed", e);
        }
    }

    /**
     * @param startOffset where a pair on a synchronous store starts ({@link #startOffset}, asked before);
     *                    unused with an asynchronous store
     */
    ConsumerGroupActor(ConsumerGroupSettings settings, ActorGroup schedulingGroup, String subject, String group,
            long startOffset) {
        super(Internals.engine(schedulingGroup), Internals.schedulingGroup(schedulingGroup), schedulingGroup.name() + "/" + subject, 1);
        this.settings = settings;
        this.schedulingGroupHandle = schedulingGroup;
        this.store = settings.syncStore;
        this.subject = subject;
        this.group = group;
        this.maxWaitingPulls = settings.maxWaitingPulls;
        this.maxBytesPerPull = settings.maxBytesPerPull;
        this.idleTimeoutNanos = settings.idleTimeoutNanos;
        this.lastActive = System.nanoTime();
        this.remote = store == null ? new AsyncStoreCalls(this, settings.asyncStore, subject, group,
                settings.ackTimeoutNanos, waiting, counters, lastActive) : null;
        this.ledger = new AckLedger(subject, group, settings.ackTimeoutNanos, counters, store, remote);
        if (store != null) {
            ledger.startAt(startOffset);
        }
        // never throws (the metrics SPI's contract, io.reactoractor.internal.metrics)
        this.recorder = settings.metrics.bindGroup(subject, group, statsSupplier);
        joinGroup(); // last: a group's disposal or a gauge may reach the actor from now on
    }

    // ================================================================== any thread

    /** Acknowledges offsets without waiting for the answer (a consumer's ack). */
    void acknowledge(long... offsets) {
        post(new Ack(offsets, committed -> { }, error -> { }));
    }

    /** Reports a failed delivery without waiting for the answer (a consumer's nack). */
    void reject(long offset, FailurePolicy policy, int attempt) {
        post(new Nack(offset, policy, attempt, committed -> { }, error -> { }));
    }

    /**
     * Hands a command to the actor; answers it with an error if the actor retired. Used where the
     * caller holds the actor (an attached consumer's pull, ack or release, a delivery's ack): a retired
     * actor had nothing in flight and no consumer, so such a command has nothing left to act on and is
     * answered "closed".
     *
     * <p>A refusal is final only once the actor is terminated: between the retirement CAS and its
     * re-check of {@link #idle} (see the retirement table) posts are refused although the re-check may
     * still find a consumer attached and put {@code entry} back to 0. An attached consumer's post that
     * lands in that window (a {@code consume()} stream's first pull, subscribing as the pair's idle actor
     * retires) waits the few instructions until the actor either goes on or terminates; it used to be
     * answered "retired" and fail a live stream.
     */
    void post(ConsumerGroupCommand c) {
        while (!tryPost(c)) {
            if (isTerminated()) {
                c.fail(new IllegalStateException("pull group " + subject + "/" + group + " retired (idle)"));
                return;
            }
            awaitingRetirementDecision();
        }
    }

    /**
     * {@link #post} found the actor {@code RETIRED} and re-checking {@code idle()}: it goes back to 0 or
     * terminates within a few instructions. A method of its own so that BlockHound's integration allows
     * exactly this spin ({@code Thread.onSpinWait} counts as blocking there) on a carrier or an event loop.
     */
    private static void awaitingRetirementDecision() {
        Thread.onSpinWait();
    }

    /**
     * Hands a command to the actor unless it retired (see the retirement table).
     *
     * @return {@code false} if the actor retired: ask the consumer for the pair's actor again
     */
    boolean tryPost(ConsumerGroupCommand c) {
        if (c instanceof ConsumerGroupCommand.Pull p && schedulingGroupHandle.isDisposed() && !isTerminated()) {
            // a pull is new work: while the scheduler (or the pair's scheduling group) closes gracefully it is
            // rejected, as Reactor's schedulers reject new tasks then; a consumer pulling again and again would
            // otherwise hold the shutdown open for as long as data keeps coming. Acks, nacks and releases settle
            // work already handed out, so they still run. (Terminated: the drain answers the post, as before.)
            p.fail(engine().rejectSignal(p.context())); // a fresh one, through the puller's hooks: see rejectSignal
            return true;
        }
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

    /**
     * Gives the actor a turn: the consumer started to {@linkplain PullConsumer#quiesce() quiesce}, or a
     * waiting pull was cancelled (the turn drops it).
     */
    void wake() {
        tryPost(WAKE); // a retired actor has no waiting pull
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
        // a command, not a bare signal(): a turn in progress may have read the consumer as attached (and
        // armed no idle timer); signal() would leave it to end without another, as hasWork() cannot see a
        // consumer count that changed, so the pair would never retire. The queued WAKE is work it sees, and
        // its turn re-evaluates the idle timer (WAKE is not the group's activity: lastActive stays)
        tryPost(WAKE);
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
            remote.appended(endOffset); // before the wake-up: the woken actor must see it
        }
        if (!wakeFromDataWait() && waiting.count() > 0) {
            signal();
        }
    }

    /** @return {@code true} if this call ended the wait for data (and resumed the actor) */
    private boolean wakeFromDataWait() {
        if (dataWait.wake()) {
            counters.resumes.increment();
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

    /**
     * Notes a commit the store refused for want of room ({@link InMemoryMessageStore}, "Bounded committed
     * offsets"): logged once when the refusals start, not at each retry (actor thread).
     */
    private void commitRefused(OffsetLimitExceededException e, long now) {
        lastCommitFailureAt = now;
        if (!commitRefused) {
            commitRefused = true;
            LOG.warn("pull group " + path() + ": the store refused to record the group's offset, kept in memory"
                    + " and committed again at each turn until it has room: " + e.getMessage());
        }
    }

    /**
     * An asynchronous store's calls outstanding, or acknowledgements still to send to it (retried while it
     * fails): a graceful close of the scheduler or of {@code cg.<group>} waits until the store answered them,
     * so that acknowledgements handed in before the close are recorded and answered, not failed half done
     * (the class doc of {@link PullConsumer}). Written by the actor at the end of each turn, read by the
     * close's checks on other threads.
     */
    private volatile boolean awaitingStore;

    @Override
    public boolean awaitsReply() {
        return awaitingStore;
    }

    /** Whether nothing would be lost or kept waiting if the actor retired now (actor thread). */
    private boolean idle() {
        // uncommitted progress (a refused or failed commit) would be lost with the actor: its group would
        // start again at the store's older offset and receive settled messages again
        return quiet() && !ledger.hasUncommittedProgress();
    }

    /** Nothing waiting, in flight, queued or consuming (actor thread): idle but for uncommitted progress. */
    private boolean quiet() {
        return waiting.isEmpty() && ledger.isEmpty() && commands.isEmpty() && consumers.get() == 0
                && (remote == null || remote.idle());
    }

    /** Whether a waiting pull could be answered now (any thread; reads volatile state only). */
    private boolean servable(long now) {
        return hasData(now) || waiting.earliestDeadline() <= now;
    }

    /** Whether a message could be handed out now: a new one in the store or a redelivery that is due. */
    private boolean hasData(long now) {
        if (store != null) {
            long end = store.endOffset(subject);
            return (end > ledger.nextOffset() && (end != emptyReadEnd || now - emptyReadRetryAt >= 0))
                    || ledger.nextRedeliveryDue() <= now;
        }
        return remote.mayHaveData() || ledger.nextRedeliveryDue() <= now;
    }

    /** @return the subject's end offset: the store's, or the last heard of (async store) */
    private long endOffset() {
        return store != null ? store.endOffset(subject) : Math.max(remote.knownEnd(), ledger.nextOffset());
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
                + suspendCount() + ", waitingForData=" + dataWait.isSet() + ", waiting=" + waiting.count()
                + ", commands=" + commands.size() + ", nextOffset=" + ledger.nextOffset() + ", end="
                + endOffset() + ", fetching=" + (remote != null && remote.fetching()) + ", earliestDeadlineIn=" + (earliestDeadline == Long.MAX_VALUE
                ? "none" : (earliestDeadline - System.nanoTime()) / 1000 + "us") + "]";
    }

    GroupStats stats() {
        long end = endOffset();
        // the group's progress: what it settled, also while the store refuses or fails the commit (retried; the
        // messages are not delivered again meanwhile), so that lag counts only messages not yet acknowledged
        long committed = Math.max(ledger.committedOffset(), ledger.settledOffset());
        int inFlight = ledger.inFlight();
        long n = counters.pulls.sum();
        // offsets with gaps (Redis entry IDs) do not count messages: the lag is then what this process
        // holds (fetched, not yet acknowledged); the group's own lag is the store's position()
        long lag = store != null || remote.dense() ? Math.max(0, end - committed) : (long) remote.buffered() + inFlight;
        return new GroupStats(subject, group, group().name(), end, committed, lag,
                waiting.count(), inFlight, isSuspended(), n, counters.pullsTimedOut.sum(), counters.pullsExpired.sum(),
                counters.suspends.sum(), counters.resumes.sum(), counters.delivered.sum(), counters.acknowledged.sum(), counters.redelivered.sum(),
                counters.skipped.sum(), counters.deadLettered.sum(), counters.evicted.sum(), counters.meanQueueTimeNanos(n));
    }

    // ================================================================== the turn (actor thread)

    /** One turn: inside {@code Schedulers.onScheduleHook}, which the carrier applies to each turn ({@code Turn}). */
    @Override
    protected void runTurn(Turn turn) {
        ran = true;
        long now;
        ConsumerGroupCommand c;
        while (turn.shouldContinue() && (c = commands.poll()) != null) {
            turn.beginTask();
            try {
                now = System.nanoTime();
                if (c != TICK && c != WAKE) {
                    lastActive = now; // the timer and a quiescence are not the group's activity
                }
                handle(c, now);
            } catch (OffsetLimitExceededException e) {
                commitRefused(e, System.nanoTime()); // the command's caller gets the refusal; the group goes on
                c.fail(e);
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
        ledger.sweepAckTimeouts(now);
        try {
            if (store != null) {
                checkEpoch();
            }
            serve(turn, now);
            ledger.commitIfAdvanced();
            commitRefused = false;
        } catch (OffsetLimitExceededException e) {
            // not a failing store: a full one, until some offset goes unused for its retention (which may be
            // days); the progress stays in the ledger and the commit is retried each turn, while pulls go on
            // being served (failing them would turn every long poll of the group into an immediate error)
            commitRefused(e, now);
        } catch (Throwable e) {
            lastCommitFailureAt = now;
            // a synchronous store that throws (reading, or committing; an Error too, which escaped the turn
            // and left the pulls to wait out their timeouts as if no message were held): the waiting pulls get the error,
            // so the actor is left with no work instead of running into the same failure turn after turn
            LOG.error("pull group " + path() + ": the message store failed", e);
            waiting.failAll(new MessageStoreException("pull group " + subject + "/" + group
                    + ": the message store failed", e));
        }
        if (remote != null) {
            remote.issueCalls(now, ledger.committedOffset());
            // before the turn releases the actor (awaitsReply's contract): from the turn that made a call (or
            // left acknowledgements to send) until the turn that applied the last answer, a graceful close waits
            boolean awaiting = !remote.idle();
            if (awaiting != awaitingStore) {
                awaitingStore = awaiting; // a volatile write only when it changes, not at every turn
            }
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
        // the meters go before the registry entry, so a successor's meters are never removed by us; none of
        // the three throws (a failing meter registry is logged by the binding): once RETIRED refuses posts, the
        // actor must leave the registries, or every later call for the pair would spin (submit) on it
        unbindMeters();
        terminate();
        settings.retired.accept(this);
        return true;
    }

    /** Removes the pair's meters, once (at retirement or termination, whichever comes first). */
    private void unbindMeters() {
        if (metricsUnbound) {
            return;
        }
        metricsUnbound = true;
        settings.metrics.unbindGroup(subject, group);
    }

    /** Whether a failing metrics recorder was logged already (actor-confined): once per pair, not per pull. */
    private boolean metricsFailureLogged;

    private void metricsFailed(Throwable e) {
        if (!metricsFailureLogged) {
            metricsFailureLogged = true;
            LOG.warn("pull group " + path() + ": recording a metric failed; the pull goes on (logged once per group)", e);
        }
    }

    private void handle(ConsumerGroupCommand c, long now) {
        if (c instanceof Pull p) {
            counters.pulls.increment();
            long queued = now - p.createdNanos;
            counters.queueTimeNanos.add(queued);
            try {
                recorder.pullQueued(queued);
            } catch (Throwable e) {
                metricsFailed(e); // a failing meter registry is never the pull's failure
            }
            if (p.cancelled) {
                return;
            }
            if (p.timeoutNanos > 0 && p.deadline <= now) {
                // it expired in the mailbox (the actor was busy or starved, or the timeout was shorter than the
                // trip here): served as a pull-once, so it gets what is there now and is answered TIMED_OUT this
                // turn if nothing is (answering it TIMED_OUT at once left messages unread: a pull with a 1 ns
                // timeout never got any, and a consume() stream with such a poll timeout spun without end)
                p.expiredOnArrival = true;
            }
            // the limit is on long polls: a pull-once never waits (but for a fetch under way, briefly), and is
            // answered at the latest by this turn's serve, so it is never refused for it; nor is the pull of a
            // consume() stream the group already answered (admitted at its first pull, it holds one at most)
            if (p.waits() && !p.admitted && waiting.size() >= maxWaitingPulls) {
                // cancelled long polls are otherwise swept by the next serve only: they must not hold slots
                waiting.dropCancelled();
                int longPolls = waiting.longPolls();
                if (longPolls >= maxWaitingPulls) {
                    p.fail(new WaitingPullsLimitExceededException(subject, group, longPolls, maxWaitingPulls));
                    return;
                }
            }
            if (remote != null) {
                Throwable unreachable = null;
                try {
                    if (!remote.connected()) {
                        unreachable = new IllegalStateException("not connected (it reconnects by itself)");
                    }
                } catch (Throwable t) {
                    Exceptions.throwIfJvmFatal(t);
                    unreachable = t; // a store whose connected() throws: a store failure like any other
                }
                if (unreachable != null) {
                    // fail fast through the connection state: the pull may not be covered by a fetch of its own
                    p.fail(new MessageStoreException("pull group " + subject + "/" + group
                            + ": the message store is unreachable", unreachable));
                    return;
                }
            }
            waiting.add(p);
            if (remote != null) {
                remote.pullArrived(now); // another process may have appended: asks the store unless a fresh fetch covers it
            }
        } else if (c instanceof Ack a) {
            for (long offset : a.offsets) {
                ledger.ack(offset);
                if (remote != null) {
                    remote.acked(offset); // every offset, known here or not: another process may have delivered it
                }
            }
            ledger.commitIfAdvanced();
            if (remote != null) {
                remote.answerWhenRecorded(a);
                remote.ackHandled(now, ledger.committedOffset()); // its call goes out now if a slot is free
            } else {
                a.done(ledger.committedOffset());
            }
        } else if (c instanceof AsyncStoreCalls.StoreReply<?> r) {
            r.applied(now);
        } else if (c instanceof Nack n) {
            if (!ledger.nack(n.offset, n.policy, n.attempt, now, n)) {
                ledger.commitIfAdvanced();
                n.done(ledger.committedOffset());
            } else if (remote != null) {
                // answered by the store's reply: a dead letter's copy (DeadLettered), or a skip's acknowledgement,
                // which goes out now if a call slot is free, as an ack's does
                ledger.commitIfAdvanced();
                remote.ackHandled(now, ledger.committedOffset());
            }
        } else if (c instanceof Release r) {
            if (r.offsets == null) {
                ledger.release(r.consumerId, now);
            } else {
                ledger.release(r.consumerId, r.offsets, r.attempts, now);
            }
        } else if (c == TICK) {
            armedAt = Long.MAX_VALUE; // the timer fired and is no longer armed
        }
    }

    /**
     * Answers the waiting pulls that can be answered: expired ones ({@code TIMED_OUT}), then as many
     * as there are messages for, in FIFO order, then pull-once requests that found nothing
     * ({@code EMPTY}; {@code TIMED_OUT} for a long poll served as a pull-once because it had expired before the
     * actor first saw it, {@link Pull#expiredOnArrival}). Each answer is a task of the turn; at least one answer per turn is given
     * whatever the quota (progress), the rest stop at the quota and continue next turn
     * ({@link #servable} keeps the actor scheduled while something is answerable).
     */
    private void serve(Turn turn, long now) {
        int answered = 0;
        for (Iterator<Pull> it = waiting.iterator(); it.hasNext(); ) {
            Pull p = it.next();
            if (p.cancelled) {
                it.remove();
            } else if (p.waits() && p.deadline <= now) {
                if (answered > 0 && !turn.shouldContinue()) {
                    break;
                }
                it.remove();
                waiting.removed();
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
            Throwable commitFailure = null;
            if (p.ackOnDelivery) {
                // acknowledged when handed out: committed before the answer, so whoever the answer reaches
                // (an HTTP client reading the group's figures next) sees the offset it settled
                try {
                    ledger.commitIfAdvanced();
                } catch (OffsetLimitExceededException e) {
                    commitRefused(e, now); // retried at the turn's end (runTurn); serving goes on
                } catch (RuntimeException | Error e) {
                    // the store failed the commit: the messages are taken and settled in the ledger, which
                    // commits them with a later call, so they are answered all the same (a pull left
                    // unanswered would hang, and its messages be lost); the failure is then reported as any
                    // store failure of the turn (runTurn)
                    commitFailure = e;
                }
            }
            List<Message> messages = new ArrayList<>(batch.size());
            int[] attempts = new int[batch.size()];
            for (int i = 0; i < batch.size(); i++) {
                messages.add(batch.get(i).message);
                attempts[i] = batch.get(i).attempts;
            }
            answerAsTask(turn, p, PullResult.Status.MESSAGES, messages, attempts);
            answered++;
            if (commitFailure instanceof Error e) {
                throw e;
            } else if (commitFailure != null) {
                throw (RuntimeException) commitFailure;
            }
        }
        if (quiescedAt == 0 && settings.quiescing()) {
            quiescedAt = now;
        }
        long dueNow = Long.MAX_VALUE;
        if (!waiting.isEmpty()) {
            // pull-once requests never wait, but for a store fetch already under way (it may bring what they
            // ask for), and for that at most PULL_ONCE_FETCH_WAIT_NANOS: a hung store must not hold them
            // (each one is in the timer's earliest deadline, WaitingPulls.publish). While the consumer quiesces,
            // long polls wait no longer than that either (from the quiescence or their own start), answered as
            // at their timeout; with messages to give they were served above, and the rest next turn
            boolean nothingNow = !hasData(now) && (remote == null || !remote.fetching());
            for (Iterator<Pull> it = waiting.iterator(); it.hasNext(); ) {
                Pull p = it.next();
                boolean longPoll = p.waits();
                if (longPoll && quiescedAt == 0) {
                    continue;
                }
                long since = longPoll ? Math.max(p.createdNanos, quiescedAt) : p.createdNanos;
                if (nothingNow || now - since >= WaitingPulls.PULL_ONCE_FETCH_WAIT_NANOS) {
                    if (answered > 0 && !turn.shouldContinue()) {
                        dueNow = now; // the quota: the rest are due, the actor stays scheduled for them
                        break;
                    }
                    it.remove();
                    waiting.removed();
                    boolean timedOut = p.timeoutNanos > 0; // a long poll, also one that expired before its turn
                    if (timedOut) {
                        counters.pullsTimedOut.increment();
                        if (p.expiredOnArrival) {
                            counters.pullsExpired.increment();
                        }
                    }
                    answerAsTask(turn, p, timedOut ? PullResult.Status.TIMED_OUT : PullResult.Status.EMPTY, List.of(),
                            null);
                    answered++;
                }
            }
        }
        waiting.publish(quiescedAt, dueNow);
    }

    /** Answers as one task of the turn: the quota, hog detection and error accounting apply to it. */
    private void answerAsTask(Turn turn, Pull p, PullResult.Status status, List<Message> messages,
            int[] attempts) {
        turn.beginTask();
        try {
            answer(p, status, messages, attempts);
        } finally {
            turn.endTask();
        }
    }

    private static List<Integer> attemptList(int[] attempts) {
        if (attempts == null) {
            return List.of();
        }
        Integer[] boxed = new Integer[attempts.length];
        for (int i = 0; i < attempts.length; i++) {
            boxed[i] = attempts[i];
        }
        return Arrays.asList(boxed); // copied once more by PullResult (List.copyOf)
    }

    private void answer(Pull p, PullResult.Status status, List<Message> messages, int[] attempts) {
        PullResult result;
        try {
            result = new PullResult(subject, group, status, messages, settings.epoch(), p.skipped,
                    attemptList(attempts));
        } catch (Throwable t) {
            // the store's epoch() threw or returned null (it must not be empty): a store failure, which the
            // pull gets (a log line alone left it waiting forever); the messages taken for it stay in flight
            // and are redelivered after the ack timeout (or at once, by the cancel of a failed consume())
            Exceptions.throwIfJvmFatal(t);
            p.fail(new MessageStoreException("pull group " + subject + "/" + group
                    + ": the message store failed (its epoch)", t));
            return;
        }
        try {
            p.answer(result, attempts);
        } catch (Throwable t) {
            if (Exceptions.isJvmFatal(t)) {
                // the consumer's subscriber threw it (its subscription did the bookkeeping first): reported
                // under that cause, as a fatal task error, and the turn goes on (were it to escape, the turn's
                // store guard would blame the store, or the command loop would leave the group unarmed)
                engine().taskFailed(this, t);
                return;
            }
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
        long[] toRenew = null;
        int renew = 0;
        boolean full = false;
        while (out.size() < p.max && (f = ledger.dueRedelivery(now)) != null) {
            long size = f.message.payload().length;
            if (!out.isEmpty() && bytes + size > maxBytesPerPull) {
                full = true; // the budget is spent: no new message either, but renew what was taken
                break;
            }
            ledger.pollRedelivery();
            bytes += size;
            counters.redelivered.increment();
            if (remote != null && !f.renewedByCheck) { // its ack-timeout check renewed it in the store just now
                if (toRenew == null) {
                    toRenew = new long[Math.min(p.max, 16)];
                } else if (renew == toRenew.length) {
                    toRenew = java.util.Arrays.copyOf(toRenew, renew * 2);
                }
                toRenew[renew++] = f.message.offset();
            }
            f.renewedByCheck = false;
            ledger.deliver(f, p, now);
            out.add(f);
        }
        ledger.updateRedeliveryDue();
        if (renew > 0) {
            remote.renew(renew == toRenew.length ? toRenew : java.util.Arrays.copyOf(toRenew, renew));
        }
        if (full) {
            return out;
        }
        long end; // the synchronous store's end offset, read once (emptyReadEnd keeps the one the read saw)
        if (remote != null) {
            remote.takeFetched(p, now, out, bytes, maxBytesPerPull, ledger);
        } else if (out.size() < p.max && (end = store.endOffset(subject)) > ledger.nextOffset()) {
            long from = ledger.nextOffset();
            int want = p.max - out.size();
            List<Message> read = store.read(subject, from, want);
            checkRead(read, from, want);
            long first = read.isEmpty() ? Math.max(from, store.startOffset(subject)) : read.get(0).offset();
            if (first > from) {
                // dropped by retention before this group read them: counted, and said in the answer
                counters.evicted.add(first - from);
                p.skipped += first - from;
                ledger.advanceTo(first);
            }
            if (read.isEmpty() && first == from) {
                emptyReadEnd = end; // nothing to read yet below the end: wait for it to move, or retry later
                emptyReadRetryAt = now + EMPTY_READ_RETRY_NANOS;
            } else if (emptyReadEnd != -1) {
                emptyReadEnd = -1;
            }
            for (int i = 0; i < read.size() && i < want; i++) { // a store that returned more: the rest is read again
                Message m = read.get(i);
                long size = m.payload().length;
                if (!out.isEmpty() && bytes + size > maxBytesPerPull) {
                    break;
                }
                bytes += size;
                InFlight n = new InFlight(m);
                ledger.deliver(n, p, now);
                out.add(n);
                ledger.advanceTo(m.offset() + 1);
            }
        }
        return out;
    }

    /**
     * Refuses what {@link MessageStore#read} must not return, naming it, before anything is delivered: a
     * {@code null} list, or offsets that do not increase from {@code from} (an out-of-order, repeated or
     * stale answer would deliver messages twice, or move the group's position back). The failure fails the
     * waiting pulls with a {@link MessageStoreException} (the turn's store guard). More messages than asked
     * are not an error: the rest is read again by the next pull.
     */
    private void checkRead(List<Message> read, long from, int want) {
        if (read == null) {
            throw new IllegalStateException("the store's read(" + subject + ", " + from + ", " + want
                    + ") returned null, not a list");
        }
        long last = from - 1;
        for (Message m : read) {
            if (m == null || m.offset() <= last || !subject.equals(m.subject())) {
                throw new IllegalStateException("the store's read(" + subject + ", " + from + ", " + want
                        + ") returned " + (m == null ? "null"
                                : !subject.equals(m.subject()) ? "a message of subject '" + m.subject() + "'"
                                : "offset " + m.offset()) + " after offset " + last
                        + ": messages of the subject, in increasing offsets from " + from);
            }
            last = m.offset();
        }
    }

    /** The synchronous store's epoch when this actor first served (actor-confined). */
    private String servingEpoch;

    /**
     * Refuses to serve across a change of the synchronous store's {@linkplain MessageStore#epoch() epoch}:
     * this actor's position and messages in flight name offsets of the old epoch, which the new one reuses
     * for other messages, so serving on would skip the new epoch's first messages without a word. The
     * waiting pulls fail with a {@link MessageStoreException} that says so (the turn's store guard), and so
     * does every later pull of the pair: the consumer must be built again over the store. A pair created
     * after the change starts in the new epoch.
     */
    private void checkEpoch() {
        String e = store.epoch();
        if (e == null || e.isEmpty()) {
            throw new IllegalStateException("the store's epoch() returned " + (e == null ? "null" : "an empty string"));
        }
        if (servingEpoch == null) {
            servingEpoch = e;
        } else if (!servingEpoch.equals(e)) {
            throw new IllegalStateException("the store's epoch changed from '" + servingEpoch + "' to '" + e
                    + "' while this group was served: its position and deliveries belong to the old epoch; build "
                    + "the PullConsumer again over the store");
        }
    }

    /** One timer for everything time-based: the earliest pull deadline, redelivery or ack timeout. */
    private void armTimer() {
        long deadline = Long.MAX_VALUE;
        if (!waiting.isEmpty()) {
            deadline = Math.min(waiting.earliestDeadline(), ledger.nextRedeliveryDue());
            if (remote != null) {
                deadline = Math.min(deadline, remote.nextReclaimAt());
            } else if (emptyReadEnd != -1) {
                deadline = Math.min(deadline, emptyReadRetryAt); // the empty read is tried again then
            }
        }
        deadline = Math.min(deadline, ledger.nextAckDeadline());
        if (remote != null) {
            deadline = Math.min(deadline, remote.nextAckRetryAt()); // acknowledgements a failed call carried
        }
        if (deadline == Long.MAX_VALUE && idleTimeoutNanos > 0 && quiet()) {
            // quiet with progress the store has not recorded: a turn one idle timeout after the last failed
            // commit retries it (at the turn's end), then retires the group if it succeeded
            long idleDeadline = ledger.hasUncommittedProgress() ? lastCommitFailureAt + idleTimeoutNanos
                    : lastActive + idleTimeoutNanos;
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
        boolean wasWaiting = dataWait.isSet(); // only this turn sets it
        boolean waits = dataWait.suspend(() -> !commands.isEmpty() || servable(System.nanoTime()),
                afterSuspendForTest);
        if (!wasWaiting) {
            counters.suspends.increment();
            if (!waits) {
                // something arrived while we were suspending (an append that saw no latch yet signalled
                // instead of resuming): the wait ends here, and counts as a resume like any other
                counters.resumes.increment();
            }
        }
    }

    @Override
    protected void drainTerminated() {
        engine().cancelTimer(tick);
        // the consumer disposed (or the actor retired): "closed"; the scheduler or the pair's scheduling group
        // terminated under a live consumer: a rejection, as Reactor's operators signal on a disposed scheduler
        // (PullConsumer's class doc), never the consumer's "closed" while isDisposed() says it is not
        // A rejection is made per waiting subscriber, with its Context (Operators.onRejectedExecution through
        // its own hooks, each its own exception), as each of Reactor's operators makes its own; "closed" is one.
        IllegalStateException consumerClosed = new IllegalStateException("pull consumer closed: group " + subject
                + "/" + group + " no longer serves pulls");
        java.util.function.Function<reactor.util.context.ContextView, Throwable> closed =
                schedulingGroupHandle.isDisposed() && !settings.consumerDisposed()
                        ? engine()::rejectSignal
                        : context -> consumerClosed;
        // quiescing, a caller's long poll is answered as at its timeout whether or not the actor's turn came
        // first: the disposal that follows a quiescence must not turn the answers it promised into errors. Not
        // a consumer stream's pull: that answer would make the stream pull again, from a terminated actor; the
        // error ends it (a quiesced stream completes through its own pending signal)
        // only at the first drain of an actor that ran (the termination's): a pull posted later, to an actor
        // terminated under a quiescing consumer (its scheduler disposed first), or to one created on a dead
        // scheduler, must fail, or a caller polling again on TIMED_OUT would loop on these drains
        boolean quiescing = settings.quiescing() && ran && !drained;
        drained = true;
        List<Pull> timedOut = new ArrayList<>();
        ConsumerGroupCommand c;
        while ((c = commands.poll()) != null) {
            if (quiescing && c instanceof Pull p && p.timeoutNanos > 0 && p.consumerId == 0) {
                timedOut.add(p);
            } else {
                c.fail(closed);
            }
        }
        if (quiescing) {
            for (Iterator<Pull> it = waiting.iterator(); it.hasNext(); ) {
                Pull p = it.next();
                if (p.timeoutNanos > 0 && p.consumerId == 0) {
                    it.remove();
                    timedOut.add(p);
                }
            }
            waiting.publish();
        }
        for (Pull p : timedOut) {
            counters.pullsTimedOut.increment();
            answer(p, PullResult.Status.TIMED_OUT, List.of(), null);
        }
        waiting.failAll(closed);
        if (remote != null) {
            remote.failAckWaiters(closed);
        }
        unbindMeters();
        // the streams attached with no pull in flight: ended now, not at their next request (they may hold
        // deliveries and wait for a terminal signal); a quiesced one completes through its own pending signal
        settings.terminated.accept(this, closed);
    }

    // ================================================================== the timer

    /** Posted by {@link #wake()}: nothing to do but the turn itself. */
    private static final ConsumerGroupCommand WAKE = new ConsumerGroupCommand() {
        @Override
        public String toString() {
            return "Wake";
        }
    };

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

        @Override
        protected boolean keptOnShutdown() {
            // but the tick stays: it also sends again the acknowledgements a failing store did not record,
            // which hold the shutdown open (awaitsReply); removed, they would wait for good, and so would it
            return true;
        }
    }
}
