package io.reactoractor.actor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.Objects;

import io.reactoractor.internal.Internals;
import io.reactoractor.internal.SubscriberContext;
import io.reactoractor.internal.TerminatedSubscriber;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The actor's unicast downstream side: the subscriber slot, the downstream's demand, the results the
 * behaviour emitted beyond it (the out buffer), and the {@link Subscription} handed to the subscriber.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li>{@code subscriberSlot} (CAS, any thread): the first subscriber wins; a later one is rejected.
 *       On termination it holds a sentinel, so the subscriber is not referenced any more (rule 3.13)
 *       and later subscribers still see "terminated".</li>
 *   <li>{@code downstream} ({@code volatile}): published by {@link #subscribe} <em>after</em>
 *       {@code onSubscribe} returned, so the turn never signals before {@code onSubscribe}; read by the
 *       turn and by {@code hasWork} (any thread); cleared by {@link #terminate}.</li>
 *   <li>{@code requested} (atomic, saturating at {@code Long.MAX_VALUE}): added to by
 *       {@link #request} on the downstream's threads, never decreased; the turn compares it with
 *       {@code emitted} (actor-confined), so demand is {@code requested - emitted}.</li>
 *   <li>the out buffer and {@code emitted}: actor-confined (see {@link ActorTurnLoop});
 *       {@code outBuffered} is its {@code volatile} size for {@code hasWork} on other threads.</li>
 * </ul>
 *
 * @param <O> outbound result type
 */
final class OutboundPort<O> implements Subscription, Scannable, io.reactoractor.internal.ClosingStage {


    private static final VarHandle SUBSCRIBER_SLOT;
    private static final VarHandle DOWNSTREAM;
    private static final VarHandle REQUESTED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            SUBSCRIBER_SLOT = l.findVarHandle(OutboundPort.class, "subscriberSlot", Subscriber.class);
            DOWNSTREAM = l.findVarHandle(OutboundPort.class, "downstream", Subscriber.class);
            REQUESTED = l.findVarHandle(OutboundPort.class, "requested", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // fields, not atomic wrapper objects: the turn reads the demand at every message, and a cold actor
    // paid a cache line for the wrapper (and every actor 32 bytes for the two of them)
    private final ActorTurnLoop<?, O> loop;
    @SuppressWarnings("unused") // through SUBSCRIBER_SLOT
    private volatile Subscriber<? super O> subscriberSlot;
    volatile Subscriber<? super O> downstream;
    /**
     * How the actor ended, for a subscriber whose {@code subscribe} raced {@link #terminate} (see there):
     * written before the slot's {@code getAndSet}, read after a volatile read that saw its sentinel.
     */
    private Throwable terminalError;
    private boolean terminalSignalled;
    /**
     * The subscriber's Reactor context (its {@code doOnDiscard} hook): asked for live while it is attached, its
     * last one kept past termination when the subscriber itself is forgotten (rule 3.13), so messages the
     * actor drops then are still discarded through it. Recorded before the subscriber is published to the
     * actor ({@code downstream}, volatile).
     */
    private final SubscriberContext subscriberContext = new SubscriberContext();
    /** Whether a subscriber ever attached (written before it is published, like {@link #subscriberContext}). */
    private volatile boolean hadSubscriber;
    /** Through {@link #REQUESTED}: volatile reads, CAS updates ({@link #request}). */
    private volatile long requested;

    // ---- actor-confined
    private long emitted;
    /** Created when a result first has to wait for demand: most actors never buffer one. */
    private ArrayDeque<O> outBuffer;
    volatile int outBuffered;

    /**
     * The {@link io.reactoractor.actor.Actor} this is the downstream side of, for {@link #scanUnsafe}: set
     * by its constructor, before the actor can be subscribed to.
     */
    private Scannable actor;

    /**
     * Whether this actor's group or scheduler is closing gracefully: a downstream actor closing too keeps
     * requesting from it, since what it emits is work it held, not new input ({@link InboundPort#drainsClosingStage()}).
     *
     * @return whether the actor refuses new input
     */
    @Override
    public boolean isClosingStage() {
        return loop.isClosing();
    }

    OutboundPort(ActorTurnLoop<?, O> loop) {
        this.loop = loop;
    }

    void actor(Scannable actor) {
        this.actor = actor;
    }

    /**
     * The subscription's {@link Scannable} view, as Reactor's inner subscriptions are: {@code PARENT} is
     * the actor and {@code ACTUAL} the subscriber, the rest is the actor's view, so a walk up from the
     * subscriber ({@code Scannable.from(s).parents()}) reaches the actor and its upstream.
     */
    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.PARENT) {
            return actor;
        }
        if (key == Attr.ACTUAL) {
            return downstream;
        }
        Scannable a = actor;
        return a != null ? a.scanUnsafe(key) : null;
    }

    /** Attaches the single subscriber (any thread). */
    void subscribe(Subscriber<? super O> s) {
        Objects.requireNonNull(s, "subscriber");
        if (!SUBSCRIBER_SLOT.compareAndSet(this, null, s)) {
            if (subscriberSlot == TerminatedSubscriber.instance() && !hadSubscriber) {
                // terminated before anyone subscribed (its scheduler was disposed): the first subscriber
                // learns why; a later one is a second subscriber of a unicast publisher (below)
                Throwable e = loop.pendingError;
                Operators.error(s, e != null ? e : new IllegalStateException("Actor " + loop.path()
                        + " is terminated and allows only a single Subscriber (unicast)"));
                return;
            }
            Operators.error(s, new IllegalStateException("Actor " + loop.path()
                    + " allows only a single Subscriber (unicast); use share() or publish() to multicast"));
            return;
        }
        hadSubscriber = true;
        Context context = subscriberContext.attach(s);
        try {
            s.onSubscribe(this);
        } catch (Throwable t) {
            // rule 2.13 broken: the actor stops, as for a cancel
            Internals.reportThrowInSubscribe(s, this, t, context);
            return;
        }
        downstream = s; // volatile: then the slot's read below (the handshake with terminate)
        if (subscriberSlot == TerminatedSubscriber.instance() && DOWNSTREAM.compareAndSet(this, s, null)) {
            // the actor terminated between our slot CAS and now, and its terminate found no downstream yet:
            // the terminal signal is ours to deliver (terminate took it instead if its getAndSet came first)
            subscriberContext.forget(); // terminate may have run before this subscriber was recorded above
            Throwable e = terminalError;
            if (e != null) {
                s.onError(e);
            } else if (terminalSignalled) {
                s.onComplete();
            } else if (!loop.cancelled) {
                s.onError(new IllegalStateException("Actor " + loop.path() + " is terminated"));
            } // else it cancelled, inside its onSubscribe: no signal (rule 1.8)
            return;
        }
        loop.wake();
    }

    /**
     * @return the subscriber's context, asked for now while it is attached (its last one once the actor
     *         terminated; empty before a subscriber): the one whose discard hook receives the messages the
     *         actor drops, exposed upstream and to the behaviour (any thread)
     */
    Context discardContext() {
        return subscriberContext.current();
    }

    /** @return whether the downstream asked for more than was emitted (actor thread) */
    boolean hasDemand() {
        return requested - emitted > 0;
    }

    /** @return the downstream's total demand so far (saturated at {@code Long.MAX_VALUE}); any thread */
    long requested() {
        return requested;
    }

    /**
     * The demand not yet met, as Reactor's operators report {@code REQUESTED_FROM_DOWNSTREAM}:
     * {@code Long.MAX_VALUE} once unbounded. Any thread, for a scan: it reads the actor-confined
     * {@code emitted} racily, so it may lag a result or two behind.
     *
     * @return the outstanding demand, at least {@code 0}
     */
    long outstandingDemand() {
        long r = requested;
        return r == Long.MAX_VALUE ? r : Math.max(0L, r - emitted);
    }

    /** A result of the behaviour: straight downstream when there is demand and nothing buffered (actor thread). */
    void emit(O result) {
        Objects.requireNonNull(result, "result");
        if (loop.cancelled) {
            // the downstream cancelled, perhaps inside the onNext of an earlier result of this same
            // behaviour call: nothing more reaches it (as Reactor's sources stop at once), and what it
            // will never get goes to its discard hook
            Operators.onDiscard(result, discardContext());
            return;
        }
        Subscriber<? super O> d = downstream;
        if (d != null && outBuffered == 0 && hasDemand()) {
            emitted++;
            signalNext(d, result);
        } else {
            if (loop.done) {
                // after the terminal signal (a context kept past its turn; the termination cleared the
                // downstream, so only this branch needs the check): nothing more reaches the subscriber (rule
                // 1.7), and the result is not left in a buffer nobody flushes: it goes to Hooks.onNextDropped,
                // as Reactor's FluxSink.next after complete() hands it there
                Operators.onNextDropped(result, discardContext());
                return;
            }
            if (outBuffer == null) {
                outBuffer = new ArrayDeque<>();
            }
            outBuffer.addLast(result);
            outBuffered = outBuffer.size();
        }
    }

    /** Sends buffered results while there is demand (actor thread). */
    void flush(Subscriber<? super O> d) {
        while (outBuffered > 0 && hasDemand() && !loop.cancelled) {
            O v = outBuffer.pollFirst();
            outBuffered = outBuffer.size();
            emitted++;
            signalNext(d, v);
        }
    }

    /**
     * One {@code onNext} to the downstream. A subscriber whose {@code onNext} throws broke rule 2.13: its
     * subscription counts as cancelled (the actor stops as for a {@link #cancel()}: no further signal, the
     * upstreams cancelled, the mailbox and the out buffer to the discard hook) and the error is reported
     * through {@code Schedulers.handleError}, as Reactor's {@code publishOn} and this library's fair one do.
     * It is the subscriber's failure, not the behaviour's: it never reaches the {@link ErrorPolicy} (which
     * retried the message into the broken subscriber, or went on signalling it), and a behaviour that emits
     * more in the same call has those results discarded. A JVM-fatal or bubbling error is thrown on, after
     * the cancel, as the turn treats such an error of the behaviour.
     */
    private void signalNext(Subscriber<? super O> d, O v) {
        try {
            d.onNext(v);
        } catch (Throwable t) {
            loop.cancel();
            if (Internals.isFatalOrBubbling(t)) {
                throw t;
            }
            loop.engine.taskFailed(loop.cell, t);
        }
    }

    /**
     * Drops the downstream and the buffer (its results to the discard hook), then signals it if asked
     * ({@link ActorTurnLoop}'s terminate).
     *
     * <p>A {@link #subscribe} may race it: the subscriber won the slot's CAS, and has not published itself
     * as {@code downstream} yet (its {@code onSubscribe} may still be running, and no signal may precede
     * it). Both sides write, then read the other's field: the subscriber publishes {@code downstream}
     * (volatile), then reads the slot; this method swaps the sentinel into the slot, then takes
     * {@code downstream} by {@code getAndSet}. In the total order of these accesses either this method
     * takes the subscriber (and signals it here), or the subscriber sees the sentinel and takes itself
     * back from {@code downstream} by CAS and signals itself with {@link #terminalError}; the CAS and the
     * {@code getAndSet} on one field let exactly one of them have it.
     */
    void terminate(Throwable error, boolean signal) {
        terminalError = error;
        terminalSignalled = signal;
        // rule 3.13: drop the reference to the subscriber; the sentinel keeps rejecting later subscribers
        SUBSCRIBER_SLOT.getAndSet(this, TerminatedSubscriber.instance()); // volatile RMW: publishes the two above
        @SuppressWarnings("unchecked")
        Subscriber<? super O> d = (Subscriber<? super O>) DOWNSTREAM.getAndSet(this, (Subscriber<? super O>) null);
        // after the two swaps: a subscriber records itself for its context before it publishes itself as
        // downstream and reads the slot, so either the swap above took it (and this sees it), or it sees the
        // sentinel and forgets itself (subscribe's hand-back); read first, a racing one could stay referenced
        subscriberContext.forget();
        ArrayDeque<O> left = outBuffer;
        outBuffer = null;
        outBuffered = 0;
        if (left != null && !left.isEmpty()) {
            // results the behaviour emitted beyond the demand (a completion waits until there are none):
            // the subscriber's discard hook gets them, before the terminal signal, as Reactor's operators
            // clear their queue before they signal an error
            Operators.onDiscardMultiple(left, subscriberContext.current());
        }
        if (signal && d != null) {
            if (error != null) {
                d.onError(error);
            } else {
                d.onComplete();
            }
        }
    }

    @Override
    public void request(long n) {
        if (loop.cancelled || loop.done) {
            // rule 3.6: a NOP once cancelled, and after a terminal signal, which counts as a cancellation
            // (rule 2.4; a late request(0) must not record an error that a scan would then report).
            // Checked here, not only by the actor: the turn reads 'cancelled' before it reads the demand,
            // so a cancel() and then a request() made while a turn runs could otherwise let that turn see
            // the old flag and the new demand, and emit after cancel
            return;
        }
        if (n <= 0) {
            loop.fail(new IllegalArgumentException(
                    "§3.9 violated: positive request amount required but it was " + n));
            return;
        }
        for (;;) {
            long r = requested;
            long u = r + n < 0 ? Long.MAX_VALUE : r + n;
            if (r == Long.MAX_VALUE || REQUESTED.compareAndSet(this, r, u)) {
                break;
            }
        }
        loop.wake();
    }

    @Override
    public void cancel() {
        if (loop.done) {
            return; // already terminated: nothing to cancel (Attr.CANCELLED stays false after a completion)
        }
        loop.cancel();
    }
}
