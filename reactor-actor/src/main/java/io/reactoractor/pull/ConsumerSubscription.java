package io.reactoractor.pull;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

import io.reactoractor.internal.Internals;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import org.reactivestreams.Subscription;

/**
 * One reactive consumer of a group: turns downstream demand into pulls of at most
 * {@code min(demand, batchSize)} messages, one pull in flight at a time, and delivers the answers.
 *
 * <p>Answers arrive on the {@code (subject, group)} actor's thread, one at a time (a single pull is outstanding), so
 * {@code onNext} calls never overlap. {@link #drain()} is a classic work-in-progress loop so that
 * {@code request} from any thread and answers from the actor never issue two pulls at once.
 *
 * <p>Cancellation sends a release to the group: every message delivered to this consumer and not yet
 * acknowledged is redelivered (to the group's other consumers, or to the next one that subscribes).
 *
 * <p>Nothing is signalled, and no pull goes out, before {@code onSubscribe} returned ({@link #subscribed()}):
 * a disposal or quiescence that finds this consumer earlier leaves its terminal signal for then. A quiescence
 * completes the stream (after an answer in progress) without a release: what was delivered stays in flight.
 */
final class ConsumerSubscription implements Subscription, Scannable, ConsumerGroupCommand.PullCallback {

    private static final AtomicLong IDS = new AtomicLong();

