package io.reactoractor.actor;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.internal.BrokenUpstreams;
import io.reactoractor.internal.Internals;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * One upstream feeding the actor's mailbox: the actor's own {@link org.reactivestreams.Processor} side
 * or one {@link Actor#newSubscriber()}. Its demand is the credits {@link InboundCredits} granted it
 * ({@code outstanding}); a message beyond them fails the actor with an overflow error (rule 1.1 broken
 * upstream), never a silent drop. A message that arrives after the actor took the demand back (its
 * completion or termination closes the port, then zeroes {@code outstanding}) was in flight against
 * demand it had been granted: it goes to the discard hook, as any message after the port closed, except
 * one after the upstream's own terminal signal (rule 1.7 broken upstream), which goes to
 * {@code Hooks.onNextDropped} as in Reactor's operators.
 *
 * <p>Signals arrive on the upstream's thread (serially, rule 1.3). {@code upstream} is set once by CAS
 * (rule 2.5) and replaced by the cancelled sentinel on cancellation; {@code closed} is set by the
 * upstream's terminal signal or by the actor's termination, after which messages are discarded.
 *
 * @param <I> inbound message type
 */
final class InboundPort<I> implements CoreSubscriber<I>, Scannable {

    private final InboundCredits<I> credits;
    private final ActorTurnLoop<I, ?> loop;
    /** Credits granted to the upstream as demand and not used yet. */
    final AtomicLong outstanding = new AtomicLong();
    private final AtomicReference<Subscription> upstream = new AtomicReference<>();
    /** The context a {@link Actor#newSubscriber(reactor.util.context.ContextView)} port exposes; {@code null}: the
     *  primary port or a {@link Actor#newSubscriber()} one, which expose the downstream's (as Reactor's
     *  processors expose their subscriber's). */
    private final Context portContext;
    /** The actor this port feeds: a {@link Scannable} walk down from the upstream reaches it ({@code ACTUAL}). */
    private final Object actor;
    volatile boolean closed;
    /**
     * The upstream signalled its end: an element after it breaks rule 1.7 and goes to
     * {@code Hooks.onNextDropped}, as in Reactor's operators; an element after the actor closed the port
     * was in flight (rule 3.12) and goes to the discard hook. Written before {@link #closed}.
     */
    private volatile boolean upstreamDone;

    InboundPort(InboundCredits<I> credits, ActorTurnLoop<I, ?> loop, Context context, Object actor) {
        this.credits = credits;
        this.loop = loop;
        this.portContext = context;
        this.actor = actor;
    }

    /**
     * A {@link Actor#newSubscriber()} port scans as a Reactor operator's inner subscriber does:
     * {@code PARENT} its upstream's subscription, {@code ACTUAL} the actor it feeds, {@code PREFETCH} its
     * window (the most demand it holds at once), {@code CANCELLED} once the actor cancelled its upstream,
     * {@code TERMINATED} once the upstream signalled its end, {@code RUN_STYLE} {@code SYNC} (an element
     * goes into the mailbox on the upstream's thread).
     */
    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.PARENT) {
            return upstream.get();
        }
        if (key == Attr.ACTUAL) {
            return actor;
        }
        if (key == Attr.PREFETCH) {
            return this == credits.primary ? credits.capacity : credits.replenishBatch;
        }
        if (key == Attr.CANCELLED) {
            return upstream.get() == Operators.cancelledSubscription() && !upstreamDone;
        }
        if (key == Attr.TERMINATED) {
            return upstreamDone;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.SYNC;
        }
        return null;
    }

    /**
     * The context exposed upstream: a {@code newSubscriber(context)} port's own; the primary port's and a
     * {@code newSubscriber()} port's is the downstream subscriber's (empty before one subscribed), as with Reactor's processors.
     */
    @Override
    public Context currentContext() {
        return portContext != null ? portContext : loop.out.discardContext();
    }

    /**
     * Whether this port's upstream is a stage of this library that is closing gracefully too
     * ({@link io.reactoractor.internal.ClosingStage}): an actor ({@code Flux.from(a).subscribe(b)},
     * {@code Flux.from(a).map(f).subscribe(b)}), a fair {@code publishOn} or a ring consumer,
     * found by following the {@code Scannable} {@code PARENT} chain of the subscription up through one-parent
     * operators, as far as {@value #MAX_HOPS} hops. Such a stage refuses new input while it closes, so what it
     * emits is work it held when the closing began: a closing actor keeps granting it demand, and a chain of
     * actors drains as far as the held work goes (withholding it, the upstream actor's held messages were
     * discarded at the end, though the closing waits for held work). Any other upstream (a source, an operator
     * with several parents such as a merge, a chain longer than the bound) is new input, bounded by the demand
     * it already holds. Read under the credits' monitor by {@link InboundCredits#distribute()}, only while
     * closing.
     *
     * @return whether demand may still be granted while the actor closes
     */
    boolean drainsClosingStage() {
        Object stage = upstream.get();
        for (int hop = 0; hop <= MAX_HOPS && stage != null; hop++) {
            if (stage instanceof io.reactoractor.internal.ClosingStage c) {
                return c.isClosingStage();
            }
            if (!(stage instanceof Scannable sc)) {
                return false;
            }
            stage = sc.scanUnsafe(Attr.PARENT);
        }
        return false;
    }

    /** How far up {@link #drainsClosingStage()} follows an upstream's operators. */
    private static final int MAX_HOPS = 16;

    /** Where discarded elements go: the discard hook of the actor's subscriber (its {@code doOnDiscard}). */
    private Context discardContext() {
        return loop.out.discardContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
        Objects.requireNonNull(s, "subscription");
        if (!upstream.compareAndSet(null, s)) {
            // rule 2.5: one active subscription per subscriber; a cancel that throws must not escape onSubscribe (2.13)
            BrokenUpstreams.cancel(s, this::currentContext);
            return;
        }
        if (loop.done || closed) {
            cancelUpstream(); // scans CANCELLED from now on
            return;
        }
        credits.attach(this);
    }

    @Override
    public void onNext(I t) {
        Objects.requireNonNull(t, "onNext");
        if (closed) {
            if (upstreamDone) {
                Operators.onNextDropped(t, currentContext());
            } else {
                Operators.onDiscard(t, discardContext());
            }
            return;
        }
        if (outstanding.decrementAndGet() < 0) {
            outstanding.incrementAndGet();
            Operators.onDiscard(t, discardContext()); // the overflowing element too, as Reactor's queues do
            if (closed) {
                // the actor took its demand back while this element was in flight (completion or
                // termination: InboundCredits.detachPortsLocked sets closed, then zeroes outstanding; this
                // read follows the decrement that saw zero, so it sees closed): not an overflow
                return;
            }
            cancelUpstream();
            loop.fail(Exceptions.failWithOverflow("Actor " + loop.path()
                    + ": upstream sent more messages than it was asked for (rule 1.1); mailbox capacity "
                    + credits.capacity));
            return;
        }
        loop.enqueue(t);
    }

    @Override
    public void onError(Throwable t) {
        Objects.requireNonNull(t, "onError");
        if (closed) {
            Internals.onErrorDropped(t, currentContext());
            return;
        }
        upstreamDone = true;
        closed = true;
        credits.portClosed(this, t);
    }

    @Override
    public void onComplete() {
        if (closed) {
            return;
        }
        upstreamDone = true;
        closed = true;
        credits.portClosed(this, null);
    }

    /** @return the upstream's subscription ({@code null} before one; Reactor's cancelled one after a cancel) */
    Subscription upstream() {
        return upstream.get();
    }

    /**
     * Passes granted credits upstream as demand (never under the credits' lock). An upstream whose
     * {@code request} throws (rule 3.16 broken) is cancelled and its exception fails the actor, as an
     * upstream error would (Reactor's {@code subscribe(..)} cancels and signals such an exception too): the
     * demand it was granted is gone, and the actor's {@code onSubscribe}, where the first request happens,
     * returns normally (rule 2.13).
     */
    void request(long n) {
        Subscription s = upstream.get();
        if (s != null && !closed) {
            try {
                s.request(n);
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                cancelUpstream();
                loop.fail(t);
            }
        }
    }

    /**
     * Cancels the upstream once; one whose {@code cancel()} throws (rule 3.15 broken) does not cut short
     * the actor's termination, which cancels its upstreams midway: see {@link BrokenUpstreams}.
     */
    void cancelUpstream() {
        closed = true;
        Subscription s = upstream.getAndSet(Operators.cancelledSubscription());
        if (s != null && s != Operators.cancelledSubscription()) {
            BrokenUpstreams.cancel(s, this::currentContext);
        }
    }
}
