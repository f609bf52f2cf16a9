package io.reactoractor.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorGroup;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.SubscriberContext;
import io.reactoractor.internal.TerminatedSubscriber;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * One consumer of a {@link RingBuffer}: a sequence, a {@link RingHandler}, a place in the ring's
 * dependency graph, and an actor of the ring's group that runs the handler in turns.
 *
 * <h2>Turns and batches</h2>
 * A consumer's barrier is the lowest sequence of its live dependencies (or, without any, the highest
 * contiguously published sequence); a dependency that leaves (its subscriber cancelled) is replaced by
 * its own dependencies ({@link #bypass()}), so the declared order holds transitively. In a turn it handles every event up to the barrier, in batches:
 * a batch is cut at the barrier read at its start, by the downstream demand of a published consumer,
 * and by an adaptive size that keeps one batch well under the scheduler's quota; between batches the
 * turn's quota and preemption checks apply, so a busy consumer shares its carrier fairly. After each
 * batch the consumer publishes its sequence (volatile store) and wakes its dependents and, if the
 * producer side waits for space, the producer drain. With nothing to do it parks: its actor is
 * neither queued nor running and holds no thread; whoever moves its barrier (the producer, a
 * dependency, a {@code request(n)}) wakes it.
 *
 * <h2>State (per consumer)</h2>
 * <pre>
 *   state      | event                                     | next state / action
 *   -----------+-------------------------------------------+-------------------------------------------
 *   created    | ring.start()                              | parked; woken at once
 *   parked     | barrier moves / request(n) / terminal     | running (scheduled by the actor cell)
 *   running    | no event below barrier or no demand       | parked (the cell's post-turn re-check closes
 *              |                                           | the race with a concurrent wake)
 *   running    | quota used / preemption                   | re-queued, runs again later
 *   running    | ring closed and every event handled       | terminated: onComplete, or onError(closing error)
 *   running    | handler failure under retry(n, d), fewer  | backing off: sequence stays below the event (it
 *              | than n retries made on this event         | gates dependents and producer), cell suspended,
 *              |                                           | timer armed for d * 2^(attempt-1) (at most 30 s)
 *   backing off| timer fires                               | cell resumed: queued, the handler is called again
 *              |                                           | on the same event (success: attempt count reset)
 *   backing off| barrier moves / request(n) / ring closed  | backing off (the suspended cell keeps the signal;
 *              |                                           | resume re-reads the work: nothing is lost)
 *   backing off| downstream cancel / request(n &lt;= 0) /     | timer disarmed, cell resumed at once; next turn as
 *              | ring stopped                              | for "any live" below
 *   backing off| scheduler disposed                        | terminated by the engine: onError(rejection)
 *   running    | failure after n retries: retry(..)        | as under STOP; retryThenSkip(..): as under SKIP
 *   any live   | handler failure under STOP, or ring failed| terminated: onError(failure), nothing more handled
 *   any live   | downstream cancel                         | removed: sequence := MAX (leaves gating), terminated
 *   any live   | request(n &lt;= 0)                           | removed; onError(IllegalArgumentException) (rule 3.9)
 *   terminated | subscribe, nobody subscribed before       | onSubscribe + the terminal signal
 *   terminated | subscribe after a subscriber              | onSubscribe + onError(IllegalStateException)
 * </pre>
 *
 * <h2>As a publisher</h2>
 * A consumer made with {@link RingBuffer#publishedConsumer} is a unicast {@link Publisher} of its
 * handler's non-null results (a second subscriber gets {@code onError(IllegalStateException)}); it
 * handles an event only while its subscriber has outstanding demand, so a slow subscriber holds the
 * ring back. A consumer made with {@link RingBuffer#consumer} rejects subscribers the same way.
 *
 * <p>A subscriber that throws (rule 2.13 broken) is treated as Reactor's operators treat one: from
 * {@code onNext}, its subscription counts as cancelled (the event counts as handled) and the consumer
 * leaves the gating set; from {@code onComplete} or {@code onError}, the consumer still terminates and
 * leaves, so {@link RingBuffer#whenTerminated()} still completes. Either way the error goes to
 * {@code Hooks.onErrorDropped}, and a JVM-fatal one then goes on to the carrier, which reports it through
 * {@code Schedulers.onHandleError}.
 *
 * @param <T> the event type
 * @param <R> the result type
 */
public final class RingConsumer<T, R> implements Publisher<R>, Scannable {

    private static final VarHandle SEQUENCE;

    static {
        try {
            SEQUENCE = MethodHandles.lookup().findVarHandle(RingConsumer.class, "sequence", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final Object COMPLETED = new Object();
    private static final int MIN_CHUNK = 1;
    private static final int INITIAL_CHUNK = 64;

    private final RingBuffer<T> ring;
    private final String name;
    private final RingHandler<? super T, ? extends R> handler;
    private final boolean publishedConsumer;
    private final RingErrorPolicy policy;

    // ---- graph (the lists built before start under the ring's lock, read-only afterwards; the arrays
    // made from them at start, replaced whole under the ring's lock when a consumer leaves: see bypass())
    private final List<RingConsumer<T, ?>> dependencyList = new ArrayList<>();
    private final List<RingConsumer<T, ?>> dependentList = new ArrayList<>();
    /** What this consumer waits for: its live dependencies, a departed one's own in its place. */
    private volatile RingConsumer<T, ?>[] dependencies;
    /** Whom this consumer's advances wake: its dependents, and those of departed ones it now gates. */
    private volatile RingConsumer<T, ?>[] dependents;
    private volatile ConsumerCell cell;

    /**
     * The highest event handled; {@link Long#MAX_VALUE} once removed from gating. Written only by the
     * consumer's actor with {@code setVolatile} after it finished reading the slots up to it (release:
     * the producer's later overwrite of those slots cannot be seen by those reads) and before it reads
     * any wake-up state (StoreLoad, for the lost-wake-up arguments of dependents and the producer).
     * Read by dependents, the producer and metrics with volatile reads (acquire: a dependent then sees
     * the events' slots as the dependency saw them).
     */
    @SuppressWarnings("unused")
    private volatile long sequence = -1L;

    // ---- downstream (published consumers)
    private final AtomicReference<Subscriber<? super R>> subscriberSlot = new AtomicReference<>();
    private volatile Subscriber<? super R> downstream;

    /**
     * The context of this consumer's subscriber: asked for live while it is attached, its last one kept after
     * termination (the subscriber itself forgotten, rule 3.13), so what is discarded after the end still
     * reaches that subscriber's discard hook. Recorded before the subscription is handed over.
     */
    private final SubscriberContext subscriberContext = new SubscriberContext();

    /**
     * @return the context of this consumer's subscriber, asked for now while it is attached (its last one after
     *         the end), or an empty one (none yet, or not a CoreSubscriber)
     */
    Context subscriberContext() {
        return subscriberContext.current();
    }

    /** @return the subscriber's context once one subscribed, else the ring's (where a failure or a discard is reported) */
    private Context signalContext() {
        return hasSubscribed() ? subscriberContext() : ring.currentContext();
    }

    /** @return whether a subscriber subscribed (its context is then {@link #subscriberContext()}) */
    boolean hasSubscribed() {
        return subscriberContext.attachedOnce();
    }

    /** The highest event handled, as {@link #sequence} but kept when it leaves the gating set (actor-confined). */
    private long handled = -1L;
    private final AtomicLong requested = new AtomicLong();
    /** Results emitted; written only by the actor (single writer), read by {@link #hasWork()}. */
    private volatile long emitted;
    private volatile boolean cancelled;
    private final AtomicReference<Throwable> badRequest = new AtomicReference<>();

    // ---- terminal
    private volatile boolean done;
    /** {@link #COMPLETED} or the error; written before {@link #done}. */
    private volatile Object terminal;
    private final AtomicBoolean terminalDelivered = new AtomicBoolean();

    // ---- actor-confined
    private int chunk = INITIAL_CHUNK;
    private long chunkTargetNanos;
    /** Failed calls in a row on the event at {@code sequence + 1} (retry policies). */
    private int attempt;
    /** Written only by the actor; volatile for the metrics getters. */
    private volatile long processed;
    private volatile long skipped;
    private volatile long retried;

    RingConsumer(RingBuffer<T> ring, String name, RingHandler<? super T, ? extends R> handler,
            boolean publishedConsumer) {
        this.ring = ring;
        this.name = name;
        this.handler = handler;
        this.publishedConsumer = publishedConsumer;
        this.policy = ring.errorPolicy();
    }

    // ================================================================== public API

    /** @return the consumer's name, unique in its ring */
    public String name() {
        return name;
    }

    /** @return the ring this consumer belongs to */
    public RingBuffer<T> ring() {
        return ring;
    }

    /** @return whether this consumer is a publisher of its results ({@link RingBuffer#publishedConsumer}) */
    public boolean isPublished() {
        return publishedConsumer;
    }

    /**
     * @return the highest sequence handled ({@code -1} before the first), or {@link Long#MAX_VALUE}
     *         once the consumer left the gating set (its subscriber cancelled)
     */
    public long sequence() {
        return sequence;
    }

    /**
     * @return how many published events this consumer has yet to handle (0 once removed); momentary, and
     *         between 0 and the ring's size, as the truth is
     */
    public long lag() {
        long s = sequence;
        if (s == Long.MAX_VALUE) {
            return 0;
        }
        // the two reads are not one snapshot: a reader descheduled between them would see the cursor far
        // ahead of an old sequence (a probe saw 160 on a ring of 16); no consumer is ever more than the
        // ring's size behind the cursor, so that bound is the truth's bound too
        return Math.min(ring.size(), Math.max(0, ring.cursor() - s));
    }

    /** @return events handled so far (skipped ones included) */
    public long processedEvents() {
        return processed;
    }

    /**
     * @return events whose handler failed and that were skipped ({@link RingErrorPolicy#SKIP}, or
     *         {@link RingErrorPolicy#retryThenSkip} once the retries were exhausted)
     */
    public long skippedEvents() {
        return skipped;
    }

    /** @return handler calls repeated by a {@link RingErrorPolicy#retry retry} policy (one per back-off) */
    public long retriedEvents() {
        return retried;
    }

    /** @return whether the consumer terminated (completed, failed, or removed by cancellation) */
    public boolean isTerminated() {
        return done;
    }

    /** @return the names of the consumers this one depends on */
    public List<String> dependencyNames() {
        synchronized (ring) {
            List<String> names = new ArrayList<>();
            for (RingConsumer<T, ?> d : dependencyList) {
                names.add(d.name);
            }
            return names;
        }
    }

    @Override
    public void subscribe(Subscriber<? super R> s) {
        Objects.requireNonNull(s, "subscriber"); // rule 1.9
        if (!publishedConsumer) {
            Operators.error(s, new IllegalStateException("consumer " + name + " of ring " + ring.name()
                    + " is not published: create it with publishedConsumer(..) to subscribe to its results"));
            return;
        }
        if (!subscriberSlot.compareAndSet(null, s)) {
            if (subscriberSlot.get() == TerminatedSubscriber.instance()) {
                // terminated before anyone subscribed: the late (first) subscriber gets the terminal signal
                Object t = terminal; // written before the sentinel was set
                if (t == COMPLETED) {
                    Operators.complete(s);
                } else if (t instanceof Throwable e) {
                    Operators.error(s, e);
                } else {
                    Operators.error(s, new IllegalStateException("consumer " + name + " of ring " + ring.name()
                            + " was cancelled"));
                }
                return;
            }
            Operators.error(s, new IllegalStateException("consumer " + name + " of ring " + ring.name()
                    + " allows only one subscriber"));
            return;
        }
        Context context = subscriberContext.attach(s);
        ConsumerSubscription subscription = new ConsumerSubscription();
        try {
            s.onSubscribe(subscription);
        } catch (Throwable t) {
            // rule 2.13 broken: the consumer leaves the gating set at its next turn, as for a cancel
            Internals.reportThrowInSubscribe(s, subscription, t, context);
            return;
        }
        downstream = s;
        if (done) {
            subscriberContext.forget(); // terminate() may have run before this subscriber was recorded above
        }
        if (done && terminalDelivered.compareAndSet(false, true)) {
            try {
                deliverTerminal(s, terminal); // raced the termination (see terminate())
            } catch (Throwable t) {
                Internals.onErrorDropped(t, subscriberContext.current()); // rule 2.13 broken: as in terminate()
                Exceptions.throwIfJvmFatal(t);
            }
            return;
        }
        wake();
    }

    /**
     * Reactor's {@link Scannable} view: {@code NAME} (the consumer's name), {@code PARENT} (its ring),
     * {@code ACTUAL} (the subscriber, while there is one), {@code BUFFERED} ({@link #lag()}),
     * {@code REQUESTED_FROM_DOWNSTREAM} (outstanding demand), {@code TERMINATED}, {@code CANCELLED},
     * {@code RUN_ON} (the ring's group: the consumer is one of its actors), {@code RUN_STYLE}
     * ({@code ASYNC}).
     */
    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return name;
        }
        if (key == Attr.PARENT) {
            return ring;
        }
        if (key == Attr.ACTUAL) {
            return downstream;
        }
        if (key == Attr.BUFFERED) {
            return (int) Math.min(Integer.MAX_VALUE, lag());
        }
        if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
            long r = requested.get();
            return r == Long.MAX_VALUE ? r : Math.max(0, r - emitted);
        }
        if (key == Attr.TERMINATED) {
            // ended by a terminal signal (completed or failed), not by a cancel; a cancel after it is a no-op
            // (rule 3.7) and leaves it terminated, as Reactor's publishOn reports it
            return done && terminal != null;
        }
        if (key == Attr.CANCELLED) {
            return cancelled;
        }
        if (key == Attr.RUN_ON) {
            return ring.group();
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String toString() {
        return "RingConsumer[" + ring.name() + "/" + name + "]";
    }

    // ================================================================== graph (ring lock held)

    void addDependency(RingConsumer<T, ?> d) {
        if (!dependencyList.contains(d)) {
            dependencyList.add(d);
            d.dependentList.add(this);
        }
    }

    List<RingConsumer<T, ?>> dependencies() {
        return dependencyList;
    }

    /** @return whether some dependency still gates this consumer (not removed) */
    boolean hasLiveDependency() {
        for (RingConsumer<T, ?> d : dependencies) {
            if (d.sequence() != Long.MAX_VALUE) {
                return true;
            }
        }
        return false;
    }

    /**
     * This consumer leaves the gating set (under the ring's lock, before its sequence becomes
     * {@link Long#MAX_VALUE}): each dependent waits for this consumer's dependencies instead, so the
     * declared order holds transitively ({@code a -> b -> c} without {@code b}: {@code c} still handles an
     * event only after {@code a}), as a Disruptor's barriers and a Reactor chain keep it; waiting for
     * nothing in its place, a dependent ran ahead of {@code a} up to the producer's cursor. Each dependency
     * wakes those dependents from now on (its array is replaced before theirs: a dependent gating on it is
     * woken by its next advance), and the dependents are woken by {@link #remove()} to read their new
     * barrier.
     */
    @SuppressWarnings("unchecked")
    void bypass() {
        RingConsumer<T, ?>[] mine = dependencies;
        for (RingConsumer<T, ?> d : mine) {
            List<RingConsumer<T, ?>> wakes = new ArrayList<>(List.of(d.dependents));
            for (RingConsumer<T, ?> y : dependents) {
                if (!wakes.contains(y)) {
                    wakes.add(y);
                }
            }
            d.dependents = wakes.toArray(new RingConsumer[0]);
        }
        for (RingConsumer<T, ?> y : dependents) {
            List<RingConsumer<T, ?>> waits = new ArrayList<>();
            for (RingConsumer<T, ?> d : y.dependencies) {
                if (d != this && !waits.contains(d)) {
                    waits.add(d);
                }
            }
            for (RingConsumer<T, ?> d : mine) {
                if (!waits.contains(d)) {
                    waits.add(d);
                }
            }
            y.dependencies = waits.toArray(new RingConsumer[0]);
        }
    }

    @SuppressWarnings("unchecked")
    void createCell(ActorGroup group, String path) {
        dependencies = dependencyList.toArray(new RingConsumer[0]);
        dependents = dependentList.toArray(new RingConsumer[0]);
        chunkTargetNanos = Math.max(10_000L, group.scheduler().quota().toNanos() / 8);
        cell = new ConsumerCell(group, path, this); // volatile: publishes the arrays above
    }

    /**
     * Counts the consumer's actor in its group, once the ring started (every consumer's cell built, the roots
     * computed): from then on a disposal or a gauge may reach it, and one already under way terminates it here,
     * which stops the ring ({@code ActorCell.joinGroup}).
     */
    void joinGroup() {
        cell.joinGroup();
    }

    // ================================================================== scheduling

    void wake() {
        ConsumerCell c = cell;
        if (c != null) {
            c.wake();
        }
    }

    /**
     * Whether the actor can make progress (any thread; a spurious {@code true} costs one empty turn).
     * Reads only volatile state, so together with the volatile writes of whoever creates the work and
     * the cell's CAS on its status word, a wake-up is never lost.
     */
    boolean hasWork() {
        if (done) {
            return false;
        }
        if (cancelled || badRequest.get() != null || ring.failure() != null) {
            return true;
        }
        long s = sequence;
        long fin = ring.finalCount();
        if (fin >= 0 && s + 1 >= fin) {
            return true;
        }
        if (publishedConsumer && (downstream == null || requested.get() - emitted <= 0)) {
            return false;
        }
        return barrier(s, s + 1) > s;
    }

    /** @return the highest sequence in {@code (s, limit]} this consumer may handle, or {@code s} */
    private long barrier(long s, long limit) {
        RingConsumer<T, ?>[] ds = dependencies;
        long min = Long.MAX_VALUE;
        for (int i = 0; i < ds.length; i++) {
            long q = ds[i].sequence(); // acquire: the dependency handled everything up to it
            if (q == Long.MAX_VALUE) {
                // it left: bypass() replaced our array (a volatile write) before its sequence became MAX (a
                // volatile write), so having seen MAX we see the new array, with what it waited for in its place;
                // reading on in the old one, we would have waited for nothing there
                RingConsumer<T, ?>[] now = dependencies;
                if (now != ds) {
                    ds = now;
                    min = Long.MAX_VALUE;
                    i = -1;
                }
            } else if (q < min) {
                min = q;
            }
        }
        if (min == Long.MAX_VALUE) {
            return ring.highestPublished(s + 1, limit);
        }
        return Math.min(min, limit);
    }

    /** The actor's turn: batches until no work, the quota or preemption. */
    void runTurn() {
        ConsumerCell c = cell;
        for (;;) {
            if (done) {
                return;
            }
            // terminated before leaving the gating set: if this is the last live consumer, the ring closes
            // while the events above this one's sequence are still in their slots, for the discard hook
            if (cancelled) {
                terminate(null, false, true);
                remove();
                return;
            }
            Throwable br = badRequest.get();
            if (br != null) {
                try {
                    terminate(br, true, true);
                } finally {
                    remove(); // also when a JVM-fatal error from the subscriber's onError escapes
                }
                return;
            }
            Throwable f = ring.failure();
            if (f != null) {
                terminate(f, true, false);
                return;
            }
            long s = sequence;
            long fin = ring.finalCount();
            if (fin >= 0 && s + 1 >= fin) {
                Throwable e = ring.closingError();
                terminate(e, true, false);
                return;
            }
            Subscriber<? super R> d = downstream;
            long limit = s + chunk;
            if (publishedConsumer) {
                if (d == null) {
                    return;
                }
                long demand = requested.get() - emitted;
                if (demand <= 0) {
                    return;
                }
                if (demand < chunk) {
                    limit = s + demand; // (s + demand could overflow for an unbounded request)
                }
            }
            long end = barrier(s, limit);
            if (end <= s) {
                return;
            }
            if (!c.shouldContinue()) {
                return;
            }
            if (runBatch(c, d, s + 1, end)) {
                return; // backing off: the cell is suspended, the timer resumes it
            }
        }
    }

    /** @return {@code true} if the batch ended in a retry's back-off (the turn must end) */
    private boolean runBatch(ConsumerCell c, Subscriber<? super R> d, long from, long end) {
        long next = from;
        long emittedNow = 0;
        long skippedNow = 0;
        Throwable failed = null;
        Throwable fatal = null;
        Throwable subscriberFailed = null;
        long backoffNanos = -1;
        c.beginBatch();
        long t0 = System.nanoTime();
        try {
            for (; next <= end; next++) {
                T event = ring.event(next);
                R r;
                try {
                    r = handler.onEvent(event, next, next == end);
                } catch (Throwable error) {
                    // the handler's error through Hooks.onOperatorError (global, or local to the
                    // subscriber's context), as Reactor's operators pass their user code's errors (a
                    // throwing hook: its error)
                    Throwable t = Internals.onOperatorError(error, event, subscriberContext()); // a fatal one as is
                    if (t == null) {
                        // a hook that answers null (Reactor's map() then goes silent): the handler's own error,
                        // so the policy still decides; taken as "no error", the event stayed unhandled and the
                        // next batch called the handler on it again, without end and without a back-off
                        t = error;
                    }
                    if (Internals.isFatalOrBubbling(t)) {
                        // never an endless retry: the ring fails with it (whatever the policy), the
                        // bookkeeping below stays consistent, then the carrier gets it and reports it (a
                        // bubbling error is meant to escape the stream, as in Reactor's operators); also
                        // when the hook threw it
                        fatal = t;
                        failed = t;
                        break;
                    }
                    if (policy.retries() && attempt < policy.maxRetries()) {
                        attempt++;
                        backoffNanos = policy.backoffNanos(attempt);
                        break; // event `next` stays unhandled: the sequence stops below it
                    }
                    attempt = 0;
                    if (policy.skipsFailedEvent()) {
                        skippedNow++;
                        continue;
                    }
                    failed = t;
                    break;
                }
                if (attempt != 0) {
                    attempt = 0; // the retried event succeeded
                }
                if (r != null && d != null) {
                    emittedNow++;
                    try {
                        d.onNext(r);
                    } catch (Throwable t) {
                        // rule 2.13 broken by the subscriber: its subscription counts as cancelled, the
                        // event as handled (the handler ran; running it again would repeat its effects)
                        subscriberFailed = t;
                        next++;
                        break;
                    }
                }
                if (cancelled || ring.failure() != null) {
                    // cancelled from its onNext (take(n), next()) or from another thread, also while the handler
                    // emits nothing: no further handler call or signal, as Reactor's drains check at every
                    // element (rule 1.8). A sibling's failure under STOP stops the ring "at once" the same way:
                    // the turn's loop then signals onError, without the rest of the batch (up to the ring's
                    // size) handled and emitted after the failure (one volatile read per event)
                    next++;
                    break;
                }
            }
        } finally {
            c.endBatch();
        }
        long took = System.nanoTime() - t0;
        if (took < chunkTargetNanos / 2 && chunk < ring.size()) {
            chunk = Math.min(ring.size(), chunk << 1);
        } else if (took > chunkTargetNanos && chunk > MIN_CHUNK) {
            chunk = Math.max(MIN_CHUNK, chunk >> 1);
        }
        if (emittedNow > 0) {
            emitted = emitted + emittedNow;
        }
        if (skippedNow > 0) {
            skipped = skipped + skippedNow;
        }
        processed = processed + (next - from);
        if (next > from) {
            handled = next - 1;
            SEQUENCE.setVolatile(this, next - 1);
            for (RingConsumer<T, ?> dep : dependents) {
                dep.wake();
            }
            ring.consumerAdvanced();
        }
        if (failed != null && fatal == null) {
            handled = next; // went to Hooks.onOperatorError with the error: not discarded as well
        }
        if (subscriberFailed != null) {
            cancelled = true; // the turn's loop removes this consumer, as for a cancel
            Internals.onErrorDropped(subscriberFailed,
                    subscriberContext());
            Exceptions.throwIfJvmFatal(subscriberFailed);
            return false;
        }
        if (failed != null) {
            ring.fail(failed); // the loop then terminates this consumer with onError(failed)
            if (fatal instanceof Error e) { // after the bookkeeping: the carrier reports it
                throw e;
            }
            if (fatal != null) {
                throw (RuntimeException) fatal; // a bubbling error
            }
            return false;
        }
        if (backoffNanos >= 0) {
            retried = retried + 1;
            backOff(c, backoffNanos);
            return true;
        }
        return false;
    }

    /**
     * Suspends this consumer for a retry's back-off (its turn ends right after). Its sequence stays
     * below the failing event, so it keeps gating its dependents and the producer meanwhile.
     *
     * <p>No lost early end: {@link ConsumerSubscription#cancel()}, a bad {@code request} and
     * {@link RingBuffer#fail} each write their flag (volatile) and then call {@link #endBackoff()},
     * which reads the cell's armed back-off (volatile); here the back-off is stored (volatile, in
     * {@link ConsumerCell#suspendFor}) before the flags are read. Volatile accesses are totally
     * ordered, so at least one side sees the other's write: either that caller ends the back-off, or
     * we end it here. Ending it twice is harmless (the cell's CAS lifts the suspension once).
     */
    private void backOff(ConsumerCell c, long nanos) {
        if (!c.suspendFor(nanos)) {
            // the scheduler no longer takes timers: it is terminating, and its termination of every
            // cell delivers the failure (waking the others would queue them on carriers that are gone)
            ring.fail(c.rejected(signalContext()), false);
            return;
        }
        if (cancelled || badRequest.get() != null || ring.failure() != null) {
            c.endBackoff();
        }
    }

    /** @return whether this consumer waits out a retry's back-off (momentary; for tests and diagnostics) */
    boolean backingOff() {
        ConsumerCell c = cell;
        return c != null && c.backingOff();
    }

    /** Ends a retry's back-off now, if one is running (any thread). */
    void endBackoff() {
        ConsumerCell c = cell;
        if (c != null) {
            c.endBackoff();
        }
    }

    /**
     * Leaves the gating set: the producer stops waiting for this consumer, its dependents wait for its
     * dependencies instead ({@link #bypass()}, done first: a dependent must never see this consumer gone
     * before it waits for what this one waited for).
     */
    private void remove() {
        ring.bypass(this);
        SEQUENCE.setVolatile(this, Long.MAX_VALUE);
        ring.consumerRemoved();
        for (RingConsumer<T, ?> dep : dependents) {
            dep.wake();
        }
        ring.consumerAdvanced();
    }

    /**
     * Terminates (actor thread, or the cell's drain). The terminal signal goes to the subscriber
     * exactly once: {@link #terminalDelivered} is claimed either here (if {@link #downstream} is
     * already set) or by a concurrent {@link #subscribe} that set it and then saw {@link #done}; both
     * sides write their field (volatile) before reading the other's, so one of them sees it.
     */
    /**
     * @param leaves whether the consumer then leaves the gating set ({@link #remove()}: its subscriber cancelled
     *               or broke rule 3.9) rather than ending with the ring (closed or stopped)
     */
    private void terminate(Throwable error, boolean signal, boolean leaves) {
        if (done) {
            return;
        }
        Context discardTo = signalContext();
        terminal = signal ? (error != null ? error : COMPLETED) : null;
        done = true;
        // the last consumer's discards come before its subscriber's terminal signal, as an Actor discards its
        // mailbox before onError (a StepVerifier's hasDiscarded(..) after the error then finds them all)
        boolean last = ring.consumerTerminating(handled, discardTo, leaves);
        Throwable subscriberFailed = null;
        if (signal) {
            Subscriber<? super R> d = downstream;
            if (d != null && terminalDelivered.compareAndSet(false, true)) {
                try {
                    deliverTerminal(d, terminal);
                } catch (Throwable t) {
                    // rule 2.13 broken by the subscriber's onComplete/onError: the bookkeeping below must
                    // still run, or the ring never sees its last consumer go (whenTerminated() would hang)
                    subscriberFailed = t;
                }
            }
        } else {
            terminalDelivered.set(true); // cancelled: nothing to deliver
        }
        downstream = null;
        subscriberContext.forget();
        // rule 3.13: forget the subscriber; a late first subscriber gets `terminal`, a second one an error
        subscriberSlot.getAndUpdate(cur -> cur == null ? TerminatedSubscriber.instance()
                : TerminatedSubscriber.afterSubscriber());
        ConsumerCell c = cell;
        if (c != null) {
            c.dropBackoff(); // terminated during a back-off (scheduler disposed): disarm the timer
            c.terminate();
        }
        if (last) {
            ring.lastConsumerTerminated();
        }
        if (subscriberFailed != null) {
            // as a throwing onNext (runBatch): dropped, and a JVM-fatal one goes on to the carrier, which
            // reports it
            Internals.onErrorDropped(subscriberFailed, discardTo);
            Exceptions.throwIfJvmFatal(subscriberFailed);
        }
    }

    private static void deliverTerminal(Subscriber<?> s, Object t) {
        if (t == COMPLETED) {
            s.onComplete();
        } else if (t instanceof Throwable e) {
            s.onError(e);
        }
    }

    /**
     * The cell terminated (scheduler or group disposed under a live consumer, or our own termination).
     * The disposal terminates every cell of the ring's group, so each consumer delivers the failure
     * from here; the others are not woken (their carriers are gone). A consumer that was queued, not
     * parked, when the scheduler was disposed is drained too, once the engine's last thread has exited
     * (the engine drains what it abandoned in its run queue), so it delivers the failure as well.
     */
    void cellTerminated() {
        if (!done) {
            ring.fail(cell.rejected(signalContext()), false);
            terminate(ring.failure(), true, false);
        }
    }


    /**
     * The subscriber's handle: demand and cancellation (any thread). {@link Scannable} as Reactor's inner
     * subscriptions are: {@code PARENT} is the consumer, the rest is the consumer's view, so a walk up from
     * the subscriber ({@code Scannable.from(s).parents()}) reaches the ring and its upstream.
     */
    private final class ConsumerSubscription implements Subscription, Scannable, io.reactoractor.internal.ClosingStage {

        /** The ring refuses new events while its group or scheduler closes: what this consumer emits then was held. */
        @Override
        public boolean isClosingStage() {
            return ring.group().isDisposed();
        }

        @Override
        public Object scanUnsafe(Attr key) {
            if (key == Attr.PARENT) {
                return RingConsumer.this;
            }
            return RingConsumer.this.scanUnsafe(key);
        }

        @Override
        public void request(long n) {
            if (cancelled) {
                return; // rule 3.6: a NOP once cancelled (the drain may read the flag before the demand)
            }
            if (n <= 0) {
                badRequest.compareAndSet(null, new IllegalArgumentException(
                        "consumer " + name + ": request(n) needs n > 0 but was " + n + " (rule 3.9)"));
                endBackoff(); // after the volatile write above: see backOff()
            } else {
                for (;;) {
                    long r = requested.get();
                    long u = r + n;
                    if (r == Long.MAX_VALUE || requested.compareAndSet(r, u < 0 ? Long.MAX_VALUE : u)) {
                        break;
                    }
                }
            }
            wake();
        }

        @Override
        public void cancel() {
            cancelled = true;
            endBackoff(); // after the volatile write above: see backOff()
            wake();
        }
    }
}