    private final ConsumerGroupActor actor;
    private final CoreSubscriber<? super Delivery> actual;
    private final ConsumerOptions options;
    private final FailurePolicy policy;
    private final long consumerId = IDS.incrementAndGet();
    private volatile long requested;
    private static final AtomicLongFieldUpdater<ConsumerSubscription> REQUESTED =
            AtomicLongFieldUpdater.newUpdater(ConsumerSubscription.class, "requested");
    private final AtomicInteger wip = new AtomicInteger();
    private volatile boolean pullInFlight;
    /**
     * The group answered a pull of this stream: its later pulls are never refused for {@code maxWaitingPulls}
     * ({@link ConsumerGroupCommand.Pull#admitted}). Written by the actor's thread in {@link #answer}, read when
     * the next pull is made, which follows the answer (one pull at a time: ordered by {@code pullInFlight}).
     */
    private volatile boolean admitted;
    /** {@link #answer} is running (on the group actor's thread); see {@link #pendingError}. */
    private volatile boolean delivering;
    private volatile ConsumerGroupCommand.Pull current;
    private volatile boolean cancelled;
    /** Set once, by CAS, by the one terminal signal delivered downstream. */
    private final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
    /**
     * A {@code request(n <= 0)}, the consumer's disposal or a failed pull ({@link #fail}): the first of
     * them is the stream's error, and waits until no answer is being delivered (rule 1.3: never
     * {@code onError} while the actor's thread is in {@code onNext}). The requester writes this and
     * {@code cancelled}, then reads {@link #delivering}; {@link #answer} writes {@code delivering = true},
     * reads {@code cancelled} before each {@code onNext}, and at its end writes {@code delivering = false}
     * and reads this. All volatile: either the requester sees an answer in progress (which then delivers
     * the error when it ends) or the answer sees the cancel before any {@code onNext}. The {@code done}
     * CAS lets exactly one of them signal. A pull still waiting in the group is dropped when cancelled,
     * never answered, so it does not count.
     */
    private final java.util.concurrent.atomic.AtomicReference<Throwable> pendingError =
            new java.util.concurrent.atomic.AtomicReference<>();
    private final java.util.concurrent.atomic.AtomicBoolean detached = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Set by the subscribing thread once {@code onSubscribe} returned: a terminal signal recorded before that
     * (a disposal or quiescence walking the consumer registry, which holds this consumer from before
     * {@code onSubscribe}) waits for it (rule 1.9). The walker writes {@link #pendingError}, then reads this;
     * the subscriber writes this, then reads {@link #pendingError} ({@link #subscribed()}): all volatile, so
     * at least one of them sees the other and signals, and the {@code done} CAS lets exactly one.
     */
    private volatile boolean subscribed;

    /**
     * The thread delivering an answer's {@code onNext} calls (the group actor's carrier), {@code null}
     * otherwise: a {@link #cancel} on it comes from inside the subscriber's {@code onNext}. Volatile: the
     * actor may run on another carrier next time, and a stale value must never match a thread that is
     * not delivering.
     */
    private volatile Thread deliveringThread;
    /**
     * A {@link #cancel} from inside {@code onNext} that came from Reactor's error path: the subscriber (or
     * an operator before it) caught the handler's exception, cancelled and signals {@code onError}
     * downstream, so its {@code onNext} returns normally (see {@link #cancelledByAFailingHandler}).
     * Written and read by the delivering thread only.
     */
    private boolean handlerFailed;

    /**
     * A {@link #cancel} from inside {@code onNext} by an operator that then drops the element instead of
     * passing it on ({@link #DROP_ORIGINS}): that message was not handled, so it is not acknowledged (the
     * cancel's release redelivers it). Written and read by the delivering thread only.
     */
    private boolean elementDropped;

    /**
     * Whether an {@code onNext} is in progress, and whether a cancel from another thread arrived during it
     * (the state machine, {@code AFTER_ON_NEXT} or not):
     * <pre>
     *   state      | event (thread)                                        | next
     *   -----------+-------------------------------------------------------+-----------------------------------
     *   IDLE       | answer() is about to call onNext (delivering thread)   | IN_ON_NEXT, then it reads cancelled
     *   IN_ON_NEXT | onNext returned (delivering thread, getAndSet)         | IDLE: the message was handled
     *   IN_ON_NEXT | cancel() from another thread through a RACE_FRAMES    | CANCELLED_DURING (CAS)
     *              | operator (after cancelled = true)                      |
     *   CANCELLED_ | onNext returned (delivering thread, getAndSet)         | IDLE: not acknowledged (the cancel's
     *   DURING     |                                                       | release redelivers it)
     * </pre>
     * Why: an operator that cancels from another thread may drop an element that arrives meanwhile
     * ({@code take(Duration)}'s timer cancels, then completes downstream, and its serialized downstream hands
     * an element that comes after the completion to {@code Hooks.onNextDropped}; a {@code SerializedSubscriber}
     * cancelled by a downstream timer discards it; the {@code onNext} returns normally), and this source
     * cannot see the drop. Which of the two came first cannot be known, so the message is redelivered: a
     * duplicate at worst. Any other cancel from another thread (a {@code dispose()}, a closed connection,
     * through no such operator) leaves the message in progress handled when its {@code onNext} returns
     * normally, as the ack mode says.
     *
     * <p>Ordering: a Dekker handshake on volatile accesses. The delivering thread writes {@code IN_ON_NEXT},
     * then reads {@code cancelled}; the canceller writes {@code cancelled}, then CASes this. So either the
     * message is not delivered, or the cancel marks it; a cancel that finds {@code IDLE} came after that
     * message's {@code onNext} returned.
     *
     * <p>A mitigation, not a guarantee: such an operator drops what arrives after <em>its own</em> cancel,
     * which reaches this source only later (on the cancelling thread, through the operators above it), so an
     * element that arrived, was dropped and returned in between is acknowledged (measured: 4 messages in 16
     * runs of about 14,500, each run 4 s of consumers timing out mid-delivery, against 6-10 per run without
     * this). The ack mode's Javadoc tells users of those operators to use {@link AckMode#EXPLICIT}.
     */
    private volatile int onNextState;
    private static final int IDLE = 0;
    private static final int IN_ON_NEXT = 1;
    private static final int CANCELLED_DURING = 2;
    private static final java.lang.invoke.VarHandle ON_NEXT_STATE;

    static {
        try {
            ON_NEXT_STATE = java.lang.invoke.MethodHandles.lookup()
                    .findVarHandle(ConsumerSubscription.class, "onNextState", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Told once when this consumer ends (cancelled or errored): the pull consumer's registry of live ones. */
    private final java.util.function.Consumer<ConsumerSubscription> onEnd;

    ConsumerSubscription(ConsumerGroupActor actor, CoreSubscriber<? super Delivery> actual, ConsumerOptions options,
            FailurePolicy policy, java.util.function.Consumer<ConsumerSubscription> onEnd) {
        this.onEnd = onEnd;
        this.actor = actor;
        this.actual = actual;
        this.options = options;
        this.policy = policy;
    }

    @Override
    public void request(long n) {
        if (cancelled) {
            return; // rule 3.6: a NOP once cancelled
        }
        if (n <= 0) {
            pendingError.compareAndSet(null,
                    new IllegalArgumentException("§3.9 violated: positive request amount required but it was " + n));
            cancel(); // no further pull; an answer in flight delivers nothing more (it checks 'cancelled')
            deliverPendingErrorIfIdle();
            return;
        }
        Operators.addCap(REQUESTED, this, n);
        drain();
    }

    @Override
    public void cancel() {
        if (cancelled) {
            // a second cancel from inside onNext: an operator that cancelled before passing the element on
            // (next()) forwards its downstream's cancel, which may come from a failing handler; a timeout()
            // whose timer cancelled first cancels again from its onNext as it drops the element
            if (deliveringThread == Thread.currentThread() && !handlerFailed && !elementDropped) {
                classifyCancelInsideOnNext();
            }
            return;
        }
        cancelled = true;
        if (deliveringThread == Thread.currentThread()) {
            classifyCancelInsideOnNext();
        } else if (onNextState == IN_ON_NEXT && cancelledByARacingOperator()) {
            // from another thread, by an operator that drops an element arriving after this cancel: the onNext
            // in progress may be dropping its element (see onNextState)
            ON_NEXT_STATE.compareAndSet(this, IN_ON_NEXT, CANCELLED_DURING);
        }
        ConsumerGroupCommand.Pull p = current;
        if (p != null) {
            p.cancelled = true;
        }
        actor.post(new ConsumerGroupCommand.Release(consumerId));
        detach();
    }

    /**
     * Whether a cancel made from inside the subscriber's {@code onNext} is Reactor's reaction to a failed
     * handler, not a {@code take(n)}, {@code next()} or {@code blockFirst()} that got what it wanted.
     * Reactor's subscribers and operators catch what a handler throws: {@code LambdaSubscriber}
     * ({@code subscribe(d -> ..)}) cancels in its {@code onNext}, the operators ({@code map},
     * {@code doOnNext}, {@code handle}, {@code BaseSubscriber}) through {@code Operators.onOperatorError}; then
     * they signal {@code onError} downstream, where this source cannot see it, and their {@code onNext}
     * returns normally. So the call stack tells them apart: past the chain of {@code cancel}/{@code dispose}
     * calls that carried the cancel up to here, the first frame is the one that started it. Walked only for
     * a cancel inside {@code onNext} (once per subscription), so its cost does not matter.
     */
    static boolean cancelledByAFailingHandler() {
        return cancelOrigin() == CancelOrigin.FAILURE;
    }

    /**
     * Whether a cancel from another thread passed through an operator that drops or discards an element
     * arriving after it ({@link #RACE_FRAMES}, anywhere on the cancelling thread's stack: the cancel reaches
     * this source through the operators' drain loops, so its first frame tells nothing). Walked only for a
     * cancel that finds an {@code onNext} in progress.
     */
    static boolean cancelledByARacingOperator() {
        return StackWalker.getInstance().walk(frames -> frames
                .anyMatch(f -> RACE_FRAMES.contains(f.getClassName() + "#" + f.getMethodName())));
    }

    /** A cancel from inside {@code onNext} (the delivering thread): what becomes of the element in progress. */
    private void classifyCancelInsideOnNext() {
        switch (cancelOrigin()) {
            case FAILURE -> handlerFailed = true; // answer() nacks the message instead of acknowledging it
            case DROP -> elementDropped = true; // answer() leaves it unacknowledged: redelivered
            default -> { } // a take(n), next(), blockFirst() or the application's own cancel: handled
        }
    }

    /**
     * What started a cancel from inside {@code onNext} (see {@link #cancelledByAFailingHandler}): a failing
     * handler, an operator dropping the element it is in {@code onNext} for, or anything else (the element was
     * handled).
     */
    enum CancelOrigin { FAILURE, DROP, OTHER }

    static CancelOrigin cancelOrigin() {
        return StackWalker.getInstance().walk(frames -> frames
                .dropWhile(f -> f.getClassName().equals(ConsumerSubscription.class.getName())
                        || CANCEL_CHAIN.contains(f.getMethodName()))
                .findFirst()
                .map(f -> {
                    String origin = f.getClassName() + "#" + f.getMethodName();
                    return FAILURE_ORIGINS.contains(origin) ? CancelOrigin.FAILURE
                            : DROP_ORIGINS.contains(origin) ? CancelOrigin.DROP : CancelOrigin.OTHER;
                })
                .orElse(CancelOrigin.OTHER));
    }

    /** Methods that pass a cancel on (operators' {@code cancel}, subscribers' {@code dispose}, {@code Operators.terminate}). */
    private static final java.util.Set<String> CANCEL_CHAIN = java.util.Set.of("cancel", "dispose", "terminate");
    /** Where Reactor cancels because a handler threw (see {@link #cancelledByAFailingHandler}). */
    private static final java.util.Set<String> FAILURE_ORIGINS = java.util.Set.of(
            "reactor.core.publisher.Operators#onOperatorError",
            "reactor.core.publisher.Operators#onNextError",
            "reactor.core.publisher.LambdaSubscriber#onNext",
            "reactor.core.publisher.LambdaMonoSubscriber#onNext",
            "reactor.core.publisher.StrictSubscriber#onNext");
    /**
     * Reactor's operators whose {@code onNext} cancels upstream and then does not pass that element on: a
     * {@code timeout()} whose timer fired first (the element goes to {@code Hooks.onNextDropped}), the
     * element that ends a {@code takeWhile}, the second element of a {@code single()}.
     */
    private static final java.util.Set<String> DROP_ORIGINS = java.util.Set.of(
            "reactor.core.publisher.FluxTimeout$TimeoutMainSubscriber#onNext",
            "reactor.core.publisher.FluxTakeWhile$TakeWhileSubscriber#onNext",
            "reactor.core.publisher.MonoSingle$SingleSubscriber#onNext");
    /**
     * Frames of Reactor's operators that, cancelling from another thread, drop or discard an element that
     * arrives meanwhile without cancelling again: {@code take(Duration)} / {@code takeUntilOther} cancel,
     * then complete downstream; {@code timeout()}'s timer cancels, then errors downstream; and a
     * {@code SerializedSubscriber} (which those and others put downstream) discards what arrives after its
     * own cancel. Their {@code onNext} then returns normally.
     */
    private static final java.util.Set<String> RACE_FRAMES = java.util.Set.of(
            "reactor.core.publisher.FluxTakeUntilOther$TakeUntilMainSubscriber#cancelMainAndComplete",
            "reactor.core.publisher.FluxTimeout$TimeoutMainSubscriber#doTimeout",
            "reactor.core.publisher.FluxTimeout$TimeoutMainSubscriber#doError",
            "reactor.core.publisher.SerializedSubscriber#cancel");

    /** @return the group's actor this stream pulls from */
    ConsumerGroupActor actor() {
        return actor;
    }

    /**
     * The pull consumer was disposed: the stream errors with {@code error}, also when no pull is in
     * flight (a waiting or answered pull errors by itself), after an answer in progress (rule 1.3).
     */
    void consumerDisposed(Throwable error) {
        pendingError.compareAndSet(null, error);
        cancelled = true; // no further pull or onNext; the group's actor is gone, so no release is posted
        ConsumerGroupCommand.Pull p = current;
        if (p != null) {
            p.cancelled = true;
        }
        deliverPendingErrorIfIdle();
    }

    /**
     * The stream's group actor terminated: the stream errors as {@link #consumerDisposed(Throwable)} says, with
     * the error {@code errorFor} makes for the subscriber's Context, unless its ending is already known (its pull
     * in flight failed first, with its own error, or its subscriber cancelled): a rejection is made through the
     * subscriber's hooks once per stream, not once more for nothing.
     */
    void consumerDisposed(java.util.function.Function<reactor.util.context.ContextView, Throwable> errorFor) {
        Throwable known = pendingError.get();
        if (known != null) {
            consumerDisposed(known);
        } else if (!cancelled) {
            consumerDisposed(errorFor.apply(actual.currentContext()));
        }
        // cancelled with no error pending: cancelled by the subscriber (nothing to signal), or failing by itself
        // (fail() cancels, then sets its error and delivers it)
    }

    /**
     * The pull consumer quiesces: the stream completes, also when no pull is in flight, after an answer in
     * progress (rule 1.3), as {@link #consumerDisposed} errors it. Its pull waiting in the group is dropped;
     * its delivered messages stay in flight, to be acknowledged (the group lives on until disposal) or
     * redelivered after the ack timeout: no release is posted.
     */
    void consumerQuiesced() {
        consumerDisposed(QUIESCED);
    }

    /** {@link #pendingError} of a quiesced consumer: completes the stream instead of failing it. */
    private static final Throwable QUIESCED = new Throwable("quiesced", null, false, false) {
        private static final long serialVersionUID = 1L;
    };

    /** Lets the group's actor retire when idle once no consumer is attached (at most once). */
    private void detach() {
        if (detached.compareAndSet(false, true)) {
            actor.detach();
            onEnd.accept(this);
        }
    }

    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        for (;;) {
            long r = requested;
            // not before onSubscribe returned: a pull's answer would run onNext on the actor's thread while
            // onSubscribe still runs on the subscriber's (rule 1.3); subscribed() drains once it did
            if (!cancelled && !done.get() && !pullInFlight && r > 0 && subscribed) {
                pullInFlight = true;
                int max = (int) Math.min(r, options.batchSize());
                ConsumerGroupCommand.Pull p = new ConsumerGroupCommand.Pull(max,
                        PullConsumer.saturatedNanos(options.pollTimeout()), consumerId, false, admitted, this);
                current = p;
                actor.post(p);
            }
            missed = wip.addAndGet(-missed);
            if (missed == 0) {
                return;
            }
        }
    }

    @Override
    public void answer(PullResult result, int[] attempts) {
        admitted = true; // before the next pull is posted (below, or by a later request: after pullInFlight's write)
        delivering = true;
        deliveringThread = Thread.currentThread();
        current = null;
        long[] handled = options.ackMode() == AckMode.AFTER_ON_NEXT ? new long[result.messages().size()] : null;
        int nHandled = 0;
        int undeliveredFrom = -1;
        for (int i = 0; i < result.messages().size(); i++) {
            ON_NEXT_STATE.setVolatile(this, IN_ON_NEXT); // before reading cancelled (see onNextState)
            if (cancelled || done.get()) {
                ON_NEXT_STATE.setVolatile(this, IDLE);
                // not delivered: released below, since a pull posted while the cancel ran may have been
                // served after the cancel's own release (or the consumer quiesced, which posts none)
                undeliveredFrom = i;
                break;
            }
            Delivery d = new Delivery(result.messages().get(i), attempts[i], actor, policy);
            if (requested != Long.MAX_VALUE) {
                REQUESTED.decrementAndGet(this);
            }
            try {
                actual.onNext(d);
            } catch (Throwable t) {
                ON_NEXT_STATE.setVolatile(this, IDLE);
                deliveringThread = null;
                d.nack(t);
                ackHandled(handled, nHandled); // the messages before it were handled, whatever it threw
                // the messages after it never reached the application: released uncounted, before the cancel's
                // release, which counts an attempt for what this consumer still holds (as a lambda handler's
                // failure, caught by Reactor, releases the rest below)
                releaseUndelivered(result, attempts, i + 1);
                cancel();
                error(t);
                delivering = false;
                // a JVM-fatal error also goes on, after the bookkeeping, to the group actor, which reports it
                // through Schedulers.onHandleError as the scheduler reports a fatal task error
                Exceptions.throwIfJvmFatal(t);
                return;
            }
            boolean cancelledDuring = (int) ON_NEXT_STATE.getAndSet(this, IDLE) == CANCELLED_DURING;
            if (handlerFailed) {
                // Reactor caught the handler's exception (it errors downstream): a failure, as if onNext had
                // thrown; the messages after it were not delivered and are released below
                handlerFailed = false;
                d.nack(new IllegalStateException("the subscriber's handler failed: Reactor cancelled the "
                        + "consumer from inside onNext"));
                undeliveredFrom = i + 1 < result.messages().size() ? i + 1 : -1;
                break;
            }
            if (elementDropped || cancelledDuring) {
                // not known to be handled: left unacknowledged, so the cancel's release (posted by cancel())
                // redelivers it; the messages after it were not delivered and are released below
                elementDropped = false;
                undeliveredFrom = i + 1 < result.messages().size() ? i + 1 : -1;
                break;
            }
            if (handled != null && d.markSettled()) {
                handled[nHandled++] = d.message().offset();
            }
        }
        deliveringThread = null;
        ackHandled(handled, nHandled);
        if (undeliveredFrom >= 0) {
            // only these: the messages delivered before may still be in the application's hands (a quiesced
            // consumer keeps them in flight; a cancel's own release covers them)
            releaseUndelivered(result, attempts, undeliveredFrom);
        }
        pullInFlight = false;
        delivering = false;
        deliverPendingErrorIfIdle();
        drain();
    }

    /**
     * {@code onSubscribe} returned (the subscribing thread): delivers a terminal signal recorded meanwhile,
     * and issues the first pull for the demand requested during {@code onSubscribe}.
     */
    void subscribed() {
        subscribed = true;
        deliverPendingErrorIfIdle();
        drain(); // the demand requested during onSubscribe
    }

    /**
     * Signals a pending bad request's error (or the consumer's disposal or quiescence) unless an answer is
     * being delivered (see {@link #pendingError}) or {@code onSubscribe} has not returned (see {@link #subscribed}).
     */
    private void deliverPendingErrorIfIdle() {
        Throwable e = pendingError.get();
        if (e != null && !delivering && subscribed) {
            error(e);
        }
    }

    /**
     * Releases the messages of an answer from index {@code from} on, which were never handed to
     * {@code onNext}: redelivered now, not after the ack timeout, and without counting an attempt.
     */
    private void releaseUndelivered(PullResult result, int[] attempts, int from) {
        int n = result.messages().size();
        if (from >= n) {
            return;
        }
        long[] offsets = new long[n - from];
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = result.messages().get(from + i).offset();
        }
        actor.post(new ConsumerGroupCommand.Release(consumerId, offsets, java.util.Arrays.copyOfRange(attempts, from, n)));
    }

    /** One ack command for the whole batch handled by {@code onNext}, not one per message. */
    private void ackHandled(long[] handled, int n) {
        if (handled != null && n > 0) {
            actor.acknowledge(n == handled.length ? handled : java.util.Arrays.copyOf(handled, n));
        }
    }

    @Override
    public void fail(Throwable error) {
        current = null;
        pullInFlight = false;
        if (!cancelled) {
            Runnable hook = afterFailSawNoCancelForTest;
            if (hook != null) {
                hook.run();
            }
            cancel(); // as a cancel: this consumer's unacknowledged messages are redelivered now
            // through pendingError, as a disposal's error goes: when the two race (the actor's drain fails the
            // stream's pull as dispose() ends the stream), one of them is delivered and the other is known as the
            // same ending; delivered directly, the loser went to Hooks.onErrorDropped, which logs at ERROR after
            // a normal shutdown. Also after an answer in progress on another thread (rule 1.3), not beside it.
            pendingError.compareAndSet(null, error);
        }
        deliverPendingErrorIfIdle();
    }

    @Override
    public reactor.util.context.ContextView context() {
        return actual.currentContext();
    }

    /** Test seam: runs in {@link #fail} after it saw the stream not cancelled (to interleave a disposal there). */
    static volatile Runnable afterFailSawNoCancelForTest;

    private void error(Throwable t) {
        if (!done.compareAndSet(false, true)) {
            if (t != pendingError.get() && t != QUIESCED) {
                Internals.onErrorDropped(t, actual.currentContext());
            }
            return;
        }
        detach();
        if (t == QUIESCED) {
            actual.onComplete();
        } else {
            actual.onError(t);
        }
    }

    /**
     * Reactor's {@link Scannable} view of the subscription, as a source's (a {@code Flux.create} sink's) is: {@code
     * ACTUAL} (the subscriber, so a walk up from it reaches the {@code consume} source), {@code
     * REQUESTED_FROM_DOWNSTREAM} (the demand not yet met), {@code CANCELLED} (by the downstream), {@code TERMINATED}
     * (completed or failed), {@code RUN_STYLE} ({@code ASYNC}: deliveries come on the group actor's thread) and
     * {@code NAME}.
     */
    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.ACTUAL) {
            return actual;
        }
        if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
            return requested;
        }
        if (key == Attr.CANCELLED) {
            return cancelled && !done.get(); // an error cancels internally, then terminates: not a cancel
        }
        if (key == Attr.TERMINATED) {
            return done.get();
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        if (key == Attr.NAME) {
            return PullConsumer.ConsumeFlux.stepName(actor.subject, actor.group);
        }
        return null;
    }

    @Override
    public String toString() {
        return "ConsumerSubscription[" + actor.subject + "/" + actor.group + ", consumer " + consumerId
                + ", poll " + options.pollTimeout().toMillis() + " ms]";
    }
}
