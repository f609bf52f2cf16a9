package io.reactoractor.actor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.scheduling.TimerEntry;
import io.reactoractor.internal.scheduling.Turn;
import org.reactivestreams.Processor;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * An actor exposed as a Reactive Streams pair: a bounded mailbox fed by one or more inbound
 * {@link Subscriber}s (or by {@link #tell}/{@link #send}), a {@link Behaviour} run in fair turns on an
 * {@link ActorScheduler}, and a unicast outbound {@link org.reactivestreams.Publisher}.
 *
 * <h2>Inbound: demand = free mailbox space</h2>
 * The actor owns {@code capacity} credits. The actor's own {@link Subscriber} side (the
 * {@link Processor}, e.g. {@code flux.subscribe(actor)}) requests all of them up front when it is the
 * only upstream ({@code capacity / n} each when {@code n} upstreams feed the actor). Extra upstreams
 * attached with {@link #newSubscriber()} are granted at most {@code max(1, capacity / 4)} outstanding
 * at a time, because demand cannot be taken back: an upstream that holds demand but never sends would
 * otherwise starve the others (only an upstream that is sole holder of its window can still hold it).
 * Credits come back as messages leave the mailbox, in batches of {@code max(1, capacity / 4)} (or when
 * the mailbox empties), waiting {@link #send}s first. So the total outstanding demand of all
 * upstreams plus the messages waiting never exceeds the capacity, and a compliant upstream can never
 * overflow it. An upstream that sends more than it was asked for fails the actor with an overflow
 * error (never a silent drop). {@link #tell} takes one credit or returns {@code false} (counted as
 * {@code reactor.actor.mailbox.full}); {@link #send} waits for a credit without blocking a thread.
 *
 * <h2>Outbound: no demand = suspended</h2>
 * The behaviour is only called while downstream demand is available. When it is exhausted the actor
 * <em>suspends</em> (messages stay in the mailbox, so inbound demand stops and backpressure reaches
 * upstream); {@code request(n)} <em>resumes</em> it. The outbound publisher is <b>unicast</b>: a second
 * subscriber is rejected with {@code onError(IllegalStateException)}; use {@code Flux.from(actor).share()}
 * or {@code publish()} to multicast.
 *
 * <h2>Termination</h2>
 * <ul>
 *   <li>Completion: when every inbound subscriber completed (and the mailbox drained), or after
 *       {@link #complete()}: {@code onComplete} downstream once the mailbox is empty.</li>
 *   <li>Upstream error, or a behaviour error under {@link ErrorPolicy#stop()}: {@code onError}
 *       downstream at once, other upstreams cancelled, messages still in the mailbox discarded.</li>
 *   <li>Downstream cancellation: the actor stops and cancels its upstreams.</li>
 *   <li>{@code request(n <= 0)}: {@code onError(IllegalArgumentException)} (rule 3.9).</li>
 * </ul>
 * Terminal signals are delivered on the actor's turn; a user-suspended actor delivers them when
 * resumed.
 *
 * @param <I> inbound message type
 * @param <O> outbound result type
 */
public final class Actor<I, O> implements Processor<I, O>, Scannable {

    private static final VarHandle BP_SUSPENDED;

    static {
        try {
            BP_SUSPENDED = MethodHandles.lookup().findVarHandle(Actor.class, "bpSuspended", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final AtomicLong SEQ = new AtomicLong();

    /** Replaces the subscriber in {@code subscriberSlot} once the actor terminated (rule 3.13). */
    private static final Subscriber<Object> TERMINATED_SUBSCRIBER = new Subscriber<>() {
        @Override
        public void onSubscribe(Subscription s) {
        }

        @Override
        public void onNext(Object o) {
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
        }
    };

    @SuppressWarnings("unchecked")
    private static <O> Subscriber<? super O> terminatedSubscriber() {
        return (Subscriber<? super O>) (Subscriber<?>) TERMINATED_SUBSCRIBER;
    }

    private final ActorGroup group;
    private final SchedulerEngine engine;
    private final Cell cell;
    private final int capacity;
    private final int replenishBatch;
    private final Behaviour<I, O> behaviour;
    private final ErrorPolicy policy;
    private final MpscChunkedArrayQueue<I> mailbox = new MpscChunkedArrayQueue<>();
    private final MpscChunkedArrayQueue<Runnable> control = new MpscChunkedArrayQueue<>();
    private final BehaviourContext context = new BehaviourContext();
    private final InboundPort primary;

    // ---- inbound credits (hub); lists guarded by 'this'
    private final AtomicLong freeCredits;
    private final List<InboundPort> ports = new ArrayList<>();
    private final ArrayDeque<PendingSend> pendingSends = new ArrayDeque<>();
    private int openPorts;
    private boolean anyPortAttached;

    // ---- outbound
    private final AtomicReference<Subscriber<? super O>> subscriberSlot = new AtomicReference<>();
    private volatile Subscriber<? super O> downstream;
    private final AtomicLong requested = new AtomicLong();
    private final OutboundSubscription outbound = new OutboundSubscription();
    private volatile boolean bpSuspended;

    /** Suspensions by the user or the behaviour, counted apart from the actor's own (see {@link #resume()}). */
    private final java.util.concurrent.atomic.AtomicInteger userSuspensions = new java.util.concurrent.atomic.AtomicInteger();

    // ---- actor-thread state
    private long emitted;
    private final ArrayDeque<O> outBuffer = new ArrayDeque<>();
    private volatile int outBuffered;
    /** Whether the behaviour is running on the current message (actor-confined: the run-next hint). */
    private boolean inBehaviour;
    private int unreturnedCredits;
    private int attempt;

    // ---- terminal state
    private volatile Throwable pendingError;
    private volatile boolean completeRequested;
    private volatile boolean cancelled;
    private volatile boolean done;

    private final LongAdder skippedMessages = new LongAdder();
    private final LongAdder processedMessages = new LongAdder();

    private Actor(Builder<I, O> b) {
        this.group = b.group;
        this.engine = Internals.engine(b.group);
        this.capacity = b.capacity;
        this.replenishBatch = Math.max(1, b.capacity / 4);
        this.behaviour = b.behaviour;
        this.policy = b.policy;
        this.freeCredits = new AtomicLong(b.capacity);
        String name = b.name != null ? b.name : "actor-" + SEQ.incrementAndGet();
        this.cell = new Cell(group.name() + "/" + name, b.weight);
        this.primary = new InboundPort(Context.empty());
    }

    // ================================================================== factories

    /**
     * @param scheduler an {@link ActorScheduler} (its default group) or one of its {@link ActorGroup}s
     * @param <I>       inbound type
     * @param <O>       outbound type
     * @return a builder
     * @throws IllegalArgumentException if {@code scheduler} is not an actor scheduler or group
     */
    public static <I, O> Builder<I, O> builder(Scheduler scheduler) {
        return new Builder<>(groupOf(scheduler));
    }

    /**
     * An actor that passes every message downstream unchanged: the building block of
     * {@link ActorOperators#publishOn(Scheduler)} and the TCK's identity processor.
     *
     * @param scheduler an {@link ActorScheduler} or one of its groups
     * @param capacity  the mailbox capacity (≥ 1)
     * @param <T>       the element type
     * @return a new identity actor
     */
    public static <T> Actor<T, T> identity(Scheduler scheduler, int capacity) {
        return Actor.<T, T>builder(scheduler).capacity(capacity).behaviour(Behaviour.identity()).build();
    }

    static ActorGroup groupOf(Scheduler scheduler) {
        if (scheduler instanceof ActorScheduler s) {
            return s.defaultGroup();
        }
        if (scheduler instanceof ActorGroup g) {
            return g;
        }
        throw new IllegalArgumentException("scheduler must be an ActorScheduler or an ActorGroup but was "
                + scheduler);
    }

    // ================================================================== public API

    /** @return the actor's path, {@code <group>/<name>} */
    public String path() {
        return cell.path();
    }

    /** @return the group this actor's CPU time is charged to */
    public ActorGroup group() {
        return group;
    }

    /** @return the mailbox capacity (= the most demand all upstreams together are granted) */
    public int capacity() {
        return capacity;
    }

    /** @return messages waiting in the mailbox */
    public int mailboxSize() {
        return mailbox.size();
    }

    /** @return messages dropped by {@link ErrorPolicy#skip()} or {@link ErrorPolicy#retryThenSkip} */
    public long skippedMessages() {
        return skippedMessages.sum();
    }

    /** @return messages the behaviour completed */
    public long processedMessages() {
        return processedMessages.sum();
    }

    /** @return whether the actor is suspended (by itself, by the user, or for lack of downstream demand) */
    public boolean isSuspended() {
        return cell.isSuspended();
    }

    /**
     * Suspends the actor (re-entrant); see {@link io.reactoractor.ActorWorker#suspend()}. A user
     * suspension is counted apart from the actor's own ones (no downstream demand, an error policy's
     * back-off): {@link #resume()} only ever lifts a user suspension.
     */
    public void suspend() {
        userSuspensions.incrementAndGet();
        cell.suspend();
    }

    /**
     * Lifts one user suspension ({@link #suspend()}, {@link ActorContext#suspend()}, or a cancelled
     * {@link ActorContext#resumeAfter}). The actor's own suspensions (waiting for downstream demand,
     * an error policy's back-off) are never lifted here: they end when demand arrives or the back-off
     * elapses.
     *
     * @return {@code true} if a user suspension was lifted, {@code false} if there was none
     */
    public boolean resume() {
        return resumeUser();
    }

    private boolean resumeUser() {
        for (;;) {
            int n = userSuspensions.get();
            if (n == 0) {
                return false;
            }
            if (userSuspensions.compareAndSet(n, n - 1)) {
                cell.resume();
                return true;
            }
        }
    }

    /** @return whether the actor terminated (completed, failed or cancelled) */
    public boolean isTerminated() {
        return done || cell.isTerminated();
    }

    /**
     * A new inbound subscriber feeding this actor; each upstream needs its own (rule 2.5). All of them
     * share the mailbox's credits.
     *
     * @return a subscriber to subscribe to an upstream publisher
     */
    public CoreSubscriber<I> newSubscriber() {
        return new InboundPort(Context.empty());
    }

    /**
     * Like {@link #newSubscriber()}, exposing {@code context} to the upstream (Reactor context propagation).
     *
     * @param context the context
     * @return a subscriber
     */
    public CoreSubscriber<I> newSubscriber(reactor.util.context.ContextView context) {
        return new InboundPort(Context.of(Objects.requireNonNull(context, "context")));
    }

    /**
     * Offers a message without waiting.
     *
     * @param message the message, not {@code null}
     * @return {@code false} if the mailbox is full (counted) or the actor terminated
     */
    public boolean tell(I message) {
        Objects.requireNonNull(message, "message");
        if (isTerminated()) {
            return false;
        }
        if (!tryAcquireCredit()) {
            engine.countMailboxFull();
            return false;
        }
        enqueue(message);
        return true;
    }

    /**
     * Sends a message, waiting (without blocking a thread) for mailbox space.
     *
     * @param message the message, not {@code null}
     * @return completes when the message was accepted; errors if the actor terminated first
     */
    public Mono<Void> send(I message) {
        Objects.requireNonNull(message, "message");
        return Mono.create(sink -> {
            if (isTerminated()) {
                sink.error(new IllegalStateException("actor " + path() + " is terminated"));
                return;
            }
            if (tryAcquireCredit()) {
                enqueue(message);
                sink.success();
                return;
            }
            PendingSend p = new PendingSend(message, sink);
            boolean queued;
            synchronized (this) {
                // terminate() sets 'done' and then drains pendingSends under this lock: re-checked
                // here, under the same lock, a send either is drained by it or sees 'done' itself
                queued = !done;
                if (queued) {
                    pendingSends.addLast(p);
                }
            }
            if (!queued) {
                sink.error(new IllegalStateException("actor " + path() + " is terminated"));
                return;
            }
            sink.onCancel(() -> {
                synchronized (this) {
                    pendingSends.remove(p);
                }
            });
            distribute();
        });
    }

    /** Completes the actor: {@code onComplete} downstream once the mailbox drained; upstreams are cancelled. */
    public void complete() {
        completeRequested = true;
        wake();
    }

    // ================================================================== Processor (primary inbound port)

    @Override
    public void onSubscribe(Subscription s) {
        primary.onSubscribe(s);
    }

    @Override
    public void onNext(I t) {
        primary.onNext(t);
    }

    @Override
    public void onError(Throwable t) {
        primary.onError(t);
    }

    @Override
    public void onComplete() {
        primary.onComplete();
    }

    // ================================================================== Publisher (unicast)

    @Override
    public void subscribe(Subscriber<? super O> s) {
        Objects.requireNonNull(s, "subscriber");
        if (!subscriberSlot.compareAndSet(null, s)) {
            if (subscriberSlot.get() == TERMINATED_SUBSCRIBER) {
                Throwable e = pendingError;
                Operators.error(s, e != null ? e : new IllegalStateException("Actor " + path()
                        + " is terminated and allows only a single Subscriber (unicast)"));
                return;
            }
            Operators.error(s, new IllegalStateException("Actor " + path()
                    + " allows only a single Subscriber (unicast); use share() or publish() to multicast"));
            return;
        }
        s.onSubscribe(outbound);
        downstream = s;
        wake();
    }

    // ================================================================== Scannable

    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return path();
        }
        if (key == Attr.PARENT) {
            return group;
        }
        if (key == Attr.CAPACITY || key == Attr.PREFETCH) {
            return capacity;
        }
        if (key == Attr.BUFFERED) {
            return mailbox.size();
        }
        if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
            return requested.get();
        }
        if (key == Attr.TERMINATED) {
            return isTerminated();
        }
        if (key == Attr.CANCELLED) {
            return cancelled;
        }
        if (key == Attr.ERROR) {
            return pendingError;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String toString() {
        return "Actor[" + path() + ", capacity=" + capacity + "]";
    }

    // ================================================================== inbound credits

    private boolean tryAcquireCredit() {
        for (;;) {
            long f = freeCredits.get();
            if (f <= 0) {
                return false;
            }
            if (freeCredits.compareAndSet(f, f - 1)) {
                return true;
            }
        }
    }

    private void enqueue(I message) {
        mailbox.offer(message);
        // false when terminated meanwhile: the message is then discarded with the rest of the mailbox
        cell.signal();
    }

    private void attach(InboundPort port) {
        synchronized (this) {
            ports.add(port);
            openPorts++;
            anyPortAttached = true;
        }
        distribute();
    }

    private void portClosed(InboundPort port, Throwable error) {
        boolean completeNow = false;
        synchronized (this) {
            if (ports.remove(port)) {
                openPorts--;
                freeCredits.addAndGet(port.outstanding.getAndSet(0));
                completeNow = error == null && openPorts == 0 && anyPortAttached;
            }
        }
        if (error != null) {
            fail(error);
        } else if (completeNow) {
            completeRequested = true;
            wake();
        }
        distribute();
    }

    /** Called by the actor thread as messages leave the mailbox. */
    private void returnCredits(int n) {
        freeCredits.addAndGet(n);
        distribute();
    }

    /** Hands free credits to waiting senders first, then to inbound ports up to their fair share. */
    private void distribute() {
        List<PendingSend> accepted = null;
        List<InboundPort> granted = null;
        List<Long> grants = null;
        synchronized (this) {
            if (done) {
                return;
            }
            while (!pendingSends.isEmpty() && tryAcquireCredit()) {
                if (accepted == null) {
                    accepted = new ArrayList<>();
                }
                accepted.add(pendingSends.pollFirst());
            }
            if (openPorts > 0 && freeCredits.get() > 0) {
                long share = Math.max(1, capacity / openPorts);
                for (InboundPort p : ports) {
                    // the primary port (Processor API) may hold the whole capacity when alone; an extra
                    // port holds at most one replenish batch, so an idle upstream cannot sit on the
                    // credits the other upstreams, tell() and send() need (demand cannot be revoked)
                    long target = p == primary ? share : Math.min(share, replenishBatch);
                    long have = p.outstanding.get();
                    if (have >= target || p.closed) {
                        continue;
                    }
                    long f = freeCredits.get();
                    long give = Math.min(f, target - have);
                    if (give <= 0) {
                        break;
                    }
                    freeCredits.addAndGet(-give);
                    p.outstanding.addAndGet(give);
                    if (granted == null) {
                        granted = new ArrayList<>(ports.size());
                        grants = new ArrayList<>(ports.size());
                    }
                    granted.add(p);
                    grants.add(give);
                }
            }
        }
        if (accepted != null) {
            for (PendingSend p : accepted) {
                enqueue(p.message);
                p.sink.success();
            }
        }
        if (granted != null) {
            for (int i = 0; i < granted.size(); i++) {
                granted.get(i).request(grants.get(i));
            }
        }
    }

    // ================================================================== signals to the actor

    /** Records a failure (the first one wins) and makes sure the actor runs to deliver it. */
    private void fail(Throwable t) {
        if (pendingError == null) {
            pendingError = t;
        }
        wake();
    }

    /** Lifts the backpressure suspension if any, and schedules the actor if it has work. */
    private void wake() {
        if (bpSuspended && BP_SUSPENDED.compareAndSet(this, true, false)) {
            cell.resume();
        } else {
            cell.signal();
        }
    }

    /**
     * Suspends for lack of demand (or of a subscriber); undone at once if a wake-up raced with it.
     *
     * @return {@code true} if the actor stays suspended
     */
    private boolean suspendForBackpressure() {
        // Order matters: the cell is suspended *before* the flag is published. A wake() that runs in
        // between sees no flag and only signals (a no-op while we hold SCHEDULED), but it ran after its
        // state change (demand, subscriber, error), so the canProceed() re-check below sees that change.
        // Publishing the flag first would let wake() clear it and call resume() on a cell that is not
        // suspended yet: the resume is lost and the actor stays suspended forever.
        cell.suspend();
        if (!BP_SUSPENDED.compareAndSet(this, false, true)) {
            // already suspended for backpressure (only if a user resume() lifted our unit): keep one unit
            cell.resume();
        }
        if (canProceed() && BP_SUSPENDED.compareAndSet(this, true, false)) {
            cell.resume();
            return false;
        }
        return true;
    }

    private boolean canProceed() {
        if (cancelled || pendingError != null) {
            return true;
        }
        Subscriber<? super O> d = downstream;
        return d != null && (requested.get() - emitted > 0 || (outBuffered == 0 && completeRequested
                && mailbox.isEmpty()));
    }

    // ================================================================== the actor's turn

    private void runTurn(Turn turn) {
        try {
            loop(turn);
        } finally {
            if (unreturnedCredits > 0 && (unreturnedCredits >= replenishBatch || mailbox.isEmpty() || done)) {
                int n = unreturnedCredits;
                unreturnedCredits = 0;
                returnCredits(n);
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
            Subscriber<? super O> d = downstream;
            Throwable err = pendingError;
            if (err != null && d != null) {
                terminate(err, true);
                return;
            }
            Runnable task;
            while (turn.shouldContinue() && (task = control.poll()) != null) {
                turn.run(task);
            }
            if (d == null) {
                if (!mailbox.isEmpty() || completeRequested || err != null) {
                    if (suspendForBackpressure()) {
                        return;
                    }
                    continue;
                }
                return;
            }
            if (outBuffered > 0) {
                flush(d);
                if (outBuffered > 0) {
                    if (suspendForBackpressure()) {
                        return;
                    }
                    continue;
                }
            }
            if (!turn.shouldContinue()) {
                return;
            }
            I msg = mailbox.peek();
            if (msg == null) {
                if (completeRequested) {
                    terminate(null, true);
                }
                return;
            }
            if (requested.get() - emitted <= 0) {
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
                    processedMessages.increment();
                }
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                consumed = onBehaviourError(msg, t);
            } finally {
                inBehaviour = false;
                turn.endTask();
            }
            if (!consumed) {
                return;
            }
            mailbox.poll();
            if (++unreturnedCredits >= replenishBatch) {
                int n = unreturnedCredits;
                unreturnedCredits = 0;
                returnCredits(n);
            }
        }
    }

    /** @return {@code true} if the message leaves the mailbox */
    private boolean onBehaviourError(I msg, Throwable t) {
        switch (policy.kind()) {
            case SKIP:
                skippedMessages.increment();
                Operators.onDiscard(msg, reactor.util.context.Context.empty());
                return true;
            case RETRY:
                attempt++;
                if (attempt <= policy.maxRetries()) {
                    context.resumeAfter(policy.backoff(attempt));
                    return false;
                }
                attempt = 0;
                if (policy.skipWhenExhausted()) {
                    skippedMessages.increment();
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

    private void flush(Subscriber<? super O> d) {
        while (outBuffered > 0 && requested.get() - emitted > 0) {
            O v = outBuffer.pollFirst();
            outBuffered = outBuffer.size();
            emitted++;
            d.onNext(v);
        }
    }

    private void terminate(Throwable error, boolean signal) {
        if (done) {
            return;
        }
        done = true;
        List<InboundPort> toCancel;
        List<PendingSend> toFail;
        synchronized (this) {
            toCancel = new ArrayList<>(ports);
            ports.clear();
            openPorts = 0;
            toFail = new ArrayList<>(pendingSends);
            pendingSends.clear();
        }
        for (InboundPort p : toCancel) {
            p.cancelUpstream();
        }
        primary.cancelUpstream();
        IllegalStateException gone = new IllegalStateException("actor " + path() + " is terminated");
        for (PendingSend p : toFail) {
            p.sink.error(error != null ? error : gone);
        }
        Subscriber<? super O> d = downstream;
        downstream = null;
        // rule 3.13: drop the reference to the subscriber; the sentinel keeps rejecting later subscribers
        subscriberSlot.set(terminatedSubscriber());
        outBuffer.clear();
        outBuffered = 0;
        if (signal && d != null) {
            if (error != null) {
                d.onError(error);
            } else {
                d.onComplete();
            }
        }
        cell.terminate();
    }

    // ================================================================== inner types

    private final class Cell extends ActorCell {

        Cell(String path, int weight) {
            super(Internals.engine(Actor.this.group), Internals.schedulingGroup(Actor.this.group), path, weight);
        }

        @Override
        protected boolean hasWork() {
            if (!control.isEmpty()) {
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
            if (downstream == null) {
                return false;
            }
            return pendingError != null || !mailbox.isEmpty() || outBuffered > 0 || completeRequested;
        }

        /**
         * The message in progress is still at the head of the mailbox (it leaves only once the
         * behaviour consumed it), so it does not count as more work. {@code size()} read by the
         * consumer is never above the truth (the producers' count may be stale, its own is not).
         */
        @Override
        protected boolean hasWorkAfterCurrentTask() {
            return !control.isEmpty() || outBuffered > 0 || mailbox.size() > (inBehaviour ? 1 : 0);
        }

        @Override
        public int pendingWork() {
            return mailbox.size();
        }

        @Override
        protected void runTurn(Turn turn) {
            Actor.this.runTurn(turn);
        }

        @Override
        protected void drainTerminated() {
            if (!done) {
                // the scheduler was disposed under a live actor: tell downstream instead of hanging
                Throwable rejected = engine.reject();
                if (pendingError == null) {
                    pendingError = rejected;
                }
                Actor.this.terminate(rejected, true);
            }
            I m;
            while ((m = mailbox.poll()) != null) {
                Operators.onDiscard(m, reactor.util.context.Context.empty());
            }
            while (control.poll() != null) {
                // timers and control tasks of a terminated actor are dropped
            }
        }
    }

    /** The context handed to the behaviour (actor thread only, except the timers it arms). */
    private final class BehaviourContext implements ActorContext<O> {

        @Override
        public void emit(O result) {
            Objects.requireNonNull(result, "result");
            Subscriber<? super O> d = downstream;
            if (d != null && outBuffered == 0 && requested.get() - emitted > 0) {
                emitted++;
                d.onNext(result);
            } else {
                outBuffer.addLast(result);
                outBuffered = outBuffer.size();
            }
        }

        @Override
        public void suspend() {
            Actor.this.suspend();
        }

        @Override
        public boolean resume() {
            return resumeUser();
        }

        @Override
        public Disposable resumeAfter(Duration delay) {
            Objects.requireNonNull(delay, "delay");
            cell.suspend();
            ResumeTimer t = new ResumeTimer();
            if (!engine.scheduleTimer(t, System.nanoTime() + Math.max(0L, delay.toNanos()))) {
                cell.resume();
            }
            return t;
        }

        @Override
        public Disposable schedule(Duration delay, Runnable task) {
            Objects.requireNonNull(delay, "delay");
            Objects.requireNonNull(task, "task");
            ControlTimer t = new ControlTimer(task);
            if (!engine.scheduleTimer(t, System.nanoTime() + Math.max(0L, delay.toNanos()))) {
                throw engine.reject();
            }
            return t;
        }

        @Override
        public String path() {
            return cell.path();
        }

        @Override
        public String group() {
            return group.name();
        }

        @Override
        public int attempt() {
            return attempt;
        }
    }

    /** Resumes the actor when due (runs on the timer thread: resume is thread-safe). */
    /**
     * Resumes the actor when due (runs on the timer thread: resume is thread-safe). Exactly one of
     * {@link #fire()} and {@link #dispose()} settles the suspension it holds: firing lifts it;
     * disposing first hands it to the user, so {@link Actor#resume()} lifts it (as documented on
     * {@link ActorContext#resumeAfter}).
     */
    private final class ResumeTimer extends TimerEntry implements Disposable {
        private final java.util.concurrent.atomic.AtomicBoolean settled = new java.util.concurrent.atomic.AtomicBoolean();

        @Override
        protected void fire() {
            if (settled.compareAndSet(false, true)) {
                cell.resume();
            }
        }

        @Override
        protected boolean awaitedOnShutdown() {
            return true;
        }

        @Override
        public void dispose() {
            if (settled.compareAndSet(false, true)) {
                engine.cancelTimer(this);
                userSuspensions.incrementAndGet();
            }
        }

        @Override
        public boolean isDisposed() {
            return settled.get();
        }
    }


    /** Delivers a task into the actor's control mailbox when due. */
    private final class ControlTimer extends TimerEntry implements Disposable {
        private final Runnable task;
        private volatile boolean disposed;

        ControlTimer(Runnable task) {
            this.task = task;
        }

        @Override
        protected void fire() {
            if (!disposed) {
                control.offer(() -> {
                    if (!disposed) {
                        disposed = true;
                        task.run();
                    }
                });
                cell.signal();
            }
        }

        @Override
        protected boolean awaitedOnShutdown() {
            return true;
        }

        @Override
        public void dispose() {
            if (!disposed) {
                disposed = true;
                engine.cancelTimer(this);
            }
        }

        @Override
        public boolean isDisposed() {
            return disposed;
        }
    }

    private final class OutboundSubscription implements Subscription {
        @Override
        public void request(long n) {
            if (n <= 0) {
                fail(new IllegalArgumentException(
                        "§3.9 violated: positive request amount required but it was " + n));
                return;
            }
            for (;;) {
                long r = requested.get();
                long u = r + n < 0 ? Long.MAX_VALUE : r + n;
                if (r == Long.MAX_VALUE || requested.compareAndSet(r, u)) {
                    break;
                }
            }
            wake();
        }

        @Override
        public void cancel() {
            cancelled = true;
            wake();
        }
    }

    private final class InboundPort implements CoreSubscriber<I> {
        final AtomicLong outstanding = new AtomicLong();
        final AtomicReference<Subscription> upstream = new AtomicReference<>();
        final reactor.util.context.Context portContext;
        volatile boolean closed;

        InboundPort(reactor.util.context.Context context) {
            this.portContext = context;
        }

        @Override
        public reactor.util.context.Context currentContext() {
            return portContext;
        }

        @Override
        public void onSubscribe(Subscription s) {
            Objects.requireNonNull(s, "subscription");
            if (!upstream.compareAndSet(null, s)) {
                s.cancel(); // rule 2.5: one active subscription per subscriber
                return;
            }
            if (done || closed) {
                s.cancel();
                return;
            }
            attach(this);
        }

        @Override
        public void onNext(I t) {
            Objects.requireNonNull(t, "onNext");
            if (closed) {
                Operators.onDiscard(t, portContext);
                return;
            }
            if (outstanding.decrementAndGet() < 0) {
                outstanding.incrementAndGet();
                Operators.onDiscard(t, portContext);
                cancelUpstream();
                fail(Exceptions.failWithOverflow("Actor " + path()
                        + ": upstream sent more messages than it was asked for (rule 1.1); mailbox capacity "
                        + capacity));
                return;
            }
            mailbox.offer(t);
            cell.signal();
        }

        @Override
        public void onError(Throwable t) {
            Objects.requireNonNull(t, "onError");
            if (closed) {
                Operators.onErrorDropped(t, portContext);
                return;
            }
            closed = true;
            portClosed(this, t);
        }

        @Override
        public void onComplete() {
            if (closed) {
                return;
            }
            closed = true;
            portClosed(this, null);
        }

        void request(long n) {
            Subscription s = upstream.get();
            if (s != null && !closed) {
                s.request(n);
            }
        }

        void cancelUpstream() {
            closed = true;
            Subscription s = upstream.getAndSet(Operators.cancelledSubscription());
            if (s != null && s != Operators.cancelledSubscription()) {
                s.cancel();
            }
        }
    }

    private final class PendingSend {
        final I message;
        final MonoSink<Void> sink;

        PendingSend(I message, MonoSink<Void> sink) {
            this.message = message;
            this.sink = sink;
        }
    }

    // ================================================================== builder

    /**
     * Builds an {@link Actor}; every parameter is validated when set.
     *
     * @param <I> inbound type
     * @param <O> outbound type
     */
    public static final class Builder<I, O> {
        private final ActorGroup group;
        private String name;
        private int capacity = 256;
        private int weight = 1;
        private Behaviour<I, O> behaviour;
        private ErrorPolicy policy = ErrorPolicy.stop();

        private Builder(ActorGroup group) {
            this.group = group;
        }

        /**
         * @param name the actor's name inside its group: 1 to 128 characters, no {@code '/'}
         * @return this
         */
        public Builder<I, O> name(String name) {
            if (name == null || name.isEmpty() || name.length() > 128 || name.indexOf('/') >= 0) {
                throw new IllegalArgumentException("name must have 1 to 128 characters and no '/' but was '"
                        + name + "'");
            }
            this.name = name;
            return this;
        }

        /**
         * @param capacity mailbox capacity = total inbound demand, at least 1 (default 256)
         * @return this
         */
        public Builder<I, O> capacity(int capacity) {
            if (capacity < 1) {
                throw new IllegalArgumentException("capacity must be >= 1 but was " + capacity);
            }
            this.capacity = capacity;
            return this;
        }

        /**
         * @param weight the actor's weight inside its group, at least 1 (default 1)
         * @return this
         */
        public Builder<I, O> weight(int weight) {
            if (weight < 1) {
                throw new IllegalArgumentException("weight must be >= 1 but was " + weight);
            }
            this.weight = weight;
            return this;
        }

        /**
         * @param behaviour what the actor does with each message (required)
         * @return this
         */
        public Builder<I, O> behaviour(Behaviour<I, O> behaviour) {
            if (behaviour == null) {
                throw new IllegalArgumentException("behaviour must not be null");
            }
            this.behaviour = behaviour;
            return this;
        }

        /**
         * @param policy what to do when the behaviour throws (default {@link ErrorPolicy#stop()})
         * @return this
         */
        public Builder<I, O> errorPolicy(ErrorPolicy policy) {
            if (policy == null) {
                throw new IllegalArgumentException("errorPolicy must not be null");
            }
            this.policy = policy;
            return this;
        }

        /**
         * @return the actor (not yet subscribed to anything)
         * @throws IllegalArgumentException if no behaviour was set
         * @throws java.util.concurrent.RejectedExecutionException if the scheduler or group is disposed
         */
        public Actor<I, O> build() {
            if (behaviour == null) {
                throw new IllegalArgumentException("behaviour must be set");
            }
            if (group.isDisposed()) {
                throw Internals.engine(group).reject();
            }
            return new Actor<>(this);
        }
    }
}
