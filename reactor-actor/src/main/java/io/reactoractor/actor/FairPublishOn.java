package io.reactoractor.actor;

import io.reactoractor.ActorGroup;
import io.reactoractor.internal.BrokenUpstreams;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.Turn;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CorePublisher;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Fuseable;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * {@link ActorOperators#publishOn}: Reactor's {@code publishOn} semantics, drained by an actor.
 *
 * <p>Same observable behaviour as {@code Flux.publishOn(scheduler, prefetch)} (delay-error):
 * <ul>
 *   <li>upstream is requested {@code prefetch} at subscription, then replenished by Reactor's limit
 *       ({@code prefetch - prefetch / 4}, as Reactor's {@code Operators.unboundedOrLimit}) each time that
 *       many elements were delivered downstream;</li>
 *   <li>elements queued before an upstream error are all delivered (as demand allows), then the
 *       error;</li>
 *   <li>on cancellation every element still queued, and any element arriving afterwards, goes to the
 *       subscriber context's discard hook ({@code doOnDiscard}): on the cancelling thread when the
 *       actor is idle, as Reactor's {@code cancel()} clears its queue when no drain runs, else at the end
 *       of the turn in progress;</li>
 *   <li>a group or scheduler that is disposed (or closing) when the operator is subscribed signals
 *       {@code onSubscribe} then {@code onError(RejectedExecutionException)} and cancels upstream (a
 *       synchronously fusable source, such as a {@code range}, is fused instead and its elements go to the
 *       discard hook before the error), as Reactor's {@code publishOn} does on a disposed scheduler;</li>
 *   <li>an element arriving while the group or scheduler closes gracefully is rejected, as Reactor's
 *       {@code publishOn} rejects its next drain on a closing scheduler ({@link Drain#rejectArrival()}): it is
 *       discarded, upstream is cancelled, and the rejection is delivered after the elements queued before it.
 *       An asynchronously fused source's signal is rejected as Reactor rejects it: the source is cancelled
 *       and its queue cleared (to the discard hook; a fused source cannot be polled once cancelled), then
 *       the rejection;</li>
 *   <li>{@link reactor.core.scheduler.Schedulers#onScheduleHook Schedulers.onScheduleHook} decorates
 *       each drain (each turn of the actor), as Reactor decorates each scheduling of its drain.</li>
 * </ul>
 * One deliberate difference: {@code request(n <= 0)} cancels upstream and signals
 * {@code onError(IllegalArgumentException)} (rule 3.9), where Reactor's operators only log it and
 * ignore the call.
 * <p>Fusion, as Reactor's: a source that offers synchronous fusion across a thread barrier
 * ({@code Flux.range}, {@code fromArray}, {@code fromIterable}, {@code fromStream}; not
 * {@code generate}, nor through operators such as {@code map} or {@code doOnNext}, which refuse it
 * because their user code would move to another thread) is never requested:
 * the drain polls it, on the actor's turn, one element per unit of downstream demand, and on
 * cancellation the rest of the source goes to the discard hook. A source that offers asynchronous fusion
 * ({@code Sinks.many().unicast()}, {@code onBackpressureBuffer}, {@code limitRate}, {@code groupBy}'s
 * groups, {@code window}'s windows) is fused as by Reactor's {@code publishOn}: it keeps the elements in its
 * own queue, signals {@code onNext(null)}, and the drain polls that queue on the actor's turn; so the
 * source's buffer is the only one, and its bound (an overflow error, a sink's {@code FAIL_OVERFLOW}) holds
 * as with Reactor's operator, where a separate queue of {@code prefetch} elements would absorb that many
 * more. It is still requested {@code prefetch} and replenished, as Reactor's; on cancellation it is
 * cleared, which discards.
 * <p>Downstream, the operator offers asynchronous fusion ({@code Fuseable.ASYNC}) as Reactor's
 * {@code publishOn} does, to an operator that asks for it ({@code concatMap}, {@code flatMap}'s inners,
 * another {@code publishOn}, {@code StepVerifier.expectFusion()}): the turn then signals
 * {@code onNext(null)} and the downstream polls the queue itself ({@link Drain#poll()}), as many
 * elements as its demand allows. Fairness is kept: a poll on the actor's turn is a task boundary, so
 * it yields ({@code null}, with the next turn signalling again) when the quota is used or a
 * preemption is due, as the unfused drain does between elements. Differences from Reactor's fused
 * {@code publishOn}: the terminal signal is sent only once the queue is empty (Reactor sends it at once
 * and the consumer drains the rest before acting on it; an error then reaches an immediate-error
 * consumer after the queued elements, as it does unfused); and the queue is the consumer's to clear on
 * cancellation ({@code clear()}, which discards), the operator discarding only elements that arrive
 * afterwards. A synchronously fused source, polled by an output-fused consumer, runs on that
 * consumer's thread (the operator asked for fusion across a thread barrier, so the source allows it).</p>
 * The difference is the drain: Reactor drains the queue in one task that does not return while
 * elements keep arriving; here the drain loop is the turn of an actor ({@link Drain}), which asks
 * {@link Turn#shouldContinue()} before every element, so a hot stream yields at the preemption point
 * or the quota like every other actor.
 *
 * <h2>Threads and ordering</h2>
 * Upstream signals ({@code onNext/onError/onComplete}) are serialised by the upstream (rule 1.3) and
 * are the single producer of the SPSC queue; the actor, holding its {@code SCHEDULED} bit, is the
 * single consumer, also after termination ({@link ActorCell}'s drain). {@code error} is written before
 * the volatile {@code done}, and the queue offer happens before the cell is signalled, so a turn that
 * reads {@code done == true} sees the error and every element offered before it. When the downstream is
 * output-fused it is the queue's single consumer instead (its polls are serialised by the fusion
 * contract); the actor then only signals it and never polls, clears or discards the queue itself.
 * {@code requested} only grows ({@link Operators#addCap}); {@code produced} and {@code sinceReplenish}
 * are actor-confined (output-fused: {@code sinceReplenish} is confined to the downstream's polls).
 * <p>No lost wake-up: an element is offered, then the producer reads the status word (in
 * {@code signal()}); a turn that ends clears {@code SCHEDULED} (a CAS), then reads the queue
 * ({@code hasWork()}). That is a store-then-load on each side (a Dekker handshake), and Reactor's queues
 * offer with a release store, which a later load may pass; so {@code onNext} issues a full fence between
 * its offer and those reads (Reactor's drain pays the same with its per-element {@code WIP} increment).
 * Output-fused, the flag {@code needsSignal} adds a second handshake of the same shape: the turn clears
 * it, fences, then reads the queue; the producer offers, fences, then reads it (and sets it if clear).
 * Either the turn sees the element, or the producer sees the flag cleared and sets it, and the turn's
 * end re-reads it after its CAS.
 *
 * @param <T> the element type
 */
final class FairPublishOn<T> extends Flux<T> implements Scannable, Fuseable {

    /**
     * The operator on {@code source}, through Reactor's assembly hooks as Reactor's own operators are
     * ({@code Flux.onAssembly}: {@code Hooks.onEachOperator}, and {@code Hooks.onOperatorDebug}'s traceback,
     * which then has a line of its own for this operator).
     */
    static <T> Flux<T> assemble(Publisher<? extends T> source, Scheduler runOn, ActorGroup group, int prefetch) {
        return onAssembly(new FairPublishOn<>(source, runOn, group, prefetch));
    }


    private static final java.util.concurrent.atomic.AtomicLong SEQ = new java.util.concurrent.atomic.AtomicLong();

    private final Publisher<? extends T> source;
    /** The scheduler the operator was given (the scheduler or one of its groups): its {@code RUN_ON}, as Reactor's. */
    private final Scheduler runOn;
    private final ActorGroup group;
    private final int prefetch;

    FairPublishOn(Publisher<? extends T> source, Scheduler runOn, ActorGroup group, int prefetch) {
        this.source = source;
        this.runOn = runOn;
        this.group = group;
        this.prefetch = prefetch;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        Objects.requireNonNull(actual, "subscriber");
        Drain<T> drain = new Drain<>(actual, runOn, group, prefetch);
        if (source instanceof CorePublisher<? extends T> core) {
            // as Reactor's operators subscribe their source: Publisher.subscribe(Subscriber) would also apply
            // Hooks.onLastOperator to the source (the hook is for the last operator of a chain, applied once)
            core.subscribe(drain);
        } else {
            source.subscribe(drain);
        }
    }

    /** @return the prefetch, as Reactor's {@code publishOn} reports it */
    @Override
    public int getPrefetch() {
        return prefetch;
    }

    @Override
    @Nullable
    public Object scanUnsafe(Attr key) {
        if (key == Attr.PARENT) {
            return source;
        }
        if (key == Attr.PREFETCH) {
            return prefetch;
        }
        if (key == Attr.RUN_ON) {
            return runOn;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String toString() {
        return "ActorOperators.publishOn(" + group.scheduler().name() + "/" + group.name() + ", " + prefetch + ")";
    }

    /**
     * The subscriber to the upstream, the subscription of the downstream (a queue when it is fused),
     * and the actor in between.
     */
    static final class Drain<T> extends ActorCell
            implements CoreSubscriber<T>, Fuseable.QueueSubscription<T>, Scannable, Runnable,
            io.reactoractor.internal.ClosingStage {

        private static final VarHandle DONE;
        private static final VarHandle DISCARD_GUARD;

        static {
            try {
                DONE = MethodHandles.lookup().findVarHandle(Drain.class, "done", boolean.class);
                DISCARD_GUARD = MethodHandles.lookup().findVarHandle(Drain.class, "discardGuard", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final CoreSubscriber<? super T> actual;
        private final Scheduler runOn;
        private final ActorGroup group;
        private final int prefetch;
        private final int limit;
        /**
         * The elements waiting: this operator's own SPSC queue, or an asynchronously fused source
         * ({@link #asyncSource}), whose own queue then holds them. Set in {@code onSubscribe}, before the
         * downstream's {@code onSubscribe}; volatile because {@link #hasWork()} reads it on any thread.
         */
        private volatile Queue<T> queue;
        /**
         * Whether the upstream is fused in {@code Fuseable.ASYNC} mode: it keeps the elements in its own queue
         * and calls {@code onNext(null)} when there are more, and the actor polls that queue (the queue's one
         * consumer, as for this operator's own queue). Set before {@link #queue}.
         */
        private boolean asyncSource;
        /**
         * A synchronously fused upstream ({@code Fuseable.SYNC}), polled by the drain instead of
         * {@link #queue} and never requested; {@code null} otherwise. Written in {@code onSubscribe} before
         * the downstream can request, so every turn sees it; polled only by the queue's one consumer (the
         * actor: its drain and the holder of its {@code SCHEDULED} bit; or an output-fused downstream),
         * never by two threads: a fused source is not thread-safe.
         */
        private Fuseable.QueueSubscription<T> syncSource;
        /** Whether {@link #syncSource} is set; volatile for {@link #hasWork()} on other threads. */
        private volatile boolean sync;
        private final AtomicLong requested = new AtomicLong();

        private Subscription s;
        private volatile boolean done;
        private Throwable error;                // written before 'done'
        /** An element arrived while closing and ended the stream ({@link #rejectArrival}); upstream's thread. */
        private boolean arrivalRejected;
        /**
         * An asynchronously fused source signalled while closing: the turn ends the stream ({@link #stopped()}).
         * Written by the upstream before it signals the cell (the handshake of any signal).
         */
        private volatile boolean rejectPending;
        private volatile boolean cancelled;
        private volatile IllegalArgumentException badRequest;
        /** While the downstream's {@code onSubscribe} runs (see {@link #onSubscribeDownstream}). */
        private volatile boolean subscribing;

        // actor-confined
        private long produced;
        /** Actor-confined; when output-fused, confined to the downstream's (serialised) polls. */
        private int sinceReplenish;
        private boolean finished;
        private T current;

        // output fusion (ASYNC, asked by the downstream): see the class doc and poll()
        /** Set by {@link #requestFusion} in the downstream's {@code onSubscribe}, before any request. */
        private volatile boolean outputFused;
        /**
         * Output-fused: the downstream has something to learn (elements, its own demand, the end). Set
         * before the cell is signalled, cleared by the turn before it signals the downstream, so an
         * event during that signal leaves it set and the actor runs again.
         */
        private volatile boolean needsSignal;
        /** Output-fused with a {@link #sync} source: a poll found the source's end. */
        private volatile boolean sourceEnded;
        /**
         * The carrier while the turn signals the downstream (a fused poll on that thread is on the turn),
         * else {@code null}. Written only by the carrier running the actor; a plain read on another thread
         * can only find another thread or {@code null}, never its own: a thread sees its own writes.
         */
        private Thread signalling;
        /** Whether the current signal polled already (actor-confined, like the signal). */
        private boolean polledInSignal;
        /** Whether a poll of the current signal yielded the turn (actor-confined). */
        private boolean yielded;
        private final Runnable signalTask = this::signalDownstream;
        /**
         * Output-fused: serialises {@link #clear()}, which the downstream may call from several threads
         * at once (Reactor's {@code publishOn} as the consumer clears on cancel, in its drain and on its
         * worker) and the producer calls for late elements: a missed-call counter, as Reactor guards its
         * own {@code clear()}.
         */
        @SuppressWarnings("unused") // accessed through DISCARD_GUARD
        private volatile int discardGuard;

        Drain(CoreSubscriber<? super T> actual, Scheduler runOn, ActorGroup group, int prefetch) {
            super(Internals.engine(group), Internals.schedulingGroup(group),
                    group.name() + "/publishOn-" + SEQ.incrementAndGet(), 1);
            this.actual = actual;
            this.runOn = runOn;
            this.group = group;
            this.prefetch = prefetch;
            // Reactor's rule (Operators.unboundedOrLimit, package-private there): replenish after
            // three quarters of the prefetch were consumed; never for an unbounded prefetch
            this.limit = prefetch == Integer.MAX_VALUE ? Integer.MAX_VALUE : prefetch - (prefetch >> 2);
            this.queue = Queues.<T>get(prefetch).get();
            // it joins its group in onSubscribe, after its subscriber's onSubscribe: a disposal that reached it
            // before would signal the rejection ahead of that onSubscribe (rule 1.9)
        }

        /**
         * Whether the operator's group or scheduler is closing gracefully: it then rejects what arrives, so what
         * it still delivers is what it held; a downstream actor closing too keeps requesting from it
         * ({@link InboundPort#drainsClosingStage()}).
         *
         * @return whether new elements are rejected
         */
        @Override
        public boolean isClosingStage() {
            return group.isDisposed();
        }

        // ---------------------------------------------------------------- upstream side

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (Operators.validate(this.s, s)) {
                this.s = s;
                if (group.isDisposed()) {
                    // as Reactor's publishOn on a disposed scheduler: onSubscribe, then the rejection. At
                    // once, here, not by the actor: a request the downstream makes in its onSubscribe would
                    // queue the actor, and its terminal drain would then wait for a carrier (all of a
                    // closing scheduler's may be busy, perhaps waiting for this very stream)
                    finished = true; // the actor's terminal drain signals nothing (actor-confined: it never ran)
                    terminate();
                    // a synchronously fusable source (a range, an iterable) is fused and cleared through the
                    // discard hook, as Reactor's publishOn fuses it and clears it when its drain is rejected;
                    // any other is cancelled (an asynchronous one, not fused, discards its own queue then)
                    Fuseable.QueueSubscription<?> sync = null;
                    if (s instanceof Fuseable.QueueSubscription<?> qs
                            && qs.requestFusion(Fuseable.SYNC | Fuseable.THREAD_BARRIER) == Fuseable.SYNC) {
                        sync = qs;
                    } else {
                        BrokenUpstreams.cancel(s, actual::currentContext);
                    }
                    actual.onSubscribe(this);
                    if (sync != null) {
                        Operators.onDiscardQueueWithClear(sync, actual.currentContext(), null);
                    }
                    if (!cancelled) {
                        actual.onError(engine().rejectSignal(actual.currentContext()));
                    }
                    return;
                }
                if (s instanceof Fuseable.QueueSubscription<?>) {
                    @SuppressWarnings("unchecked")
                    Fuseable.QueueSubscription<T> qs = (Fuseable.QueueSubscription<T>) s;
                    // as Reactor's publishOn: the source's side effects move to the actor's thread, so
                    // sources behind a per-element operator refuse fusion across the thread barrier
                    int mode = qs.requestFusion(Fuseable.ANY | Fuseable.THREAD_BARRIER);
                    if (mode == Fuseable.SYNC) {
                        syncSource = qs;
                        sync = true;
                        DONE.setVolatile(this, true); // the source holds everything it will emit
                        onSubscribeDownstream();
                        joinGroup(); // a disposal that began meanwhile terminates it here: the rejection follows
                        return; // nothing to request: the drain polls as demand allows
                    }
                    if (mode == Fuseable.ASYNC) {
                        // the source's queue is the only buffer (a bounded sink or onBackpressureBuffer keeps
                        // its bound and its overflow signal); requested and replenished as Reactor's does
                        asyncSource = true;
                        queue = qs;
                    }
                }
                onSubscribeDownstream();
                joinGroup(); // a disposal that began meanwhile terminates it here: the rejection follows
                s.request(prefetch == Integer.MAX_VALUE ? Long.MAX_VALUE : prefetch);
            }
        }

        /**
         * {@code actual.onSubscribe(this)}, holding back the actor until it returned: a request made meanwhile
         * (its demand, or the error of a {@code request(n <= 0)}) is recorded but signals the actor only after,
         * or the actor would call {@code onNext} (a synchronously fused source has its elements at hand) or
         * {@code onError} on a carrier while {@code onSubscribe} still runs (rule 1.3; Reactor's {@code publishOn}
         * does call {@code onNext} then, a probe measured). Dekker handshake with {@link #request}: it writes the
         * demand or {@code badRequest} then reads {@code subscribing}, this writes {@code subscribing} then reads
         * them (all volatile), so at least one of them signals the actor.
         */
        private void onSubscribeDownstream() {
            subscribing = true;
            try {
                actual.onSubscribe(this);
            } finally {
                subscribing = false;
            }
            if (badRequest != null || requested.get() != 0) {
                markSignal();
                signal();
            }
        }

        @Override
        public void onNext(T t) {
            if (asyncSource) {
                // ASYNC fusion: the element waits in the source's queue and the value is only a signal (null
                // by Reactor's convention); the same handshake as an offer of our own (class doc)
                if (!rejectPending && !done && group.isDisposed()) {
                    // closing: the consumer (the turn) cancels the source and clears it, then signals the
                    // rejection (stopped()); not here, on the source's thread, where the source reacts to a
                    // cancel by clearing its own queue while the turn may be polling it
                    rejectPending = true;
                }
                VarHandle.fullFence();
                markSignal();
                if ((!signal() || cancelled) && outputFused) {
                    clear(); // the stream is over: nobody else polls the queue
                }
                return;
            }
            if (t == null) {
                // rule 2.13 (Reactor's publishOn lets a null through to its queue, which may take it for
                // "empty" and lose it)
                throw new NullPointerException("onNext called with null (rule 2.13)");
            }
            if (done) {
                if (arrivalRejected) {
                    Operators.onDiscard(t, actual.currentContext()); // in flight after the rejection's cancel
                } else {
                    Operators.onNextDropped(t, actual.currentContext());
                }
                return;
            }
            if (group.isDisposed()) {
                Operators.onDiscard(t, actual.currentContext());
                rejectArrival();
                VarHandle.fullFence(); // the signal's handshake, as after an offer (class doc)
                markSignal();
                if (!signal() && outputFused) {
                    clear();
                }
                return;
            }
            if (outputFused && (cancelled || isTerminated())) {
                // the stream is over (cancelled, or ended by a rejection or a bad request, which cleared
                // the queue); nobody polls it any more
                Operators.onDiscard(t, actual.currentContext());
                return;
            }
            if (!queue.offer(t)) {
                // upstream sent more than requested (rule 1.1): an error, never a silent drop
                Operators.onDiscard(t, actual.currentContext());
                error = Operators.onOperatorError(s, Exceptions.failWithOverflow(
                        Exceptions.BACKPRESSURE_ERROR_QUEUE_FULL), t, actual.currentContext());
                DONE.setVolatile(this, true);
            }
            // StoreLoad between the offer (a release store in Reactor's queues) and the reads of
            // needsSignal and the status word that follow: the Dekker handshake of the class doc
            VarHandle.fullFence();
            markSignal();
            if (!signal()) {
                // the actor is gone (cancelled or its scheduler disposed): signal() drained the queue
                // through drainTerminated, discarding this element too; output-fused, the queue is the
                // downstream's, which will not poll it again: clear what raced the end
                if (outputFused) {
                    clear();
                }
                return;
            }
            if (outputFused && cancelled) {
                clear(); // the cancel (and the downstream's clear) raced this offer
            }
        }

        /**
         * An element arrived while the group or scheduler closes gracefully: a new task for it, so it is
         * rejected as Reactor's {@code publishOn} rejects its next drain on a closing scheduler. The upstream
         * is cancelled and the rejection becomes the terminal signal, after the elements already queued (the
         * operator delays errors), so the shutdown waits for those and nothing more. Upstream's thread
         * (rule 1.3 serialises it with the other upstream signals); {@code error} is written before
         * {@code done}, as for an upstream error.
         */
        private void rejectArrival() {
            arrivalRejected = true;
            BrokenUpstreams.cancel(s, actual::currentContext);
            error = engine().rejectSignal(actual.currentContext());
            DONE.setVolatile(this, true);
        }

        @Override
        public void onError(Throwable t) {
            if (t == null) {
                // rule 2.13 (Reactor's publishOn takes a null error for a completion)
                throw new NullPointerException("onError called with null (rule 2.13)");
            }
            if (done) {
                Internals.onErrorDropped(t, actual.currentContext());
                return;
            }
            error = t;
            DONE.setVolatile(this, true);
            markSignal();
            signal();
        }

        @Override
        public void onComplete() {
            if (done) {
                return;
            }
            DONE.setVolatile(this, true);
            markSignal();
            signal();
        }

        /** Output-fused: the downstream must be signalled again (before {@code signal()}). */
        private void markSignal() {
            if (outputFused && !needsSignal) {
                needsSignal = true;
            }
        }

        // ---------------------------------------------------------------- downstream side

        @Override
        public void request(long n) {
            if (cancelled) {
                return; // rule 3.6: a NOP once cancelled (the drain may read the flag before the demand)
            }
            if (n <= 0) {
                badRequest = new IllegalArgumentException(
                        "§3.9 violated: positive request amount required but it was " + n);
            } else {
                for (;;) {
                    long r = requested.get();
                    if (r == Long.MAX_VALUE || requested.compareAndSet(r, Operators.addCap(r, n))) {
                        break;
                    }
                }
            }
            if (subscribing) {
                return; // signalled once onSubscribe returned (onSubscribeDownstream): rule 1.3
            }
            markSignal(); // fused: the downstream may poll now
            signal();
        }

        @Override
        public void cancel() {
            if (cancelled) {
                return;
            }
            cancelled = true;
            Subscription up = s;
            if (up != null) {
                // an upstream whose cancel() throws (rule 3.15 broken) must not keep this actor from
                // terminating below (it would stay counted in its group, its queue never cleared): the
                // exception goes to onErrorDropped (Reactor's publishOn lets it reach the canceller)
                BrokenUpstreams.cancel(up, actual::currentContext);
            }
            // terminating drains the queue (drainTerminated: discard, no signal) on this thread when the
            // actor is idle, as Reactor's cancel() clears its queue when no drain runs; else the running
            // turn sees 'cancelled' and its carrier drains at the turn's end
            terminate();
        }

        // ---------------------------------------------------------------- the actor

        @Override
        protected boolean hasWork() {
            boolean fused = sync;
            if (isTerminated()) {
                if (outputFused) {
                    return false; // the queue is the fused downstream's to clear
                }
                // a fused source's rest is discarded by the drain of the terminated actor, once
                return fused ? !finished : !queue.isEmpty();
            }
            if (finished) {
                return false;
            }
            if (cancelled || badRequest != null || rejectPending) {
                return true;
            }
            if (outputFused) {
                return needsSignal || ended();
            }
            if (fused) {
                // this may run on any thread: the source is not asked, demand means a poll to do (which
                // finds an element or the end)
                return requested.get() != produced;
            }
            boolean empty = queue.isEmpty();
            if (done && empty) {
                return true;
            }
            return !empty && requested.get() != produced;
        }

        /**
         * The elements waiting in the operator's queue (or in an asynchronously fused source's): counted in the
         * group's and the scheduler's {@code BUFFERED} and {@code reactor.actor.queued}, as an actor's mailbox
         * is (it is this stream's mailbox). A synchronously fused source holds what it has not produced yet,
         * which is no backlog: 1 while a poll is due, as for other work.
         */
        @Override
        public int pendingWork() {
            if (sync || isTerminated()) {
                return super.pendingWork();
            }
            try {
                return queue.size();
            } catch (RuntimeException e) { // a fused source's size() that fails: a gauge must not
                return super.pendingWork();
            }
        }

        @Override
        protected void runTurn(Turn turn) {
            if (finished) {
                return;
            }
            this.turn = turn;
            // with Reactor's automatic context propagation, the subscriber's thread locals around the whole drain,
            // as around an actor's behaviour: the code above this operator that the drain runs (a replenishing
            // request, a fused source's poll) sees them, as above Reactor's publishOn, whose drain runs inside the
            // schedule hook that captured them where it was scheduled; downstream code saw them already
            try (io.reactoractor.internal.ContextThreadLocals.Scope ignored =
                         io.reactoractor.internal.ContextThreadLocals.open(actual)) {
                drain(turn); // inside Schedulers.onScheduleHook: the carrier decorates each turn (Turn)
            } finally {
                this.turn = null;
            }
        }

        /** The turn in progress (actor-confined), read by a fused downstream's {@link #poll()} on the turn. */
        private Turn turn;

        private void drain(Turn turn) {
            if (outputFused) {
                drainFused(turn);
                return;
            }
            Fuseable.QueueSubscription<T> fused = syncSource;
            Queue<T> q = fused != null ? fused : queue;
            for (;;) {
                if (stopped()) {
                    return;
                }
                if (requested.get() == produced) {
                    if (done && q.isEmpty()) {
                        finish(error, true);
                    }
                    return; // no demand: hasWork() is false until request(n) signals
                }
                if (!turn.shouldContinue()) {
                    return; // quota or preemption: re-queued, since hasWork() is true
                }
                boolean d = done;
                T v;
                if (fused != null || asyncSource) {
                    try {
                        v = q.poll();
                    } catch (Throwable ex) {
                        // as Reactor's: the fused source failed; cancel it, signal the error (an asynchronous
                        // source's queue is cleared first, to the discard hook; a synchronous one's rest is not)
                        finished = true;
                        Throwable e = Operators.onOperatorError(s, ex, actual.currentContext());
                        if (asyncSource) {
                            clearAsyncSource();
                        }
                        try {
                            actual.onError(e);
                        } finally {
                            terminate(); // also when onError throws: see finish
                        }
                        return;
                    }
                } else {
                    v = q.poll();
                }
                if (fused != null && cancelled) {
                    // cancelled while polling: the source's own cancel may have emptied it meanwhile (a
                    // fromIterable discards its rest), so a null is no end of the stream and must not become
                    // onComplete; an element polled goes to the discard hook, as Reactor's publishOn does
                    if (v != null) {
                        Operators.onDiscard(v, actual.currentContext());
                    }
                    stopped();
                    return;
                }
                if (v == null) {
                    if (d) {
                        finish(error, true);
                    }
                    return;
                }
                current = v;
                turn.run(this);
                produced++;
                if (fused == null && limit != Integer.MAX_VALUE && ++sinceReplenish == limit) {
                    sinceReplenish = 0;
                    if (!replenish()) {
                        return;
                    }
                }
            }
        }

        /**
         * Asks the upstream for the next {@code limit} elements, from the drain. An upstream whose
         * {@code request(n)} throws (rule 3.16 broken) would leave the stream waiting for elements it was never
         * asked for: it is cancelled and the stream fails with the exception (what is queued goes to the
         * discard hook), as when a fused source's {@code poll()} throws. Reactor's {@code publishOn} lets the
         * exception leave its drain task, and its stream then waits for good.
         *
         * @return {@code false} if the stream ended
         */
        private boolean replenish() {
            try {
                s.request(limit);
                return true;
            } catch (Throwable ex) {
                Exceptions.throwIfJvmFatal(ex);
                BrokenUpstreams.cancel(s, actual::currentContext);
                finish(Operators.onOperatorError(ex, actual.currentContext()), true);
                return false;
            }
        }

        /**
         * Ends the stream if it was cancelled (silently) or given a bad request (upstream cancelled,
         * {@code onError}); actor only.
         *
         * @return whether it ended
         */
        private boolean stopped() {
            if (cancelled) {
                finish(null, false);
                return true;
            }
            IllegalArgumentException bad = badRequest;
            if (bad != null) {
                BrokenUpstreams.cancel(s, actual::currentContext);
                if (outputFused) {
                    clear(); // as Reactor's publishOn clears before a rejection's error (guarded)
                }
                finish(bad, true);
                return true;
            }
            if (rejectPending) {
                // an asynchronously fused source signalled while closing: Reactor's publishOn rejects that
                // drain, cancelling the source and clearing its queue (which cannot be polled once cancelled:
                // a fused source clears itself), then signals the rejection; so does this, as the consumer
                BrokenUpstreams.cancel(s, actual::currentContext);
                if (outputFused) {
                    clear(); // guarded; unfused, finish() clears the source
                }
                finish(engine().rejectSignal(actual.currentContext()), true);
                return true;
            }
            return false;
        }

        /**
         * The turn of an output-fused operator: signals the downstream, which polls as its demand allows
         * ({@link #poll()} keeps the turn's boundaries), and sends the terminal signal once everything
         * was polled.
         */
        private void drainFused(Turn turn) {
            if (stopped()) {
                return;
            }
            needsSignal = false; // before looking: whatever happens from here on sets it again
            VarHandle.fullFence(); // StoreLoad before reading the queue: the class doc's handshake
            if (!ended() && (sync || !queue.isEmpty())) {
                polledInSignal = false;
                yielded = false;
                signalling = Thread.currentThread();
                try {
                    turn.run(signalTask);
                } finally {
                    signalling = null;
                }
                if (yielded || finished) {
                    return; // yielded: needsSignal is set, the next turn signals again
                }
            }
            if (ended() && !cancelled) {
                finish(error, true);
            }
        }

        /**
         * Output-fused: whether the downstream has polled everything there will be ({@code done} read
         * before the queue: an element offered before the end is then seen). A {@link #sync} source is
         * never asked from here: only its one consumer, the downstream, may touch it.
         */
        private boolean ended() {
            if (sync) {
                return sourceEnded;
            }
            return done && queue.isEmpty();
        }

        /** Output-fused: tells the downstream to poll (a task of the turn, as one element is unfused). */
        private void signalDownstream() {
            try {
                actual.onNext(null);
            } catch (Throwable t) {
                cancel(); // rule 2.13, as in run()
                throw Exceptions.propagate(t);
            }
        }

        // ---------------------------------------------------------------- output fusion

        /**
         * Offers {@code ASYNC} fusion to a downstream that asks for it, as Reactor's {@code publishOn}
         * (a thread barrier by nature, so {@code THREAD_BARRIER} is no reason to refuse); never
         * {@code SYNC}.
         */
        @Override
        public int requestFusion(int requestedMode) {
            if ((requestedMode & Fuseable.ASYNC) != 0) {
                outputFused = true;
                return Fuseable.ASYNC;
            }
            return Fuseable.NONE;
        }

        /**
         * The fused downstream's poll; its calls are serialised by the downstream (the fusion
         * contract), on the actor's turn during {@code onNext(null)} or on any other thread. On the
         * turn, each poll after the first ends a task and asks {@link Turn#shouldContinue()}: when the
         * turn must end it answers {@code null} (the queue is not empty, but the terminal signal is
         * held back until it is, so the downstream only waits for the next {@code onNext(null)}).
         * Replenishes upstream by Reactor's limit, as the unfused drain does.
         */
        @Override
        @Nullable
        public T poll() {
            if (onTurn()) {
                if (yielded) {
                    return null;
                }
                if (polledInSignal) {
                    Turn t = turn;
                    t.endTask();
                    boolean go = t.shouldContinue();
                    t.beginTask();
                    if (!go) {
                        yielded = true;
                        needsSignal = true;
                        return null;
                    }
                }
                polledInSignal = true;
            }
            Fuseable.QueueSubscription<T> fused = syncSource;
            if (fused != null) {
                T v = fused.poll(); // a throw goes to the downstream, which cancels, as with Reactor's
                // the end is found by the poll that takes the last element, not only by the one after it:
                // a consumer whose demand ends with the last element makes no further poll
                if (!sourceEnded && (v == null || syncSourceEmpty(fused))) {
                    sourceEnded = true;
                    VarHandle.fullFence(); // StoreLoad before signal()'s status read (class doc)
                    signal(); // a turn sends onComplete (a no-op while the turn runs: it looks after)
                }
                return v;
            }
            boolean d = done;
            T v = queue.poll();
            if (v != null && limit != Integer.MAX_VALUE && ++sinceReplenish == limit) {
                sinceReplenish = 0;
                s.request(limit);
            }
            // as above: the poll that empties the queue after the end lets a turn send the terminal signal
            // (before the end, the end's own signal does). Done is read first: the queue is only looked at
            // once it is set, and the fence only paid when signalling
            if (v == null ? d : done && queue.isEmpty()) {
                // StoreLoad between this consumer's release of the queue and signal()'s status read,
                // against the ending turn's CAS then queue read (class doc)
                VarHandle.fullFence();
                signal();
            }
            return v;
        }

        /**
         * Whether the caller is the downstream polling inside this turn's {@code onNext(null)}, where
         * polls are task boundaries; not once cancelled: the downstream then polls to clear the queue,
         * which must empty it.
         */
        private boolean onTurn() {
            return signalling == Thread.currentThread() && !cancelled;
        }

        /** Whether a synchronous source has nothing more (Reactor's sync drain asks the same); a throw: no. */
        private boolean syncSourceEmpty(Fuseable.QueueSubscription<T> fused) {
            try {
                return fused.isEmpty();
            } catch (Throwable ex) {
                Exceptions.throwIfJvmFatal(ex);
                return false; // its next poll throws to the downstream
            }
        }

        /**
         * Whether a poll would find nothing now: also {@code true} on the turn once a poll yielded, as
         * that poll's {@code null} said (a consumer that loops while {@code !isEmpty()} would spin).
         */
        @Override
        public boolean isEmpty() {
            if (onTurn() && yielded) {
                return true;
            }
            Fuseable.QueueSubscription<T> fused = syncSource;
            return fused != null ? fused.isEmpty() : queue.isEmpty();
        }

        @Override
        public int size() {
            if (onTurn() && yielded) {
                return 0; // as isEmpty()
            }
            Fuseable.QueueSubscription<T> fused = syncSource;
            return fused != null ? fused.size() : queue.size();
        }

        /**
         * The fused downstream clears the queue (on cancellation): to the discard hook. Guarded: calls
         * from several threads at once run one at a time, and a call during another makes that one
         * go round again.
         */
        @Override
        public void clear() {
            if ((int) DISCARD_GUARD.getAndAdd(this, 1) != 0) {
                return;
            }
            int missed = 1;
            do {
                discardRest();
                missed = (int) DISCARD_GUARD.getAndAdd(this, -missed) - missed;
            } while (missed != 0);
        }

        /**
         * Delivers one element as a task of the turn (quota, hog detection, error accounting). A
         * downstream {@code onNext} that throws broke rule 2.13: its subscription counts as cancelled (no
         * further signal; upstream cancelled, the queue discarded), and the error goes on to the turn,
         * which reports it through {@code Schedulers.handleError} (Reactor's drain lets it escape too).
         */
        @Override
        public void run() {
            T v = current;
            current = null;
            try {
                actual.onNext(v);
            } catch (Throwable t) {
                cancel();
                throw Exceptions.propagate(t);
            }
        }

        private void finish(@Nullable Throwable e, boolean signal) {
            finished = true;
            if (!outputFused) {
                discardRest(); // output-fused: the downstream's queue (a normal end finds it empty)
            }
            try {
                if (signal) {
                    if (e != null) {
                        actual.onError(e);
                    } else {
                        actual.onComplete();
                    }
                }
            } finally {
                // also when the subscriber's onError or onComplete throws (rule 2.13 broken downstream; the
                // error goes on to the turn, which reports it): the drain's cell must leave its group all the
                // same, as Reactor's publishOn disposes its worker, or it stays counted as a live actor
                terminate();
            }
        }

        @Override
        protected void drainTerminated() {
            if (!finished) {
                // the scheduler (or group) was disposed under a live stream: Reactor's publishOn signals
                // the rejection downstream; so do we, after cancelling upstream
                finished = true;
                Subscription up = s;
                if (up != null && !cancelled) {
                    // a cancel() cancelled it already: once, as Reactor's publishOn
                    BrokenUpstreams.cancel(up, actual::currentContext);
                }
                if (!outputFused) {
                    discardRest();
                } else if (!cancelled) {
                    clear(); // as Reactor's publishOn on a rejection: the queue (guarded), then the error
                }
                if (!cancelled) {
                    actual.onError(engine().rejectSignal(actual.currentContext()));
                }
                return;
            }
            if (!outputFused) {
                discardQueue();
            }
        }

        /**
         * Clears what is left to the discard hook: the queue, and a fused source's remaining elements
         * (polled, as Reactor's publishOn clears its fused queue); by the actor, or when output-fused by
         * the downstream ({@link #clear()}), the queue's one consumer either way.
         */
        private void discardRest() {
            Fuseable.QueueSubscription<T> fused = syncSource;
            if (fused != null) {
                try {
                    Operators.onDiscardQueueWithClear(fused, actual.currentContext(), null);
                } catch (Throwable ex) {
                    Exceptions.throwIfJvmFatal(ex);
                    Internals.onErrorDropped(ex, actual.currentContext()); // a failing source while clearing
                }
            }
            discardQueue();
        }

        /**
         * The waiting elements to the discard hook: this operator's queue polled, or an asynchronously fused
         * source's cleared (its {@code clear()} discards, as Reactor's {@code publishOn} leaves it to do).
         */
        private void discardQueue() {
            if (asyncSource) {
                clearAsyncSource();
            } else {
                Operators.onDiscardQueueWithClear(queue, actual.currentContext(), null);
            }
        }

        /** An asynchronously fused source's {@code clear()}; a throw is dropped (the stream is over). */
        private void clearAsyncSource() {
            try {
                queue.clear();
            } catch (Throwable ex) {
                Exceptions.throwIfJvmFatal(ex);
                Internals.onErrorDropped(ex, actual.currentContext());
            }
        }

        // ---------------------------------------------------------------- Scannable

        @Override
        @Nullable
        public Object scanUnsafe(Attr key) {
            if (key == Attr.PARENT) {
                return s;
            }
            if (key == Attr.ACTUAL) {
                return actual;
            }
            if (key == Attr.PREFETCH) {
                return prefetch;
            }
            if (key == Attr.BUFFERED) {
                Fuseable.QueueSubscription<T> fused = syncSource;
                return fused != null ? fused.size() : queue.size();
            }
            if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
                long r = requested.get();
                if (outputFused) {
                    return r; // the fused downstream polls: this operator does not count what it takes
                }
                return r == Long.MAX_VALUE ? r : r - produced; // outstanding demand, unbounded stays so
            }
            if (key == Attr.CANCELLED) {
                return cancelled;
            }
            if (key == Attr.TERMINATED) {
                return done; // upstream terminated, as Reactor's publishOn reports it
            }
            if (key == Attr.ERROR) {
                return error;
            }
            if (key == Attr.DELAY_ERROR) {
                return true;
            }
            if (key == Attr.RUN_ON) {
                return runOn;
            }
            if (key == Attr.RUN_STYLE) {
                return Attr.RunStyle.ASYNC;
            }
            return null;
        }
    }
}
