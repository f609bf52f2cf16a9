package io.reactoractor.actor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.ActorGroup;
import io.reactoractor.internal.ContextThreadLocals;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.scheduling.SuspensionLatch;
import io.reactoractor.internal.scheduling.Turn;
import org.reactivestreams.Subscriber;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The core of an {@link Actor}: its lifecycle, its mailboxes, its schedulable {@link ActorCell} and
 * the turn that runs the {@link Behaviour}. It owns the other parts ({@link InboundCredits} for the
 * inbound side, {@link OutboundPort} for the downstream side, {@link BehaviourContext} and
 * {@link ActorTimers} for the behaviour); {@link Actor} is the public front over it.
 *
 * <h2>Lifecycle</h2>
 * Four terminal flags, each {@code volatile}, set once and never cleared: {@code completeRequested},
 * {@code pendingError}, {@code cancelled} and {@code done}. Any thread may set the first three (then
 * {@link #wake()}s the actor; {@code pendingError} by CAS from {@code null}, so the first failure
 * wins); only the turn acts on them, so the terminal signal is always delivered on the actor's turn.
 * {@code done} is written only by {@link #terminate}, which runs on the turn or in
 * {@code drainTerminated} — both by the thread holding the cell's {@code SCHEDULED} bit (a carrier, or
 * whoever gains that bit to drain a terminated cell), so it has a single writer. Two suspensions are
 * the actor's own and one is the user's; all three are units of the cell's suspend count
 * ({@link ActorCell}), told apart by their own bookkeeping:
 * <ul>
 *   <li>backpressure: the {@code backpressure} latch (one unit while it is set);</li>
 *   <li>back-off: a {@link ActorTimers} resume timer (one unit until it fires or is disposed);</li>
 *   <li>user: the {@code userSuspensions} count (one unit each).</li>
 * </ul>
 * <pre>
 *   state                          | event (thread)                                | next state / action
 *   -------------------------------+-----------------------------------------------+------------------------------------------
 *   live (done=false)              | complete() (any); last inbound port completes | completeRequested=true; upstreams cancelled
 *                                  | (its upstream's)                              | (InboundCredits.stopUpstreams); wake()
 *   live                           | upstream onError or overflow (upstream's);    | pendingError: null-&gt;t by CAS; wake()
 *                                  | request(n &lt;= 0) (downstream's); behaviour    |
 *                                  | error under stop, or retries exhausted (actor)|
 *   live                           | cancel() (downstream's)                       | cancelled=true; wake()
 *   live, cancelled                | turn (actor)                                  | terminate(no signal): done=true, upstreams
 *                                  |                                               | cancelled, waiting sends failed, downstream
 *                                  |                                               | dropped; cell terminated, mailbox discarded
 *   live, pendingError, downstream | turn, not suspended (actor)                   | terminate: onError downstream, as above
 *   live, completeRequested,       | turn, out buffer and mailbox empty (actor)    | terminate: onComplete downstream, as above
 *   downstream                     |                                               |
 *   live, no downstream and work;  | turn (actor)                                  | backpressure-suspended: cell.suspend(), then
 *   or out buffer not flushable;   |                                               | latch clear-&gt;set, then re-check
 *   or a message but no demand     |                                               | (canProceed): if it can, undo at once
 *   backpressure-suspended         | wake(): subscribe, request(n), fail, cancel,  | latch set-&gt;clear: the CAS winner
 *                                  | complete, a port closing (any)                | calls cell.resume(); losers only signal
 *   live                           | Actor.suspend(), ActorContext.suspend() (any) | userSuspensions+1, then cell.suspend()
 *   user-suspended                 | Actor.resume(), ActorContext.resume() (any)   | userSuspensions-1 by CAS (never below 0),
 *                                  |                                               | then cell.resume(); none: returns false
 *   live                           | resumeAfter(d), retry back-off (actor)        | cell.suspend(), timer armed (ActorTimers)
 *   back-off                       | timer fires (timer) / disposed first (any)    | cell.resume() / the unit becomes a user
 *                                  |                                               | suspension (userSuspensions+1)
 *   retry back-off                 | cancel() or a failure (any)                   | cut short: cell.resume() now (retryBackoff)
 *   live                           | group or scheduler starts closing gracefully  | no flag of its own (isClosing() reads the
 *                                  | (any)                                         | group's and engine's): tell() false, send()
 *                                  |                                               | and ActorContext.schedule rejected, no new
 *                                  |                                               | demand upstream (but to a closing actor or
 *                                  |                                               | publishOn: held work); held work runs on
 *   live                           | scheduler disposed: drainTerminated (holder   | pendingError: null-&gt;rejection; terminate
 *                                  | of SCHEDULED)                                 | with onError(rejection)
 *   done                           | anything                                      | flags ignored; new ports cancelled, tell()
 *                                  |                                               | false, send() fails; late messages and
 *                                  |                                               | control tasks discarded by drainTerminated
 * </pre>
 * A suspension made while a turn runs is seen at the next message and before a pending error is delivered
 * (a message told after {@code suspend()} returned, or an error, waits for the resume).
 * Precedence on a turn: {@code cancelled}, then {@code pendingError} (with a downstream), then the
 * control mailbox, then completion (only once nothing is buffered and the mailbox is empty). Without a
 * downstream subscriber an error or a completion waits for one; a user-suspended actor delivers its
 * terminal signal when resumed.
 *
 * <h2>Backpressure suspension ({@code backpressure}, a {@link SuspensionLatch})</h2>
 * Set only by the turn ({@link #suspendForBackpressure()}), cleared by whichever thread wins the
 * latch's CAS in {@link #wake()} (or by the turn's own re-check): the engine's suspend/wake handshake,
 * shared with the pull consumer's group actor, whose state table and ordering argument are in
 * {@link SuspensionLatch}.
 *
 * <h2>Actor-confined fields (the thread holding {@code SCHEDULED}, no synchronization)</h2>
 * {@code inBehaviour}, {@code unreturnedCredits}, {@code attempt} here, and {@link OutboundPort}'s
 * {@code emitted} and out buffer. The cell hands consumer rights from one holder to the next through
 * its status word (a CAS), which orders one turn's writes before the next turn's reads. Where another
 * thread needs a glimpse of one of them, a {@code volatile} mirror is kept ({@code outBuffered}).
 * The other regimes: the credits' monitor in {@link InboundCredits}, the downstream's demand in
 * {@link OutboundPort}.
 *
 * @param <I> inbound message type
 * @param <O> outbound result type
 */
final class ActorTurnLoop<I, O> {

    private static final VarHandle PENDING_ERROR;
    private static final VarHandle SKIPPED;
    private static final VarHandle PROCESSED;
    private static final VarHandle CONTROL;
    private static final VarHandle TIMERS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            SKIPPED = lookup.findVarHandle(ActorTurnLoop.class, "skippedMessages", long.class);
            PROCESSED = lookup.findVarHandle(ActorTurnLoop.class, "processedMessages", long.class);
            PENDING_ERROR = lookup.findVarHandle(ActorTurnLoop.class, "pendingError", Throwable.class);
            CONTROL = lookup.findVarHandle(ActorTurnLoop.class, "control", MpscChunkedArrayQueue.class);
            TIMERS = lookup.findVarHandle(ActorTurnLoop.class, "timers", Set.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final ActorGroup group;
    final SchedulerEngine engine;
    private final Behaviour<I, O> behaviour;
    private final ErrorPolicy policy;
    final MpscChunkedArrayQueue<I> mailbox = new MpscChunkedArrayQueue<>();
    /**
     * Tasks of the behaviour's timers ({@link ActorContext#schedule}), run on the turn before messages;
     * {@code null} until the first one fires ({@link #offerControl}): most actors never use a timer, and
     * every turn (and both of its end-of-turn checks) read this queue, two more cache lines of a cold
     * actor, plus half a kilobyte per actor. Installed once by CAS, never removed; volatile, so the
     * install is part of the cell's handshake like the offer itself (see {@link #offerControl}).
     */
    private volatile MpscChunkedArrayQueue<Runnable> control;
    /**
     * The behaviour's armed timers ({@link ActorTimers}), cancelled by {@link #terminate}; {@code null} until
     * the first (most actors never arm one). Installed once by CAS, never removed.
     */
    private volatile Set<ActorTimers.ActorTimer> timers;
    final OutboundPort<O> out;
    /** The subscriber's context, asked for only under automatic context propagation (each turn). */
    private final java.util.function.Supplier<Context> subscriberContext;
    final InboundCredits<I> credits;
    private final BehaviourContext<O> context;
    /** Created last: the cell is published to its group inside its constructor (see {@link Cell}). */
    final ActorCell cell;

    /** Suspensions by the user or the behaviour, counted apart from the actor's own (see {@link #resumeUser()}). */
    private final AtomicInteger userSuspensions = new AtomicInteger();
    /**
     * Suspensions held by pending {@link ActorContext#resumeAfter} timers ({@link ActorTimers.ResumeTimer}):
     * raised when one is armed, lowered once when it settles (fires, is cut short, or is disposed, which
     * hands its suspension to the user). A cancel must not wait for them (see {@link #cancel()}).
     */
    final AtomicInteger timedSuspensions = new AtomicInteger();
    /** The backpressure suspension: the engine's suspend/wake handshake (one unit while set). */
    private final SuspensionLatch backpressure;

    // ---- actor-confined
    /** Whether the behaviour is running on the current message (the run-next hint). */
    private boolean inBehaviour;
    private int unreturnedCredits;
    private int attempt;

    // ---- lifecycle (see the table above)
    volatile Throwable pendingError;
    private volatile boolean completeRequested;
    /**
     * Test seam: runs in the turn between a peek that found the mailbox empty and the completion check, where
     * a producer's message and completion may land ({@code ActorCompleteRaceTest}); {@code null} otherwise.
     */
    static volatile Runnable afterEmptyPeekForTest;
    volatile boolean cancelled;
    volatile boolean done;

    // ---- statistics: written only by the thread holding SCHEDULED (one writer at a time; the status
    // word's CAS orders one holder's writes before the next holder's), with opaque stores so that any
    // thread may read them with opaque loads (untorn, eventually current) without a CAS per message
    private long skippedMessages;
    private long processedMessages;

    ActorTurnLoop(ActorGroup group, String path, int weight, int capacity, Behaviour<I, O> behaviour,
            ErrorPolicy policy) {
        this.group = group;
        this.engine = Internals.engine(group);
        this.behaviour = behaviour;
        this.policy = policy;
        this.out = new OutboundPort<>(this);
        this.subscriberContext = out::discardContext;
        this.credits = new InboundCredits<>(this, capacity);
        this.context = new BehaviourContext<>(this, out);
        this.cell = new Cell(path, weight);
        this.backpressure = new SuspensionLatch(cell);
        cell.joinGroup(); // last: a group's disposal or a gauge may reach the actor from now on
    }

    /** @return the actor's path, {@code <group>/<name>} */
    String path() {
        return cell.path();
    }

    int attempt() {
        return attempt;
    }

    boolean isTerminated() {
        return done || cell.isTerminated();
    }

    // ================================================================== signals to the actor (any thread)

    /**
     * Adds a control task (a timer of the behaviour that fired) and schedules the actor; any thread.
     * The queue is created on first use by CAS (volatile), then offered to (a release store), and the
     * signal reads the status word after a full fence: a turn ending meanwhile clears {@code SCHEDULED}
     * (a CAS) and then reads {@code control} (volatile) in {@code hasWork}, so either it sees the queue
     * and the task (the queue's handshake, with {@code signal()}'s fence) or this thread's status read
     * comes after its CAS and schedules it.
     */
    void offerControl(Runnable task) {
        MpscChunkedArrayQueue<Runnable> q = control;
        if (q == null) {
            MpscChunkedArrayQueue<Runnable> created = new MpscChunkedArrayQueue<>(8);
            @SuppressWarnings("unchecked")
            MpscChunkedArrayQueue<Runnable> witness =
                    (MpscChunkedArrayQueue<Runnable>) CONTROL.compareAndExchange(this, null, created);
            q = witness == null ? created : witness;
        }
        q.offerRelease(task); // signal() fences before it reads the status (the handshake)
        cell.signal();
    }

    /**
     * Adds a message for which a credit was taken and schedules the actor.
     *
     * @return {@code false} if the actor was terminated meanwhile: the message is then discarded with the
     *         rest of the mailbox
     */
    boolean enqueue(I message) {
        mailbox.offerRelease(message); // signal() fences before it reads the status (the handshake)
        return cell.signal();
    }

    /**
     * Whether the actor's group or scheduler is closing (a graceful disposal began) or disposed: the actor
     * takes no new input ({@code tell} refused, {@code send} rejected, no new demand upstream) and processes
     * what it already holds. Two volatile reads (the group's flag, the engine's state), no lock.
     *
     * @return whether new input is refused
     */
    boolean isClosing() {
        return group.isDisposed();
    }

    /** @return whether completion was requested ({@link Actor#complete()} or every upstream completed) */
    boolean isCompleteRequested() {
        return completeRequested;
    }

    /**
     * Records a failure and makes sure the actor runs to deliver it. The first one wins, by CAS: a
     * check-then-write let two racing failures both see none, and the later write could replace the
     * error the turn had already delivered (then {@code Attr.ERROR} and a late subscriber saw another).
     */
    void fail(Throwable t) {
        if (!PENDING_ERROR.compareAndSet(this, null, t) && pendingError != t) {
            // the first failure wins (the class doc of Actor); a later one is not lost without trace: it goes
            // to Hooks.onErrorDropped, as Reactor's operators with several sources drop their later errors
            Internals.onErrorDropped(t, out.discardContext());
        }
        endRetryBackoff();
        wake();
    }

    /**
     * The back-off of a retrying message, cut short when the actor is cancelled or fails meanwhile (it
     * would otherwise hold the terminal signal for up to the back-off's 30 s cap). No lost early end:
     * {@link #cancel()} and {@link #fail} write their flag, then read this; the turn that arms a back-off
     * writes this, then reads the flags. All volatile, so at least one side sees the other's write; the
     * timer's own once-only settle makes a second early end harmless.
     */
    private volatile ActorTimers.ResumeTimer retryBackoff;

    private void endRetryBackoff() {
        ActorTimers.ResumeTimer t = retryBackoff;
        if (t != null) {
            t.resumeNow();
        }
    }

    /** Completion requested ({@link Actor#complete()} or every inbound port completed). */
    void requestComplete() {
        completeRequested = true;
        credits.stopUpstreams(); // no more input: what is in the mailbox is drained, then onComplete
        wake();
    }

    /**
     * {@link Actor#dispose()}: fails with a {@code CancellationException} (unless a failure is already
     * pending) and terminates now, subscriber or not; the drain of the terminated cell delivers it.
     */
    void dispose() {
        PENDING_ERROR.compareAndSet(this, null, new java.util.concurrent.CancellationException("Disposed"));
        endRetryBackoff();
        cell.terminate();
    }

    /** The downstream cancelled. */
    void cancel() {
        cancelled = true;
        endRetryBackoff();
        if (userSuspensions.get() > 0 || timedSuspensions.get() > 0) {
            // a user suspension, or a resumeAfter's, holds back the turn that would stop the actor (a retry's
            // back-off is cut short above): stop it now, as dispose() does; the drain cancels the upstreams
            // and discards the mailbox, and signals nothing to the downstream that cancelled
            cell.terminate();
            return;
        }
        wake();
    }

    /** Lifts the backpressure suspension if any, and schedules the actor if it has work. */
    void wake() {
        if (!backpressure.wake()) {
            cell.signal();
        }
    }

    /** A user suspension: counted, so that {@link #resumeUser()} never lifts one of the actor's own. */
    void suspendByUser() {
        cell.suspend(); // first: it throws at the most suspensions, and must not leave a user count behind
        if (!cell.isTerminated()) { // a terminated cell ignores suspensions: nothing to count or to lift
            userSuspensions.incrementAndGet();
        }
    }

    /** @return {@code true} if a user suspension was lifted, {@code false} if there was none or it terminated */
    boolean resumeUser() {
        for (;;) {
            int n = userSuspensions.get();
            if (n == 0 || cell.isTerminated()) {
                return false;
            }
            if (userSuspensions.compareAndSet(n, n - 1)) {
                cell.resume();
                return true;
            }
        }
    }

    /**
     * Turns a suspension unit the caller holds on the cell into a user suspension (a disposed
     * {@link ActorContext#resumeAfter} timer), so {@link Actor#resume()} lifts it.
     */
    void handSuspensionToUser() {
        userSuspensions.incrementAndGet();
    }

    // ================================================================== backpressure suspension (actor)

    /**
     * Suspends for lack of demand (or of a subscriber); undone at once if a wake-up raced with it.
     *
     * @return {@code true} if the actor stays suspended
     */
    private boolean suspendForBackpressure() {
        // the order (suspend the cell, set the latch, re-check canProceed) is SuspensionLatch's argument
        return backpressure.suspend(this::canProceed);
    }

    /**
     * Whether the turn that is suspending could go on: cancelled, or a downstream with an error to
     * deliver, demand, or a completion to deliver. An error without a downstream waits for one like
     * any other signal (the turn would only suspend again: answering {@code true} there made it spin
     * on its carrier until a subscriber came).
     */
    private boolean canProceed() {
        if (cancelled) {
            return true;
        }
        Subscriber<? super O> d = out.downstream;
        MpscChunkedArrayQueue<Runnable> ctl = control;
        return d != null && (pendingError != null || out.hasDemand() || (out.outBuffered == 0 && completeRequested
                && mailbox.isEmpty() && (ctl == null || ctl.isEmpty())));
    }

    // ================================================================== the actor's turn

    private void runTurn(Turn turn) {
        // inside Schedulers.onScheduleHook (the carrier decorates each turn: Turn), and inside the subscriber's
        // thread locals under Reactor's automatic context propagation, as its publishOn's map would run
        try (ContextThreadLocals.Scope ignored = ContextThreadLocals.open(subscriberContext)) {
            loop(turn);
        } finally {
            if (unreturnedCredits > 0 && (unreturnedCredits >= credits.replenishBatch || mailbox.isEmpty() || done)) {
                int n = unreturnedCredits;
                unreturnedCredits = 0;
                credits.returnCredits(n);
            }
        }
    }

    private void loop(Turn turn) {
        for (;;) {
            if (done) {
                return;
            }
            if (cancelled) {
                terminate(null, false);
                return;
            }
            Subscriber<? super O> d = out.downstream;
            Throwable err = pendingError;
            if (err != null && d != null) {
                if (cell.isSuspended()) {
                    // a suspension made while this turn ran (the user's, a resumeAfter) holds the terminal signal
                    // too: it is delivered when resumed (the class doc), as a completion is
                    return;
                }
                terminate(err, true);
                return;
            }
            // a timer's task waits like a message (ActorContext.schedule): for a subscriber, a flushed out
            // buffer and demand, so what a periodic task emits cannot pile up while nobody requests
            MpscChunkedArrayQueue<Runnable> ctl = control;
            boolean tasks = ctl != null && !ctl.isEmpty();
            if (d == null) {
                if (tasks || !mailbox.isEmpty() || completeRequested || err != null) {
                    if (suspendForBackpressure()) {
                        return;
                    }
                    continue;
                }
                return;
            }
            if (out.outBuffered > 0) {
                out.flush(d);
                if (out.outBuffered > 0) {
                    if (suspendForBackpressure()) {
                        return;
                    }
                    continue;
                }
            }
            if (tasks) {
                if (!turn.shouldContinue()) {
                    return;
                }
                if (!out.hasDemand()) {
                    if (suspendForBackpressure()) {
                        return;
                    }
                    continue;
                }
                Runnable task = ctl.poll();
                if (task != null) {
                    turn.run(task);
                }
                continue; // demand, the out buffer and the quota again before the next task or message
            }
            I msg = mailbox.peek();
            if (msg == null) {
                Runnable seam = afterEmptyPeekForTest;
                if (seam != null) {
                    seam.run();
                }
                if (completeRequested && !cell.isSuspended()) { // a suspension holds the completion too
                    // the flag was read after the peek: a producer may have told a message and completed in
                    // between. Its message was published before the flag (tell, or an upstream's onNext, returned
                    // before complete() or onComplete was called), so after this volatile read of the flag the
                    // mailbox shows it: look again, and process it first (completing here discarded it, though
                    // tell had answered true)
                    // tasks already due run first too (ActorContext#schedule), also one whose timer the timer
                    // thread has not fired yet: handed to the control queue here. Read before the control queue
                    // (the order ActorTimers.handOverDueTasks argues)
                    if (ActorTimers.handOverDueTasks(timers)) {
                        continue;
                    }
                    MpscChunkedArrayQueue<Runnable> timed = control;
                    if (!mailbox.isEmpty() || (timed != null && !timed.isEmpty())) {
                        continue;
                    }
                    if (mailbox.size() > 0) {
                        // the head's place is claimed and not yet written (its producer is between the claim and the
                        // store, e.g. descheduled), so isEmpty() said "empty"; messages behind it may have been told
                        // and answered before the completion was requested, and completing here discarded them
                        // (found by a black-box probe). size() counts claimed places: every claim of a message
                        // accepted before complete() precedes its return, which precedes the flag's write, which
                        // precedes this turn's read of the flag; all volatile, so this read sees it. Wait for the
                        // store: end the turn (hasWork() is true while completion is requested, so the actor is
                        // queued again, behind the others, instead of spinning on the carrier)
                        return;
                    }
                    terminate(null, true);
                }
                return;
            }
            if (!turn.shouldContinue()) {
                // after the peek, not before: a suspend() made before this message was told is seen here (its
                // status write precedes the enqueue this peek saw), so that message waits for the resume;
                // also the quota, the preemption check and a stopping scheduler
                return;
            }
            if (!out.hasDemand()) {
                if (suspendForBackpressure()) {
                    return;
                }
                continue;
            }
            boolean consumed;
            turn.beginTask();
            inBehaviour = true;
            try {
                consumed = behaviour.onMessage(msg, context);
                if (consumed) {
                    attempt = 0;
                    PROCESSED.setOpaque(this, processedMessages + 1);
                }
            } catch (Throwable t) {
                // the user code's error through Hooks.onOperatorError (global, or local to the subscriber's
                // context), as Reactor's operators pass theirs; the policy acts on what the hook returns
                Throwable e = Internals.onOperatorError(t, msg, out.discardContext()); // a fatal one as is
                if (Internals.isFatalOrBubbling(e)) {
                    // never an endless retry of the same message: the actor fails with it whatever its
                    // policy, then the error goes on to the carrier, which reports it and survives (a
                    // bubbling error is meant to escape the stream, as Exceptions.throwIfFatal has it
                    // escape Reactor's operators to Schedulers.onHandleError); also when the hook threw it
                    fail(e);
                    if (e instanceof Error fatal) {
                        throw fatal;
                    }
                    throw (RuntimeException) e; // a bubbling error is a RuntimeException
                }
                consumed = onBehaviourError(msg, e);
            } finally {
                inBehaviour = false;
                turn.endTask();
            }
            if (!consumed) {
                return;
            }
            mailbox.poll();
            if (++unreturnedCredits >= credits.replenishBatch) {
                int n = unreturnedCredits;
                unreturnedCredits = 0;
                credits.returnCredits(n);
            }
        }
    }

    private void countSkipped() {
        SKIPPED.setOpaque(this, skippedMessages + 1);
    }

    /** @return messages the behaviour consumed (any thread; opaque read) */
    long processedMessages() {
        return (long) PROCESSED.getOpaque(this);
    }

    /** @return messages skipped by the error policy (any thread; opaque read) */
    long skippedMessages() {
        return (long) SKIPPED.getOpaque(this);
    }

    /** @return {@code true} if the message leaves the mailbox */
    private boolean onBehaviourError(I msg, Throwable t) {
        switch (policy.kind()) {
            case SKIP:
                countSkipped();
                Operators.onDiscard(msg, out.discardContext());
                return true;
            case RETRY:
                attempt++;
                if (attempt <= policy.maxRetries()) {
                    ActorTimers.ResumeTimer backoff = ActorTimers.resumeAfter(this, policy.backoff(attempt));
                    retryBackoff = backoff;
                    if (cancelled || pendingError != null) {
                        backoff.resumeNow(); // a cancel or failure before the store above: see retryBackoff
                    }
                    return false;
                }
                attempt = 0;
                if (policy.skipWhenExhausted()) {
                    countSkipped();
                    Operators.onDiscard(msg, out.discardContext());
                    return true;
                }
                fail(t);
                return false;
            case STOP:
            default:
                fail(t);
                return false;
        }
    }

    /** Ends the actor (the turn or drainTerminated only: the thread holding {@code SCHEDULED}). */
    private void terminate(Throwable error, boolean signal) {
        if (done) {
            return;
        }
        done = true;
        cancelTimers();
        credits.close(error);
        if (signal) {
            // what the mailbox holds goes to the discard hook before the terminal signal, as Reactor's operators
            // discard their queue before onError: a subscriber (a StepVerifier) that checks the discards once it
            // saw the error finds them all; what is told meanwhile is discarded by drainTerminated
            discardMailbox();
        }
        try {
            out.terminate(error, signal);
        } finally {
            // also when the subscriber's onError or onComplete throws (rule 2.13 broken downstream; the error
            // goes on to the turn, which reports it): the cell must leave its group all the same, or it stays
            // counted as a live actor, reachable from the group's set, and keeps a client-named group from retiring
            cell.terminate();
        }
    }

    /** Hands the mailbox's messages to the subscriber's discard hook (the mailbox's consumer only). */
    private void discardMailbox() {
        I m;
        Context discard = out.discardContext();
        while ((m = mailbox.poll()) != null) {
            Operators.onDiscard(m, discard);
        }
    }

    // ================================================================== the behaviour's timers

    /**
     * Tracks a timer about to be armed, until it fires or is disposed ({@link #untrackTimer}); a timer
     * tracked after the actor terminated is cancelled here. No timer escapes the termination: this writes
     * the set, then reads {@code done}; {@link #terminate} writes {@code done}, then reads the set
     * ({@link #cancelTimers}); all of it volatile or the set's own synchronisation, so at least one of the
     * two sees the other's write, and cancelling twice is harmless.
     */
    void trackTimer(ActorTimers.ActorTimer t) {
        Set<ActorTimers.ActorTimer> set = timers;
        if (set == null) {
            Set<ActorTimers.ActorTimer> created = ConcurrentHashMap.newKeySet();
            @SuppressWarnings("unchecked")
            Set<ActorTimers.ActorTimer> witness =
                    (Set<ActorTimers.ActorTimer>) TIMERS.compareAndExchange(this, null, created);
            set = witness == null ? created : witness;
        }
        set.add(t);
        if (done) {
            t.cancelOnTermination();
        }
    }

    /** A timer fired or was disposed (any thread). */
    void untrackTimer(ActorTimers.ActorTimer t) {
        Set<ActorTimers.ActorTimer> set = timers;
        if (set != null) {
            set.remove(t);
        }
    }

    /** Disarms the timers still armed (after {@code done} was set). */
    private void cancelTimers() {
        Set<ActorTimers.ActorTimer> set = timers;
        if (set != null) {
            for (ActorTimers.ActorTimer t : set) {
                t.cancelOnTermination(); // removes it from the set: the iterator is weakly consistent
            }
        }
    }

    // ================================================================== the schedulable cell

    /**
     * The actor as the engine sees it: an inner class, so that all the state its hooks read is the
     * outer instance's. It joins its group ({@link ActorCell#joinGroup()}) at the end of the outer
     * constructor, when that state is assigned: from then on another thread (a group shutdown, metrics)
     * may call its hooks.
     */
    private final class Cell extends ActorCell {

        Cell(String path, int weight) {
            super(engine, Internals.schedulingGroup(group), path, weight);
        }

        @Override
        protected boolean hasWork() {
            MpscChunkedArrayQueue<Runnable> ctl = control;
            if (ctl != null && !ctl.isEmpty()) {
                return true;
            }
            if (done || isTerminated()) {
                // after termination only queued items are work (to be drained); flags such as
                // 'cancelled' or 'pendingError' stay set forever and must not keep the drain loop going
                return !mailbox.isEmpty();
            }
            if (cancelled) {
                return true;
            }
            if (out.downstream == null) {
                return false;
            }
            return pendingError != null || !mailbox.isEmpty() || out.outBuffered > 0 || completeRequested;
        }

        /**
         * The message in progress is still at the head of the mailbox (it leaves only once the
         * behaviour consumed it), so it does not count as more work. {@code size()} read by the
         * consumer is never above the truth (the producers' count may be stale, its own is not).
         */
        @Override
        protected boolean hasWorkAfterCurrentTask() {
            MpscChunkedArrayQueue<Runnable> ctl = control;
            return (ctl != null && !ctl.isEmpty()) || out.outBuffered > 0 || mailbox.size() > (inBehaviour ? 1 : 0);
        }

        @Override
        public int pendingWork() {
            return mailbox.size();
        }

        /** Claimed places count while a subscriber is there to process them (see {@link #hasWork()}). */
        @Override
        public boolean hasClaimedWork() {
            return !done && out.downstream != null && mailbox.size() > 0;
        }

        @Override
        public boolean awaitsTimer() {
            // the tracked timers are the actor's armed resumeAfter, retry back-off and schedule timers, each
            // untracked once it fired or was disposed (ActorTimers)
            Set<ActorTimers.ActorTimer> t = timers;
            return (t != null && !t.isEmpty()) || super.awaitsTimer();
        }

        @Override
        protected void runTurn(Turn turn) {
            ActorTurnLoop.this.runTurn(turn);
        }

        @Override
        protected void drainTerminated() {
            if (!done && cancelled) {
                ActorTurnLoop.this.terminate(null, false); // the downstream cancelled: nothing to tell it
            } else if (!done) {
                // disposed (Actor.dispose: its CancellationException is pending), or the scheduler was
                // disposed under a live actor (then the rejection): tell downstream instead of hanging. The
                // rejection only when no error is pending: making one counts a rejected task and runs the
                // error hooks, which a plain dispose() must not (it rejected nothing)
                if (pendingError == null) {
                    PENDING_ERROR.compareAndSet(ActorTurnLoop.this, null, engine.rejectSignal(out.discardContext()));
                }
                ActorTurnLoop.this.terminate(pendingError, true);
            }
            discardMailbox();
            MpscChunkedArrayQueue<Runnable> ctl = control;
            Runnable dropped;
            while (ctl != null && (dropped = ctl.poll()) != null) {
                // timers and control tasks of a terminated actor are dropped; a fired timer's handle is settled
                if (dropped instanceof ActorTimers.Due due) {
                    due.discarded();
                }
            }
        }
    }
}
