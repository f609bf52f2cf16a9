package io.reactoractor.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import io.reactoractor.internal.BrokenUpstreams;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.metrics.MetricsBinding;
import io.reactoractor.internal.metrics.RingMetrics;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Loggers;
import reactor.util.context.Context;

/**
 * A pre-allocated ring of {@code size} slots (a power of two) with one producer sequence and one
 * sequence per consumer, in the manner of the LMAX Disruptor, exposed as a Reactive Streams multicast
 * whose consumers are actors.
 *
 * <h2>Building</h2>
 * <pre>{@code
 * RingBuffer<Order> ring = RingBuffer.<Order>builder(scheduler).size(1024).build();
 * RingConsumer<Order, Void> journal = ring.consumer("journal", (o, seq, eob) -> { ...; return null; });
 * RingConsumer<Order, Void> replicate = ring.consumer("replicate", ...);
 * RingConsumer<Order, Fill> match = ring.publishedConsumer("match", ...);
 * ring.handleEventsWith(journal, replicate).then(match);   // match sees an event after both
 * ring.start();
 * orders.subscribe(ring);                                   // or ring.tryPublish(o) / ring.publish(o)
 * Flux.from(match).subscribe(...);
 * }</pre>
 * The dependency graph must be a DAG: an edge that would close a cycle is rejected with an
 * {@link IllegalArgumentException} naming the cycle. Consumers can only be added before
 * {@link #start()} ({@link IllegalStateException} afterwards).
 *
 * <h2>Sequences and gating</h2>
 * Events get consecutive sequence numbers from 0; event {@code s} lives in slot {@code s & (size-1)}.
 * Each consumer owns a sequence: the highest event it has handled ({@code -1} initially). A consumer
 * with dependencies handles event {@code s} only after every dependency's sequence reached {@code s};
 * a consumer without any handles it once it is published. The producer never claims sequence
 * {@code s} unless every gating consumer's sequence is at least {@code s - size}: it never overwrites
 * a slot some consumer has yet to handle. Every live consumer gates (the slowest one bounds the
 * producer); a consumer whose subscriber cancelled leaves the gating set (its sequence becomes
 * {@link Long#MAX_VALUE}) and its dependents wait for its dependencies instead: the declared order holds
 * transitively ({@code a -> b -> c} once {@code b} left: {@code c} handles an event only after {@code a}).
 *
 * <h2>Producers</h2>
 * <ul>
 *   <li>The ring is a {@link Subscriber} (a Reactor {@link CoreSubscriber}, so a {@code Flux} subscribes
 *       it without a serializing wrapper; it keeps the plain Reactive Streams rules all the same:
 *       it never requests {@code n <= 0}, and, unless it is single-producer, its {@code onNext} is safe
 *       even if called concurrently):
 *       its demand upstream is the free space ahead of the
 *       slowest gating consumer (requested up front, then replenished as consumers advance, in
 *       batches of {@code max(1, size/4)} or whenever nothing is outstanding), up to
 *       {@code size - max(1, size/4)} outstanding at once in a multi-producer ring of more than one slot
 *       (the whole ring in single-producer mode): imperative producers next to an upstream that has gone
 *       quiet still find that much room, where demand granted cannot be taken back. An upstream that sends
 *       more than requested fails the ring with an {@link IllegalStateException} (never a silent drop).
 *       One upstream at a time: a second {@code onSubscribe} is cancelled (rule 2.5).</li>
 *   <li>{@link #tryPublish(Object)} for imperative producers: {@code false} when the ring is full,
 *       closed, refusing new events (below), or earlier {@link #publish(Object)} calls are still waiting
 *       (they go first).</li>
 *   <li>{@link #publish(Object)}: a {@link Mono} of the event's sequence that waits for space without
 *       holding a thread; waiting publishes are served in the order they were subscribed.</li>
 *   <li>{@link #tryPublishEvent}: fills a pre-allocated event in place (rings built with
 *       {@link Builder#eventFactory}), for producers that want no allocation per event.</li>
 * </ul>
 * Producers may call these from any thread, concurrently: claiming a sequence is a CAS, and each slot
 * carries the sequence last written into it so that consumers see only fully published events.
 * Space is reserved before a sequence is claimed (demand already granted upstream counts as reserved),
 * so the upstream's requested events always fit. A ring built with {@link Builder#singleProducer()}
 * trades that for speed: see below.
 *
 * <h2>Single-producer mode</h2>
 * Declared with {@link Builder#singleProducer()} (the contract is there): one producer, either the
 * {@code Subscriber} side or the imperative methods from one thread at a time. It publishes like the
 * Disruptor's single-producer sequencer: no CAS to claim, no CAS on the upstream's outstanding
 * demand, no per-slot publication; a batch (a burst of a synchronous upstream, or one imperative
 * call / asynchronous {@code onNext}) becomes visible with one CAS of the cursor, and a consumer
 * reads the cursor once per batch. Which producer the ring has:
 * <pre>
 *   producer kind | event                                      | next kind / action
 *   --------------+--------------------------------------------+-------------------------------------------
 *   none          | onSubscribe                                | subscriber
 *   none          | tryPublish / tryPublishEvent / publish(..) | imperative
 *                 | subscribed                                 |
 *   subscriber    | tryPublish / tryPublishEvent               | subscriber: IllegalStateException thrown
 *   subscriber    | publish(..) subscribed                     | subscriber: the Mono fails (IllegalStateException)
 *   subscriber    | a second onSubscribe                       | subscriber: it is cancelled (rule 2.5)
 *   imperative    | onSubscribe                                | imperative: it is cancelled, the ring closes
 *                 |                                            | with IllegalStateException
 *   imperative    | onNext (no onSubscribe: a protocol error)  | the ring closes with IllegalStateException
 * </pre>
 * Memory ordering of the single-producer protocol (each access with its mode):
 * <pre>
 *   who            | access                                          | mode
 *   ---------------+-------------------------------------------------+--------------------------------------
 *   producer       | slots[s &amp; mask] = event                          | plain
 *   producer       | spNext, spLimit, spFlushed, spBurstTo             | plain (producer-confined, see fields)
 *   producer       | claimed (the cursor) raised to the batch's end    | CAS: release of the batch's slots +
 *                  |                                                   | StoreLoad before the wake-up reads
 *   producer       | consumers' cell status (wake, once per batch)     | volatile read (inside the cell)
 *   producer/drain | reserved (space granted; the demand bound)        | plain read, release store
 *   producer       | reserved re-read when spNext reaches spLimit      | acquire
 *   drain/producer | gatingCache; consumer sequences when it says full | volatile read; volatile reads
 *   consumer       | claimed, once per batch                           | acquire (then plain slot reads)
 *   consumer       | its sequence after the batch                      | volatile store (release: the producer
 *                  |                                                   | overwrites a slot only after it)
 *   any closer     | claimed |= CLOSED                                 | CAS: the final count is exactly the
 *                  |                                                   | events published before it
 * </pre>
 * No lost wake-up: the producer's CAS precedes its status read of each root consumer, and a parking
 * consumer's CAS on its status precedes its re-read of the cursor; of two full fences one sees the
 * other. Inside a burst the intermediate flushes wake nobody; the burst's final flush does.
 *
 * <h2>Completion and errors</h2>
 * {@code onComplete} / {@link #complete()} closes the ring: nothing more is accepted, and each
 * consumer signals {@code onComplete} once it handled every event published before. {@code onError}
 * / {@link #error(Throwable)} closes it the same way and each consumer signals {@code onError} after
 * the events published before (events already accepted are not lost). A handler failure follows the
 * {@link RingErrorPolicy}: {@code STOP} stops the ring at once (upstream cancelled, every consumer
 * signals {@code onError}, publishes still waiting fail; one that got its slot just before succeeded, and its
 * event is discarded with the others no consumer will handle), {@code SKIP} goes on, {@code retry(n, backoff)}
 * suspends the failing consumer for a back-off and calls its handler again on the same event (then
 * stops, or skips with {@code retryThenSkip}). {@link #whenTerminated()}
 * completes when every consumer terminated. When the last live consumer terminates or leaves (for
 * instance its subscriber cancelled), the ring closes and cancels its upstream without asking it for
 * more: nobody is left to read, so a {@link #publish} waiting for space fails and {@code tryPublish}
 * says {@code false}. A signal the upstream sends after its own {@code onComplete}/{@code onError}
 * goes to Reactor's {@code Hooks.onNextDropped}/{@code onErrorDropped}; an element still in flight
 * after the ring cancelled it goes to the discard hook, a late error to {@code onErrorDropped}. An
 * upstream whose {@code request(n)} throws (rule 3.16 broken) is cancelled and closes the ring with that
 * exception, after the events it emitted before it threw ({@code onSubscribe} returns normally, rule 2.13);
 * one whose {@code cancel()} throws (rule 3.15 broken) does not keep the ring from closing: the exception
 * goes to {@code Hooks.onErrorDropped} and {@link #complete()}, {@link #error} return normally, as does the
 * {@code onSubscribe} of a second upstream, cancelled as refused (rule 2.5) (an
 * {@code onErrorDropped} hook that throws as well is logged and does not keep the ring from closing either).
 *
 * <h2>Graceful disposal</h2>
 * While the ring's scheduler or group closes gracefully ({@code disposeGracefully()} subscribed) the ring
 * refuses new events, as the closing scheduler refuses new tasks: {@code tryPublish} and
 * {@code tryPublishEvent} answer {@code false}, {@link #publish} fails with
 * {@code RejectedExecutionException} (so does a publish waiting for space, when the consumers next
 * advance), and the upstream is granted no new demand (events within the demand it holds are taken). The
 * consumers handle the events published before, within their subscribers' outstanding demand (a
 * consumer whose subscriber requests nothing more is idle work, as a Reactor {@code publishOn} waiting
 * for demand is), then the end of the disposal signals {@code onError(RejectedExecutionException)} to
 * their subscribers and the events they did not get go to the discard hook; so the disposal waits for the
 * events the ring held when it began as far as demand lets them go, never for producers that keep
 * publishing.
 *
 * <h2>Discarded events</h2>
 * Reactor's discard hook ({@code doOnDiscard} downstream of a published consumer) sees every event the
 * ring took and will never hand to its last consumer: an element that overflows the upstream's demand or
 * arrives after the ring closed or cancelled its upstream, and, when the last live consumer terminates
 * (its subscriber cancelled, a failure or a disposal stopped the ring), the accepted events some consumer
 * will never handle, whichever consumer happens to terminate last, as Reactor's buffering operators discard
 * their queue on cancel: those above the lowest position of the consumers that ended with the ring (a
 * failure or a disposal stopped them; each goes to the hook of that consumer, the one furthest behind), or,
 * when every consumer left because its subscriber cancelled, those no consumer handled, above the highest
 * position any of them reached (each goes to the hook of the consumer that got furthest). In that second
 * case a consumer whose subscriber cancelled wants nothing more, and an event some consumer handled went to
 * that consumer's subscriber: as with Reactor's multicast operators, it is not discarded as well. In the
 * first, an event a faster consumer already handled is discarded when the one furthest behind never will
 * handle it (the hook sees what that consumer's subscriber never got). These discards happen as the last
 * consumer terminates, before its subscriber gets {@code onError} or {@code onComplete} (as an {@code Actor}
 * discards its mailbox, and Reactor's {@code publishOn} its queue, before they signal an upstream's error; a
 * single-consumer ring's subscriber, a {@link RingProcessor}'s,
 * finds them all once it saw its terminal signal); other consumers may have signalled theirs before, and
 * {@link #whenTerminated()} signals after. The hook is the
 * consumer's subscriber's context, or the ring's {@link #currentContext()} (its first published consumer's
 * subscriber's, as Reactor's multicast operators expose their first subscriber's context) for a consumer
 * without one. A ring completed normally discards nothing: every consumer handled every event. Rings
 * built with an {@link Builder#eventFactory event factory} discard nothing from their slots when they end:
 * their events are reused containers the ring owns, not elements (so an object {@code tryPublish},
 * {@code publish} or the {@code Subscriber} side stored in such a ring, mixing the two styles, is not
 * discarded either); an upstream's element that overflows its demand or arrives after the end never
 * reached a slot, and goes to the hook as on any ring.
 *
 * <h2>Ring state</h2>
 * <pre>
 *   state    | event                                   | next state / action
 *   ---------+-----------------------------------------+------------------------------------------------
 *   building | consumer(..), then(..)                  | building (edges checked for cycles)
 *   building | tryPublish / publish / onNext           | building: events wait in the ring (consumers at -1 gate)
 *   building | start()                                 | open: every consumer becomes an actor and is woken
 *   open     | onComplete / complete()                 | closed: no claim succeeds (CLOSED bit in the claim word);
 *            |                                         | consumers complete after the events claimed before
 *   open     | onError / error(t)                      | closed with t: consumers signal onError(t) after them
 *   open     | handler failure under STOP, or after    | stopped: closed, upstream cancelled, consumers signal
 *            | the last retry of retry(..)             | onError at once (back-offs ended), waiting publishes fail
 *   open     | handler failure under retry(..)         | open: the failing consumer backs off (suspended, no
 *            |                                         | thread; see RingConsumer), gating as a slow consumer
 *   open     | last live consumer terminates or leaves | closed (waiting publishes fail), upstream
 *            | the gating set                          | cancelled without a further request
 *   closed   | tryPublish / publish / onNext           | false / onError(IllegalStateException) / discarded
 *   open     | its scheduler or group closing          | open, refusing new events: tryPublish false, publish
 *            | gracefully                              | fails (REE), no new upstream demand; consumers drain
 * </pre>
 *
 * <h2>Metrics</h2>
 * {@link #cursor()}, {@link #remainingCapacity()} and, per consumer, {@link RingConsumer#lag()},
 * {@code processedEvents()}, {@code skippedEvents()}, {@code retriedEvents()}. A ring whose scheduler
 * was built with {@code ActorScheduler.Builder.metrics(..)} reports them through that binding: its
 * meters are registered by {@link #start()} and removed when the ring terminates (so short-lived
 * rings leave nothing behind). With Micrometer: {@code io.reactoractor.micrometer.MicrometerRingMetrics}.
 *
 * <h2>Memory</h2>
 * A slot keeps its event reachable until the producer overwrites it, {@code size} sequences later.
 *
 * @param <T> the event type
 */
public final class RingBuffer<T> implements CoreSubscriber<T>, Scannable {

    private static final VarHandle PUBLISHED = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle CLAIMED;
    private static final VarHandle RESERVED;
    private static final VarHandle GATING_CACHE;
    private static final VarHandle PRODUCER_KIND;
    private static final VarHandle DISCARDED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            CLAIMED = l.findVarHandle(RingBuffer.class, "claimed", long.class);
            RESERVED = l.findVarHandle(RingBuffer.class, "reserved", long.class);
            GATING_CACHE = l.findVarHandle(RingBuffer.class, "gatingCache", long.class);
            PRODUCER_KIND = l.findVarHandle(RingBuffer.class, "producerKind", int.class);
            DISCARDED = l.findVarHandle(RingBuffer.class, "discardedTo", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Set in {@link #claimed} once the ring is closed: no sequence is claimed afterwards. */
    static final long CLOSED = 1L << 62;

    private static final AtomicInteger SEQ = new AtomicInteger();

    /** {@link #producerKind}: no producer yet (single-producer mode only). */
    private static final int KIND_NONE = 0;
    /** {@link #producerKind}: {@code tryPublish} / {@code tryPublishEvent} / {@code publish} are used. */
    private static final int KIND_IMPERATIVE = 1;
    /** {@link #producerKind}: the ring was subscribed to an upstream. */
    private static final int KIND_SUBSCRIBER = 2;
    /**
     * Single-producer mode: inside a burst the producer makes its events visible every this many
     * events (one CAS), so a consumer running on another carrier need not wait for the burst's end.
     */
    private static final int SP_BURST_FLUSH = 64;
    private static final Object COMPLETED = new Object();

    private final ActorGroup group;
    private final String name;
    private final int size;
    private final int mask;
    private final RingErrorPolicy errorPolicy;
    private final long replenish;
    /**
     * The most demand the upstream may hold at once: all of the ring when it is its only producer; else
     * {@code size - max(1, size/4)}, so that the imperative producers the multi-producer ring allows next to
     * an upstream still find room while that upstream is quiet (demand granted cannot be taken back, and an
     * idle upstream holding the whole ring shut them out for good).
     */
    private final long upstreamCap;

    /** The events; slot {@code s & mask} holds event {@code s}. Written plain, published by {@link #published}. */
    private final Object[] slots;
    /** Whether the slots hold pre-allocated events from the builder's event factory. */
    private final boolean preallocated;
    /**
     * {@code published[s & mask] == s} once event {@code s} is in its slot (initially -1, never a
     * valid sequence of that slot). Memory ordering: the producer writes the slot (plain), then this
     * element with {@code setVolatile} (a release, ordered before the later wake-up reads); a consumer
     * reads it with {@code getVolatile} (an acquire) before reading the slot, so it sees the event.
     */
    private final long[] published;

    /**
     * Multi-producer mode: the number of sequences claimed so far (the next sequence to claim), with
     * {@link #CLOSED}; claimed by CAS (full fence); read by consumers (volatile) to learn the final
     * sequence. Single-producer mode: the <em>cursor</em>, the number of events published so far,
     * with {@link #CLOSED}: the producer raises it by CAS once per batch (release for the batch's
     * plain slot stores, and the StoreLoad fence before the wake-up reads), consumers read it once per
     * batch with an acquire; a closer sets {@link #CLOSED} by CAS, so the final count is exactly the
     * events published before the close (a producer whose CAS fails learns it was closed first).
     */
    @SuppressWarnings("unused")
    private volatile long claimed;
    /**
     * Slots promised so far: claimed sequences plus demand granted upstream that has not arrived.
     * Invariant: {@code reserved <= gatingMin + 1 + size} at the time of each reservation, and the
     * gating minimum only grows, so a claimed sequence {@code s} (claims never exceed reservations)
     * satisfies {@code s - size <= gatingMin}: its slot's previous event was handled by every gating
     * consumer. Changed by CAS only (multi-producer mode); in single-producer mode by its one
     * reserver at a time with a plain read and a release store (see {@link #tryReserveSingle}).
     */
    @SuppressWarnings("unused")
    private volatile long reserved;
    /**
     * A lower bound of the gating minimum (the slowest live consumer's sequence), raised by CAS to a
     * freshly computed value when a reservation would not fit. A stale (lower) value only makes the
     * producer recompute; it is never above the truth because consumer sequences only grow.
     */
    @SuppressWarnings("unused")
    private volatile long gatingCache = -1L;

    // ---- single-producer mode (see "Single-producer mode" in the class Javadoc)
    /** Declared by {@link Builder#singleProducer()}; fixed for the ring's life. */
    private final boolean singleProducer;
    /**
     * Single-producer mode: which kind of producer the ring has ({@code KIND_*}); set once from
     * {@code KIND_NONE} by CAS (by the first {@code onSubscribe} or the first imperative call), then
     * only read (volatile: one plain load on x86 per imperative call).
     */
    @SuppressWarnings("unused")
    private volatile int producerKind;
    /**
     * Single-producer mode: the next sequence the producer fills. <b>Plain</b>, producer-confined:
     * {@code onNext} calls are serial with a happens-before between them (rule 1.3), and imperative
     * calls are serial by contract (a {@code publish} served by the drain is handed over through the
     * volatile {@link #waiters} count: see {@link #spClaimAndPublish}).
     */
    private long spNext;
    /**
     * Single-producer {@code Subscriber} side: the cached bound of the demand granted upstream (a
     * snapshot of {@link #reserved}, refreshed with an acquire read only when {@link #spNext} reaches
     * it). Plain, producer-confined.
     */
    private long spLimit;
    /** Single-producer mode: the cursor value this producer last published (a hint). Plain, producer-confined. */
    private long spFlushed;
    /**
     * Single-producer mode: {@code spNext} after the last event of the current burst. Plain: written by
     * the burst's {@code onNext} calls, which run on the drain thread inside {@link #requestBurst},
     * and read by that same thread when the burst ends (successive drains are ordered by
     * {@link #producerWip}).
     */
    private long spBurstTo;
    /**
     * Single-producer mode: events below this were handed to {@code Operators.onDiscard} because the
     * ring closed before they were published; raised by CAS (only after a close: never per event), so
     * each such event is discarded once even if the burst's end and a later {@code onNext} both find
     * the ring closed.
     */
    @SuppressWarnings("unused")
    private volatile long discardedTo;

    private final List<RingConsumer<T, ?>> consumerList = new ArrayList<>();
    /** All consumers, fixed at {@link #start()}. */
    private volatile RingConsumer<T, ?>[] consumers;
    /** Consumers that wait only for the producer (no live dependency); copy-on-write. */
    private volatile RingConsumer<T, ?>[] roots;
    private volatile boolean started;

    // ---- producer side
    private final AtomicReference<Subscription> upstream = new AtomicReference<>();
    private volatile boolean upstreamDone;
    /**
     * The upstream itself signalled {@code onComplete} / {@code onError} (set before
     * {@link #upstreamDone}'s effects are acted on): a signal after that breaks rule 1.7 and goes to
     * Reactor's dropped hooks, where an element in flight after our own cancel is discarded.
     */
    private volatile boolean upstreamTerminated;
    /** Demand granted upstream and not yet received (multi-producer mode; single: {@code reserved - cursor}). */
    private final AtomicLong outstanding = new AtomicLong();
    private final ConcurrentLinkedQueue<PendingPublish<T>> pending = new ConcurrentLinkedQueue<>();
    /** Waiting {@link #publish} calls (cancelled ones included until the drain removes them). */
    private final AtomicInteger waiters = new AtomicInteger();
    private final AtomicInteger producerWip = new AtomicInteger();
    /**
     * The thread inside the drain's {@code upstream.request(n)} call, or {@code null}. A synchronous
     * upstream (a fused {@code Flux.fromArray}, {@code range}, an operator chain without a thread hop)
     * emits inside that call, on that thread: those {@code onNext} calls are a <em>burst</em> and skip
     * the per-event wake-up; the drain wakes the consumers once when the call returns (see
     * {@link #requestBurst}). Written only by the thread holding {@link #producerWip}; any thread reads
     * it in {@code onNext}, and only ever compares it with itself: a thread never reads its own
     * earlier write after it cleared the field (program order), and another thread's value is never
     * equal to it, so a stale read can only make an {@code onNext} take the per-event path.
     */
    private volatile Thread requesting;

    // ---- terminal state
    /**
     * Why the ring closed: {@link #COMPLETED} or the error to deliver after the events published
     * before it (upstream {@code onError} / {@link #error}). Set once, by CAS, before {@link #CLOSED}
     * is set, so a consumer that saw {@code CLOSED} (volatile) sees it.
     */
    private final AtomicReference<Object> closeCause = new AtomicReference<>();
    /** Handler failure under {@link RingErrorPolicy#STOP}: delivered at once. */
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicInteger liveConsumers = new AtomicInteger();
    private final Sinks.Empty<Void> terminated = Sinks.empty();
    /**
     * The registration of this ring's meters with its scheduler's metrics binding: {@code null} until
     * {@link #start()} registered them, {@link #METRICS_DONE} once the ring terminated. Exactly one of
     * {@link #bindMetrics()} and {@link #unbindMetrics()} sees the other's value (both swap by CAS), so
     * meters registered by a start that raced the termination are removed too.
     */
    private final AtomicReference<RingMetrics.Registration> metrics = new AtomicReference<>();
    private static final RingMetrics.Registration METRICS_DONE = () -> {
    };
    /**
     * The registration of {@link #unbindMetrics()} with the scheduler's termination, left once the meters are
     * removed. {@link #bindMetrics()} writes it, then reads {@link #metrics}; {@link #unbindMetrics()} swaps
     * {@link #metrics}, then reads it (all volatile), so at least one of them sees the other and disposes it
     * (idempotent): the scheduler holds no closer of a terminated ring.
     */
    private volatile reactor.core.Disposable metricsCloser;
    /**
     * Held by {@link #unbindMetrics()} while it swaps {@link #metrics} and removes the meters, so that a second
     * caller (the scheduler's {@code dispose()} running its closer while the last consumer's termination removes
     * them on a carrier, or the other way round) returns only once they are gone: each caller promises its own
     * caller that the meters are removed. Only the binding's removal runs under it (no lock of ours is taken
     * inside); the wait is as long as the registry's removal of a handful of meters.
     */
    private final Object metricsRemoval = new Object();

    private RingBuffer(Builder<T> b) {
        this.group = b.group;
        this.name = b.name != null ? b.name : "ring-" + SEQ.incrementAndGet();
        this.size = b.size;
        this.mask = b.size - 1;
        this.errorPolicy = b.errorPolicy;
        this.singleProducer = b.singleProducer;
        this.replenish = Math.max(1, b.size / 4);
        this.upstreamCap = b.singleProducer || b.size == 1 ? b.size : b.size - replenish;
        this.slots = new Object[b.size];
        this.preallocated = b.eventFactory != null;
        if (preallocated) {
            for (int i = 0; i < slots.length; i++) {
                slots[i] = Objects.requireNonNull(b.eventFactory.get(), "eventFactory returned null");
            }
        }
        this.published = new long[b.size];
        Arrays.fill(published, -1L);
    }

    // ================================================================== building

    /**
     * @param scheduler an {@link ActorScheduler} (its default group) or one of its {@link ActorGroup}s:
     *                  where the consumers run and whose CPU share they use
     * @param <T>       the event type
     * @return a builder
     * @throws NullPointerException     if {@code scheduler} is {@code null}
     * @throws IllegalArgumentException if {@code scheduler} is not an actor scheduler or group
     */
    public static <T> Builder<T> builder(Scheduler scheduler) {
        return new Builder<>(io.reactoractor.internal.Internals.groupOf(scheduler));
    }

    /**
     * Creates a consumer whose results are discarded (it needs no subscriber). It takes part in the
     * graph and gates the producer from {@link #start()} on.
     *
     * @param name    the consumer's name, unique in this ring (used in paths and metrics)
     * @param handler what it does with each event
     * @param <R>     the handler's result type
     * @return the consumer
     * @throws NullPointerException     if an argument is {@code null}
     * @throws IllegalArgumentException if {@code name} is blank, longer than 128 characters, holds a control
     *                                  character or is already used in this ring
     * @throws IllegalStateException    if the ring was started
     */
    public <R> RingConsumer<T, R> consumer(String name, RingHandler<? super T, ? extends R> handler) {
        return addConsumer(name, handler, false);
    }

    /**
     * Creates a consumer exposed as a unicast {@link org.reactivestreams.Publisher} of its handler's
     * results. It handles an event only while its subscriber has demand: until it is subscribed and
     * whenever demand is exhausted it parks, and (being a gating consumer) holds the producer back
     * once the ring is full, so backpressure reaches the ring's upstream.
     *
     * @param name    the consumer's name, unique in this ring
     * @param handler what it does with each event; its non-null results are emitted
     * @param <R>     the result type
     * @return the consumer
     * @throws NullPointerException     if an argument is {@code null}
     * @throws IllegalArgumentException if {@code name} is blank, longer than 128 characters, holds a control
     *                                  character or is already used in this ring
     * @throws IllegalStateException    if the ring was started
     */
    public <R> RingConsumer<T, R> publishedConsumer(String name, RingHandler<? super T, ? extends R> handler) {
        return addConsumer(name, handler, true);
    }

    private synchronized <R> RingConsumer<T, R> addConsumer(String name, RingHandler<? super T, ? extends R> handler,
            boolean publishedConsumer) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(handler, "handler");
        io.reactoractor.internal.Internals.checkName(name, 128, false);
        checkNotStarted();
        for (RingConsumer<T, ?> c : consumerList) {
            if (c.name().equals(name)) {
                throw new IllegalArgumentException("name '" + name + "' is already used by a consumer of ring "
                        + this.name);
            }
        }
        RingConsumer<T, R> c = new RingConsumer<>(this, name, handler, publishedConsumer);
        consumerList.add(c);
        return c;
    }

    /**
     * Starts a chain: the returned group's {@link ConsumerGroup#then then} makes consumers depend on
     * all of {@code first}. The consumers themselves depend on nothing new.
     *
     * @param first consumers of this ring
     * @return a group of {@code first}
     * @throws NullPointerException     if the array or an element is {@code null}
     * @throws IllegalArgumentException if it is empty or a consumer belongs to another ring
     * @throws IllegalStateException    if the ring was started
     */
    @SafeVarargs
    public final ConsumerGroup<T> handleEventsWith(RingConsumer<T, ?>... first) {
        return new ConsumerGroup<>(this, checkMembers(first, "first")); // the caller's parameter in its errors
    }

    /**
     * A group of existing consumers, to add dependents to them: {@code ring.after(a, b).then(c)}.
     *
     * @param consumers consumers of this ring
     * @return a group of them
     * @throws NullPointerException     if the array or an element is {@code null}
     * @throws IllegalArgumentException if it is empty or a consumer belongs to another ring
     * @throws IllegalStateException    if the ring was started
     */
    @SafeVarargs
    public final ConsumerGroup<T> after(RingConsumer<T, ?>... consumers) {
        return new ConsumerGroup<>(this, checkMembers(consumers, "consumers"));
    }

    List<RingConsumer<T, ?>> checkMembers(RingConsumer<T, ?>[] cs, String param) {
        Objects.requireNonNull(cs, param);
        if (cs.length == 0) {
            throw new IllegalArgumentException(param + " must not be empty");
        }
        List<RingConsumer<T, ?>> list = new ArrayList<>(cs.length);
        for (int i = 0; i < cs.length; i++) {
            RingConsumer<T, ?> c = Objects.requireNonNull(cs[i], param + "[" + i + "]");
            if (c.ring() != this) {
                throw new IllegalArgumentException(param + "[" + i + "] (" + c.name()
                        + ") belongs to another ring than " + name);
            }
            list.add(c);
        }
        synchronized (this) {
            checkNotStarted();
        }
        return list;
    }

    /** Adds the edges {@code dep -> c} for each pair, rejecting any that closes a cycle (all or nothing). */
    synchronized void addDependencies(List<RingConsumer<T, ?>> deps, List<RingConsumer<T, ?>> dependents) {
        checkNotStarted();
        for (RingConsumer<T, ?> c : dependents) {
            for (RingConsumer<T, ?> d : deps) {
                List<RingConsumer<T, ?>> path = pathVia(d, c, new HashSet<>());
                if (path != null) {
                    StringBuilder sb = new StringBuilder("consumer dependency cycle: ");
                    sb.append(c.name());
                    for (RingConsumer<T, ?> p : path) {
                        sb.append(" -> ").append(p.name());
                    }
                    sb.append(" (").append(c.name()).append(" cannot depend on ").append(d.name())
                            .append(", which already depends on it)");
                    throw new IllegalArgumentException(sb.toString());
                }
            }
        }
        for (RingConsumer<T, ?> c : dependents) {
            for (RingConsumer<T, ?> d : deps) {
                c.addDependency(d);
            }
        }
    }

    /**
     * The dependency path from {@code from} down to {@code target} (both included), or {@code null} if
     * {@code from} does not (transitively) depend on {@code target}; a consumer reaches itself.
     */
    private List<RingConsumer<T, ?>> pathVia(RingConsumer<T, ?> from, RingConsumer<T, ?> target,
            Set<RingConsumer<T, ?>> seen) {
        if (from == target) {
            List<RingConsumer<T, ?>> p = new ArrayList<>();
            p.add(from);
            return p;
        }
        if (!seen.add(from)) {
            return null;
        }
        for (RingConsumer<T, ?> d : from.dependencies()) {
            List<RingConsumer<T, ?>> p = pathVia(d, target, seen);
            if (p != null) {
                p.add(0, from);
                return p;
            }
        }
        return null;
    }

    private void checkNotStarted() {
        if (started) {
            throw new IllegalStateException("ring " + name + " is started: consumers and dependencies can only "
                    + "be added before start()");
        }
    }

    /**
     * Starts the consumers: each becomes an actor of the ring's group and handles the events
     * published so far (publishing before start is allowed; events wait in the ring).
     *
     * @return this ring
     * @throws IllegalStateException if the ring has no consumer or was already started
     */
    @SuppressWarnings("unchecked")
    public RingBuffer<T> start() {
        RingConsumer<T, ?>[] all;
        synchronized (this) {
            checkNotStarted();
            if (consumerList.isEmpty()) {
                throw new IllegalStateException("ring " + name + " has no consumer");
            }
            all = consumerList.toArray(new RingConsumer[0]);
            consumers = all;
            liveConsumers.set(all.length);
            for (RingConsumer<T, ?> c : all) {
                c.createCell(group, group.name() + "/" + name + "/" + c.name());
            }
            recomputeRoots(); // after the cells: it reads the dependency arrays they were made with
            started = true;
        }
        for (RingConsumer<T, ?> c : all) {
            c.joinGroup(); // a started ring's: a disposal that began meanwhile stops it here
        }
        for (RingConsumer<T, ?> c : all) {
            c.wake();
        }
        if (upstream.get() != null || !pending.isEmpty()) {
            producerDrain();
        }
        bindMetrics();
        return this;
    }

    /**
     * Registers the ring's meters with its scheduler's metrics binding, if it has one (a scheduler
     * built with {@code .metrics(..)}); {@link #lastConsumerTerminated()} removes them. A registration
     * that fails (a registry refusing the meters) is logged, never thrown: the ring runs unmetered.
     */
    private void bindMetrics() {
        if (!(group.scheduler().metrics() instanceof MetricsBinding binding)) {
            return;
        }
        RingMetrics.Registration r;
        try {
            r = binding.ringMetrics(group.scheduler().name()).bindRing(this);
        } catch (Throwable e) { // an Error too: a registry that fails is never the ring's failure
            Loggers.getLogger(RingBuffer.class).warn("ring " + name + ": meters not registered", e);
            return;
        }
        if (!metrics.compareAndSet(null, r)) {
            r.unbind(); // terminated meanwhile
            return;
        }
        // the scheduler's termination removes them too, inside its dispose(), not when this ring's consumers end
        // their running turns: a namesake on a scheduler rebuilt under the same name right after finds them gone
        reactor.core.Disposable closer = Internals.engine(group).onMetricsClose(this::unbindMetrics);
        metricsCloser = closer;
        if (metrics.get() == METRICS_DONE) {
            closer.dispose(); // unbound meanwhile: see metricsCloser
        }
    }

    private void unbindMetrics() {
        synchronized (metricsRemoval) { // a caller finding them being removed waits: see metricsRemoval
            RingMetrics.Registration r = metrics.getAndSet(METRICS_DONE);
            if (r != null && r != METRICS_DONE) {
                r.unbind();
            }
        }
        reactor.core.Disposable closer = metricsCloser;
        if (closer != null) {
            closer.dispose();
        }
    }

    // ================================================================== producer: imperative

    /**
     * Publishes {@code event} if there is space, without waiting.
     *
     * @param event the event
     * @return {@code true} if it was published; {@code false} if the ring is full, closed, refusing new
     *         events (its scheduler or group closing gracefully, see the class doc), or earlier
     *         {@link #publish} calls are waiting (they are served first)
     * @throws NullPointerException  if {@code event} is {@code null}
     * @throws IllegalStateException if the ring is {@linkplain Builder#singleProducer() single-producer}
     *                               and was subscribed to an upstream (its one producer)
     */
    public boolean tryPublish(T event) {
        Objects.requireNonNull(event, "event");
        if (singleProducer) {
            claimImperative();
            if (waiters.get() != 0 || isClosed() || refusesNewEvents() || !tryReserve(1)) {
                return false;
            }
            return spClaimAndPublish(event, null) >= 0;
        }
        if (waiters.get() != 0 || isClosed() || refusesNewEvents() || !tryReserve(1)) {
            return false;
        }
        return claimAndPublish(event) >= 0;
    }

    /**
     * Publishes by filling the next pre-allocated event in place (rings built with
     * {@link Builder#eventFactory}), without waiting: the Disruptor's {@code tryPublishEvent}. The
     * translator runs on the calling thread with the slot's event, after every consumer is done with
     * the event that slot held before; the event is published when it returns. If it throws, the
     * event is published anyway (a claimed sequence cannot be left empty: consumers would wait for it
     * forever) and the exception propagates to the caller.
     * In single-producer mode, if the ring closes while the translator runs, the filled event is not
     * published and {@code false} is returned.
     *
     * @param translator fills the event
     * @return {@code true} if an event was published; {@code false} as for {@link #tryPublish}
     * @throws NullPointerException  if {@code translator} is {@code null}
     * @throws IllegalStateException if the ring has no event factory, or is single-producer and was
     *                               subscribed to an upstream
     */
    public boolean tryPublishEvent(Consumer<? super T> translator) {
        Objects.requireNonNull(translator, "translator");
        if (!preallocated) {
            throw new IllegalStateException("ring " + name + " has no event factory: use tryPublish(event), "
                    + "or build it with eventFactory(..)");
        }
        if (singleProducer) {
            claimImperative();
        }
        if (waiters.get() != 0 || isClosed() || refusesNewEvents() || !tryReserve(1)) {
            return false;
        }
        return claimAndPublishAny(null, translator) >= 0;
    }

    /**
     * Publishes {@code event}, waiting for space without holding a thread. The returned {@link Mono}
     * is lazy (nothing happens until it is subscribed); it emits the event's sequence once published,
     * and fails with {@link IllegalStateException} if the ring is or becomes closed first, with
     * {@code RejectedExecutionException} if its scheduler or group closes (gracefully, or is disposed, which
     * stops the ring) before it is published (class doc). Cancelling
     * it while waiting withdraws the event. In single-producer mode, subscribing to it is the
     * producer's call (it must not overlap another publishing call), and it fails with
     * {@link IllegalStateException} if the ring was subscribed to an upstream.
     *
     * @param event the event
     * @return a {@link Mono} of the event's sequence
     * @throws NullPointerException if {@code event} is {@code null}
     */
    public Mono<Long> publish(T event) {
        Objects.requireNonNull(event, "event");
        return Mono.create(sink -> {
            if (singleProducer) {
                try {
                    claimImperative();
                } catch (IllegalStateException e) {
                    sink.error(e);
                    return;
                }
            }
            if (!isClosed() && refusesNewEvents()) {
                sink.error(rejection(sink.contextView()));
                return;
            }
            if (waiters.get() == 0 && !isClosed() && tryReserve(1)) {
                long seq = claimAndPublishAny(event, null);
                if (seq >= 0) {
                    sink.success(seq);
                } else {
                    sink.error(closedError());
                }
                return;
            }
            PendingPublish<T> p = new PendingPublish<>(event, sink);
            sink.onCancel(() -> {
                p.cancelled = true;
                producerDrain(); // withdraw it now: a waiter blocks tryPublish until the drain removes it
            });
            waiters.incrementAndGet();
            pending.offer(p);
            producerDrain();
        });
    }

    /**
     * Closes the ring: nothing more is published (the upstream, if any, is cancelled) and each
     * consumer completes once it handled every event published before. Idempotent.
     */
    public void complete() {
        cancelUpstream();
        close();
    }

    /**
     * Closes the ring with an error: each consumer signals {@code onError(error)} once it handled
     * every event published before. The upstream, if any, is cancelled. Only the first terminal signal
     * counts.
     *
     * @param error the error
     * @throws NullPointerException if {@code error} is {@code null}
     */
    public void error(Throwable error) {
        Objects.requireNonNull(error, "error");
        cancelUpstream();
        closeWithError(error);
    }

    // ================================================================== producer: Subscriber

    @Override
    public void onSubscribe(Subscription s) {
        Objects.requireNonNull(s, "subscription");
        if (singleProducer && !claimSubscriber()) {
            // the imperative producer is this ring's one producer: a second one would race it
            BrokenUpstreams.cancel(s, this::currentContext);
            if (!upstreamDone && !isClosed()) {
                closeWithError(new IllegalStateException("ring " + name + " is single-producer and already has "
                        + "an imperative producer (tryPublish/tryPublishEvent/publish): it cannot also be "
                        + "subscribed to an upstream"));
            }
            return;
        }
        if (upstreamDone || isClosed() || !upstream.compareAndSet(null, s)) {
            // rule 2.5: one upstream at a time; a cancel that throws must not escape onSubscribe (2.13)
            BrokenUpstreams.cancel(s, this::currentContext);
            return;
        }
        if (upstreamDone && upstreamCancelled.compareAndSet(false, true)) {
            // the ring closed while this subscribed: cancelUpstream() may have read no upstream yet
            BrokenUpstreams.cancel(s, this::currentContext);
            return;
        }
        if (started) {
            producerDrain();
        }
    }

    @Override
    public void onNext(T t) {
        Objects.requireNonNull(t, "onNext element");
        if (upstreamDone) {
            if (upstreamTerminated) {
                Operators.onNextDropped(t, currentContext()); // after the upstream's own terminal signal
            } else {
                Operators.onDiscard(t, currentContext()); // in flight when we cancelled (rule 2.8)
            }
            return;
        }
        if (singleProducer) {
            onNextSingleProducer(t);
            return;
        }
        for (;;) {
            long o = outstanding.get();
            if (o <= 0) {
                overflow(t);
                return;
            }
            if (outstanding.compareAndSet(o, o - 1)) {
                break;
            }
        }
        long seq = requesting == Thread.currentThread() ? claimAndPublishInBurst(t) : claimAndPublish(t);
        if (seq < 0) {
            Operators.onDiscard(t, currentContext()); // closed by complete()/error()/a failure meanwhile
        }
    }

    /** The upstream sent more than it was granted: cancel it and close the ring with an error (never a silent drop). */
    private void overflow(T t) {
        cancelUpstream();
        Operators.onDiscard(t, currentContext());
        closeWithError(new IllegalStateException("ring " + name
                + ": upstream sent an event beyond the demand it was granted (rule 1.1)"));
    }

    @Override
    public void onError(Throwable t) {
        Objects.requireNonNull(t, "onError throwable");
        if (upstreamDone) {
            // after the upstream's own terminal signal, or after we cancelled it: nobody takes it any more
            Internals.onErrorDropped(t, currentContext());
            return;
        }
        upstreamTerminated = true;
        upstreamDone = true;
        if (singleProducer) {
            spFlushBeforeClose(); // a burst may end with onError inside request(n): its events go first
        }
        closeWithError(t);
    }

    @Override
    public void onComplete() {
        if (upstreamDone) {
            return;
        }
        upstreamTerminated = true;
        upstreamDone = true;
        if (singleProducer) {
            spFlushBeforeClose();
        }
        close();
    }

    // ================================================================== metrics

    /** @return the ring's name */
    public String name() {
        return name;
    }

    /** @return the number of slots */
    public int size() {
        return size;
    }

    /** @return the group whose actors run the consumers */
    public ActorGroup group() {
        return group;
    }

    /** @return whether the ring was built with {@link Builder#singleProducer()} */
    public boolean isSingleProducer() {
        return singleProducer;
    }

    /** @return the error policy for handler failures */
    public RingErrorPolicy errorPolicy() {
        return errorPolicy;
    }

    /**
     * @return the highest sequence claimed by a producer so far ({@code -1} before the first event); in
     *         single-producer mode, the highest sequence published (events the producer has stored but
     *         not yet published in its current batch are not counted)
     */
    public long cursor() {
        return (claimed & ~CLOSED) - 1;
    }

    /**
     * @return how many more events fit before the producer must wait for the slowest gating consumer
     *         (demand already granted upstream counts as taken); {@code 0} once the ring is closed or
     *         every consumer left; a momentary value
     */
    public long remainingCapacity() {
        if (isClosed()) {
            return 0;
        }
        long g = gatingMin();
        if (g == Long.MAX_VALUE) {
            return 0; // every consumer left: nothing fits, the ring is closing (see tryReserve)
        }
        return Math.max(0, g + 1 + size - reserved);
    }

    /** @return whether the ring is closed (completed, errored or stopped) */
    public boolean isClosed() {
        return (claimed & CLOSED) != 0;
    }

    /**
     * The context this ring exposes upstream (it is a {@link CoreSubscriber}) and discards into (class doc,
     * "Discarded events"): the context of the first consumer, in creation order, that a subscriber
     * subscribed to, as Reactor's multicast operators expose their first subscriber's; kept once that
     * consumer terminated, so an element still in flight after the end is discarded there too. Empty
     * before any subscriber.
     *
     * @return the first published consumer's subscriber's context, or an empty one
     */
    @Override
    public Context currentContext() {
        RingConsumer<T, ?>[] cs = consumers;
        if (cs == null) {
            synchronized (this) {
                cs = consumerList.toArray(new RingConsumer[0]);
            }
        }
        for (RingConsumer<T, ?> c : cs) {
            if (c.hasSubscribed()) {
                return c.subscriberContext();
            }
        }
        return Context.empty();
    }

    /** @return the consumers, in creation order */
    public List<RingConsumer<T, ?>> consumers() {
        synchronized (this) {
            return List.copyOf(consumerList);
        }
    }

    /**
     * @return a {@link Mono} that completes when every consumer terminated, or fails with the ring's
     *         error (the one it was closed with: {@link #error(Throwable)}, the upstream's {@code onError};
     *         or a handler failure under {@link RingErrorPolicy#STOP}); by then
     *         the events no consumer handled have gone to the discard hook (class doc, "Discarded events")
     */
    public Mono<Void> whenTerminated() {
        return terminated.asMono();
    }

    /**
     * Reactor's {@link Scannable} view, after its processors' conventions: {@code NAME} (the ring's name),
     * {@code PARENT} (the upstream's subscription, {@code null} before one), {@code CAPACITY} and
     * {@code PREFETCH} (the size), {@code BUFFERED} (events published and not yet handled by the slowest
     * gating consumer, momentary, at most the size), {@code TERMINATED} (closed), {@code CANCELLED} (the ring
     * cancelled its upstream), {@code ERROR}, {@code RUN_ON} (the ring's group), {@code RUN_STYLE} ({@code ASYNC}); its consumers
     * are its {@link #inners()}.
     */
    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return name;
        }
        if (key == Attr.PARENT) {
            return upstream.get();
        }
        if (key == Attr.CAPACITY || key == Attr.PREFETCH) {
            return size;
        }
        if (key == Attr.BUFFERED) {
            long g = started ? gatingMin() : -1L;
            // clamped to the size: the reads are not one snapshot (see RingConsumer#lag)
            long b = g == Long.MAX_VALUE ? 0 : Math.max(0, cursor() - g);
            return (int) Math.min(size, b);
        }
        if (key == Attr.TERMINATED) {
            return isClosed();
        }
        if (key == Attr.CANCELLED) {
            // the ring cancelled a subscribed upstream: not a ring that never had one, nor one whose upstream
            // ended by itself (complete() and error(..) end the imperative producer's ring without a cancel)
            return upstreamCancelled.get();
        }
        if (key == Attr.ERROR) {
            Throwable f = failure.get();
            return f != null ? f : closingError();
        }
        if (key == Attr.RUN_ON) {
            return group;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    /** @return the ring's consumers ({@link Scannable}), in creation order */
    @Override
    public java.util.stream.Stream<? extends Scannable> inners() {
        return consumers().stream();
    }

    @Override
    public String toString() {
        return "RingBuffer[" + group.name() + "/" + name + ", size=" + size + "]";
    }

    // ================================================================== internals: claiming

    /**
     * Reserves {@code n} slots if they fit ahead of the gating minimum (see {@link #reserved}).
     * Memory ordering: the gating minimum is read with volatile reads of the consumer sequences, which
     * each consumer writes (volatile) after it finished reading the slots up to it, so every read of a
     * slot that may be overwritten under this reservation happened-before the overwrite.
     */
    private boolean tryReserve(long n) {
        if (singleProducer) {
            return tryReserveSingle(n);
        }
        for (;;) {
            long r = reserved;
            if (!fits(r, n)) {
                return false;
            }
            if (RESERVED.compareAndSet(this, r, r + n)) {
                return true;
            }
        }
    }

    /**
     * Whether {@code n} more slots after the {@code r} reserved fit ahead of the gating minimum: the cached
     * {@link #gatingCache} first, recomputed (and the cache raised) only when it says full. A ring whose
     * consumers all left closes here ({@link #noReaderLeft}).
     */
    private boolean fits(long r, long n) {
        if (r + n <= gatingCache + 1 + size) {
            return true;
        }
        long g = gatingMin();
        if (g == Long.MAX_VALUE) {
            noReaderLeft();
            return false;
        }
        raiseGatingCache(g);
        return r + n <= g + 1 + size;
    }

    /**
     * {@link #tryReserve} in single-producer mode: only one thread reserves at a time (the drain,
     * serialized by {@link #producerWip}, for upstream demand; or the imperative producer, whose calls
     * are serial and hand over to the drain through {@link #waiters}), so the reservation is a plain
     * read and a <b>release</b> store (the {@code onNext} side reads it with an acquire as the demand
     * bound, see {@link #onNextSingleProducer}). The gating minimum is the cached {@link #gatingCache},
     * recomputed (volatile reads of every gating consumer's sequence) only when the cache says full.
     */
    private boolean tryReserveSingle(long n) {
        long r = reserved;
        if (!fits(r, n)) {
            return false;
        }
        RESERVED.setRelease(this, r + n);
        return true;
    }

    /**
     * The gating minimum is {@link Long#MAX_VALUE} on a started ring: every consumer left the gating set
     * (cancelled, or a bad request), so nobody will read another event. The last one's termination
     * closes the ring ({@link #consumerTerminating}); a reservation that comes first must not slip an
     * event (a waiting publish, a burst of upstream demand) into that window, where nobody would handle
     * or discard it: it closes the ring itself and fails, so publishes fail as documented.
     */
    private void noReaderLeft() {
        close();
    }

    private void raiseGatingCache(long g) {
        for (;;) {
            long c = gatingCache;
            if (g <= c || GATING_CACHE.compareAndSet(this, c, g)) {
                return;
            }
        }
    }

    /** @return the slowest live consumer's sequence, or {@link Long#MAX_VALUE} if none is live */
    long gatingMin() {
        RingConsumer<T, ?>[] cs = consumers;
        long min = Long.MAX_VALUE;
        if (cs == null) {
            // not started: consumers in the list are at -1 (they gate from the start)
            synchronized (this) {
                return consumerList.isEmpty() ? -1L : minOf(consumerList);
            }
        }
        for (RingConsumer<T, ?> c : cs) {
            long s = c.sequence();
            if (s < min) {
                min = s;
            }
        }
        return min;
    }

    private static long minOf(List<? extends RingConsumer<?, ?>> cs) {
        long min = Long.MAX_VALUE;
        for (RingConsumer<?, ?> c : cs) {
            min = Math.min(min, c.sequence());
        }
        return min;
    }

    /**
     * Claims the next sequence (a reservation must be held), stores the event and publishes it.
     *
     * @return the sequence, or -1 if the ring is closed (the reservation is then simply abandoned)
     */
    private long claimAndPublish(T event) {
        return claimAndPublish(event, null);
    }

    /** @return the claimed sequence (a reservation must be held), or -1 if the ring is closed */
    private long claim() {
        for (;;) {
            long c = claimed;
            if ((c & CLOSED) != 0) {
                return -1;
            }
            if (CLAIMED.compareAndSet(this, c, c + 1)) {
                return c;
            }
        }
    }

    /**
     * An {@code onNext} of a burst (see {@link #requesting}): claims and stores like
     * {@link #claimAndPublish(Object)} but publishes with a release store and wakes nobody;
     * {@link #requestBurst} issues one full fence and the wake-ups after the burst.
     *
     * @return the sequence, or -1 if the ring is closed
     */
    private long claimAndPublishInBurst(T event) {
        long c = claim();
        if (c >= 0) {
            int i = (int) (c & mask);
            slots[i] = event; // plain: published by the release below
            PUBLISHED.setRelease(published, i, c); // a consumer's acquire read of it sees the slot
        }
        return c;
    }

    /**
     * Claims, then either stores {@code event} or (if {@code translator} is not null) fills the
     * pre-allocated event in place, then publishes.
     */
    @SuppressWarnings("unchecked")
    private long claimAndPublish(T event, Consumer<? super T> translator) {
        long c = claim();
        if (c < 0) {
            return -1;
        }
        int i = (int) (c & mask);
        if (translator != null) {
            try {
                translator.accept((T) slots[i]); // plain writes, published by the volatile store below
            } finally {
                publishSlot(i, c);
            }
            return c;
        }
        slots[i] = event; // plain: published by the volatile store below
        publishSlot(i, c);
        return c;
    }

    private void publishSlot(int i, long c) {
        PUBLISHED.setVolatile(published, i, c);
        // wake the consumers that wait for the producer. The store above and the status read inside
        // wake() are both volatile: either the wake sees the consumer idle and schedules it, or the
        // consumer's post-turn re-check (after its CAS clearing SCHEDULED) sees this event.
        wakeRoots();
    }

    private void wakeRoots() {
        RingConsumer<T, ?>[] rs = roots;
        if (rs != null) {
            for (RingConsumer<T, ?> r : rs) {
                r.wake();
            }
        }
    }

    private long claimAndPublishAny(T event, Consumer<? super T> translator) {
        return singleProducer ? spClaimAndPublish(event, translator) : claimAndPublish(event, translator);
    }

    // ================================================================== internals: single producer

    /**
     * Single-producer mode: makes the ring's producer imperative for good, or throws if it is the
     * {@code Subscriber} side. One volatile read per call once the kind is set.
     */
    private void claimImperative() {
        int k = producerKind;
        if (k == KIND_IMPERATIVE
                || (k == KIND_NONE && (PRODUCER_KIND.compareAndSet(this, KIND_NONE, KIND_IMPERATIVE)
                        || producerKind == KIND_IMPERATIVE))) {
            return;
        }
        throw new IllegalStateException("ring " + name + " is single-producer and is subscribed to an upstream "
                + "(its one producer): tryPublish/tryPublishEvent/publish cannot be used on it");
    }

    /** Single-producer mode: makes the {@code Subscriber} side the producer; {@code false} if it is imperative. */
    private boolean claimSubscriber() {
        return producerKind == KIND_SUBSCRIBER || PRODUCER_KIND.compareAndSet(this, KIND_NONE, KIND_SUBSCRIBER)
                || producerKind == KIND_SUBSCRIBER;
    }

    /**
     * An imperative publish in single-producer mode (a reservation must be held): plain slot store (or
     * the translator's plain writes), plain {@link #spNext}, then {@link #spPublish} (one CAS: release
     * for the slot, StoreLoad before the wake-up's status reads) and the wake of the root consumers.
     *
     * <p>Why {@link #spNext} may be plain here: the caller is the producer thread (contract: its calls
     * do not overlap) or the drain serving a waiting {@link #publish}; the producer only calls while
     * {@link #waiters} reads 0 (volatile), and the drain decrements {@link #waiters} (volatile) only
     * after the claim, so each hand-over between the two is a volatile write read by the other.
     *
     * @return the sequence, or -1 if the ring closed before the event was published
     */
    @SuppressWarnings("unchecked")
    private long spClaimAndPublish(T event, Consumer<? super T> translator) {
        long seq = spNext;
        int i = (int) (seq & mask);
        long next = seq + 1;
        spNext = next;
        boolean ok;
        if (translator != null) {
            ok = false;
            try {
                translator.accept((T) slots[i]); // plain writes, published by the CAS below
            } finally {
                ok = spPublish(next); // even if the translator threw (see tryPublishEvent)
                if (ok) {
                    spFlushed = next;
                    wakeRoots();
                }
            }
            return ok ? seq : -1;
        }
        slots[i] = event; // plain: published by the CAS below
        ok = spPublish(next);
        if (!ok) {
            return -1;
        }
        spFlushed = next;
        wakeRoots();
        return seq;
    }

    /**
     * {@code onNext} in single-producer mode. Per event: a plain comparison with the cached demand
     * bound, a plain slot store and a plain {@link #spNext} store. Inside a burst (the upstream emits
     * within the drain's {@code request(n)}, on its thread) the events are published every
     * {@value #SP_BURST_FLUSH} events and once at the burst's end by {@link #requestBurst}, which
     * also wakes the consumers once; outside a burst each event is published at once (one CAS, which
     * is also the StoreLoad fence the wake-up needs) and the root consumers are woken.
     *
     * <p>Overflow check without a CAS: the upstream may only send {@code reserved} events in total
     * ({@link #reserved} counts exactly the demand granted, written with a release by the drain
     * before each {@code request(n)}); {@link #spLimit} caches it and is refreshed with an acquire
     * only when {@link #spNext} reaches it. Only a ring whose producer is the {@code Subscriber} side
     * accepts events here (an {@code onNext} without {@code onSubscribe} is an overflow too).
     */
    private void onNextSingleProducer(T t) {
        long seq = spNext;
        if (seq >= spLimit) {
            long r = producerKind == KIND_SUBSCRIBER ? (long) RESERVED.getAcquire(this) : 0L;
            spLimit = r;
            if (seq >= r) {
                overflow(t);
                return;
            }
        }
        slots[(int) (seq & mask)] = t; // plain: published by a later CAS of the cursor
        long next = seq + 1;
        spNext = next;
        if (requesting == Thread.currentThread()) {
            spBurstTo = next; // read by this thread when the burst ends (requestBurst)
            if (next - spFlushed >= SP_BURST_FLUSH) {
                if (!spPublish(next)) {
                    spDiscard(next);
                }
                spFlushed = next;
            }
            return;
        }
        if (!spPublish(next)) {
            spDiscard(next); // closed by complete()/error()/a failure meanwhile
            return;
        }
        spFlushed = next;
        wakeRoots();
    }

    /**
     * Single-producer mode: raises the cursor ({@link #claimed}) to {@code upTo} by CAS unless it is
     * already there. The CAS is the release of every slot store below {@code upTo} made by this thread
     * or ordered before it (earlier {@code onNext} calls: rule 1.3) and a full fence (StoreLoad) before
     * the wake-up's status reads. It can fail only because a closer set {@link #CLOSED} (then the
     * events from the final count up are not published: {@code false}) or because another flush of
     * the same producer's events (the end of a burst racing a later {@code onNext}) moved it (retry).
     *
     * @return {@code false} if the ring closed before all events below {@code upTo} were published
     */
    private boolean spPublish(long upTo) {
        for (;;) {
            long c = claimed; // volatile
            if ((c & CLOSED) != 0) {
                return (c & ~CLOSED) >= upTo; // all of them made it before the close
            }
            if (c >= upTo || CLAIMED.compareAndSet(this, c, upTo)) {
                return true;
            }
        }
    }

    /**
     * Single-producer mode, the ring closed: hands the events in {@code [final count, upTo)} that
     * nobody discarded yet to {@code Operators.onDiscard} (they were received but never published).
     * The caller wrote those slots or is ordered after their writer.
     */
    private void spDiscard(long upTo) {
        long from = claimed & ~CLOSED;
        for (;;) {
            long d = discardedTo;
            long lo = Math.max(d, from);
            if (lo >= upTo) {
                return;
            }
            if (DISCARDED.compareAndSet(this, d, upTo)) {
                for (long s = lo; s < upTo; s++) {
                    Object e = slots[(int) (s & mask)];
                    if (e != null) {
                        Operators.onDiscard(e, currentContext());
                    }
                }
                return;
            }
        }
    }

    /**
     * Single-producer {@code onComplete}/{@code onError} (serial with {@code onNext}: the producer's
     * thread): publishes the events of an unfinished burst before the ring closes.
     */
    private void spFlushBeforeClose() {
        long n = spNext;
        if (!spPublish(n)) {
            spDiscard(n);
        }
    }

    // ================================================================== internals: consumer side

    /** @return whether event {@code s} is published (acquire) */
    boolean isPublished(long s) {
        return (long) PUBLISHED.getVolatile(published, (int) (s & mask)) == s;
    }

    /** @return the highest sequence {@code <= limit} such that every event from {@code from} on is published, or {@code from - 1} */
    long highestPublished(long from, long limit) {
        if (singleProducer) {
            // one acquire read of the cursor per batch: every slot below it was stored before its CAS
            long c = ((long) CLAIMED.getAcquire(this) & ~CLOSED) - 1;
            return Math.max(from - 1, Math.min(c, limit));
        }
        long s = from;
        while (s <= limit && isPublished(s)) {
            s++;
        }
        return s - 1;
    }

    @SuppressWarnings("unchecked")
    T event(long s) {
        return (T) slots[(int) (s & mask)];
    }

    /** @return the number of events the ring will ever hold if it is closed, else -1 */
    long finalCount() {
        long c = claimed;
        return (c & CLOSED) != 0 ? c & ~CLOSED : -1L;
    }

    /** @return the closing error, or {@code null} if the ring completed (valid once {@link #CLOSED} is seen) */
    Throwable closingError() {
        Object c = closeCause.get();
        return c instanceof Throwable t ? t : null;
    }

    Throwable failure() {
        return failure.get();
    }

    boolean isStarted() {
        return started;
    }

    /** Called by a consumer after it published a new sequence (or left the gating set). */
    void consumerAdvanced() {
        if (waiters.get() != 0 || (upstream.get() != null && !upstreamDone)) {
            producerDrain();
        }
    }

    /** A consumer's handler failed under {@link RingErrorPolicy#STOP} (or its retries were exhausted). */
    void fail(Throwable t) {
        fail(t, true);
    }

    /**
     * Stops the ring with {@code t}.
     *
     * @param wake whether to wake the consumers so they deliver it; {@code false} when the scheduler is
     *             terminating them itself (waking would queue them on carriers that are gone: the
     *             engine's termination drains every cell of the group, which delivers it instead)
     */
    void fail(Throwable t, boolean wake) {
        if (!failure.compareAndSet(null, t)) {
            return;
        }
        // closed before the upstream hears of it: whoever sees the cancellation sees a closed ring
        setClosedQuietly();
        cancelUpstream();
        if (wake) {
            RingConsumer<T, ?>[] cs = consumers;
            if (cs != null) {
                for (RingConsumer<T, ?> c : cs) {
                    c.endBackoff(); // a consumer in a retry's back-off stops now, not when its timer fires
                }
            }
            wakeAll();
        }
    }

    /** A consumer leaves the gating set: its dependents wait for its dependencies instead (RingConsumer#bypass). */
    synchronized void bypass(RingConsumer<T, ?> leaving) {
        leaving.bypass();
    }

    /** A consumer left the gating set (cancelled): its dependents may now be roots. */
    synchronized void consumerRemoved() {
        recomputeRoots();
    }

    /**
     * A consumer terminates for good, before it signals its subscriber; if it is the last live one, the ring
     * closes and the events no consumer will handle go to the discard hook (class doc, "Discarded events"),
     * so that subscriber sees them discarded before its terminal signal, as an {@code Actor} discards its
     * mailbox before {@code onError}. The consumer then calls {@link #lastConsumerTerminated()} once it
     * signalled, if this returned {@code true}.
     *
     * @param handled the highest event the consumer handled ({@code -1} for none)
     * @param context its subscriber's context, or the ring's when it had none
     * @return whether it was the last live consumer
     */
    boolean consumerTerminating(long handled, Context context, boolean leaves) {
        if (leaves) {
            leftAt(handled, context);
        } else {
            endedAt(handled, context);
        }
        if (liveConsumers.decrementAndGet() == 0) {
            // nobody is left to read: stop the producer side (a cancelled last consumer must not keep
            // the upstream running, as with Actor and Flux.publish().refCount()); closed first, so whoever
            // sees the cancellation sees a closed ring
            close();
            cancelUpstream();
            if (!preallocated) {
                // before whenTerminated() signals too: whoever waits for the end finds every unhandled
                // event already handed to the discard hook. Not from this consumer's position: which one
                // terminates last is a race. From the lowest position of the consumers that ended with the
                // ring (an event one that ended behind never got is lost to it all the same); when every
                // consumer left (cancelled), from the highest any of them reached: a cancelled subscriber
                // wants nothing more, and an event some consumer handled went to its subscriber, so
                // discarding it too would release a ref-counted payload a subscriber holds
                long from;
                Context to;
                synchronized (this) {
                    if (lowestEnded != Long.MAX_VALUE) {
                        from = lowestEnded;
                        to = lowestEndedContext;
                    } else {
                        from = highestLeft;
                        to = highestLeftContext;
                    }
                }
                discardUnhandled(from, to);
                // nobody reads the slots any more: let the events go
                Arrays.fill(slots, null);
            }
            return true;
        }
        return false;
    }

    /**
     * The last live consumer terminated and signalled its subscriber ({@link #consumerTerminating} returned
     * {@code true}): {@link #whenTerminated()} signals, once the meters are gone.
     */
    void lastConsumerTerminated() {
        unbindMetrics(); // before whenTerminated() signals: its subscribers find the meters gone
        Throwable f = failure.get();
        if (f == null) {
            f = closingError();
        }
        if (f != null) {
            terminated.tryEmitError(f);
        } else {
            terminated.tryEmitEmpty();
        }
    }

    /**
     * A consumer ended with the ring (closed or stopped, not cancelled) at {@code handled}: it keeps gating the
     * producer there, so the events above it stay in their slots for {@link #discardUnhandled}.
     */
    private synchronized void endedAt(long handled, Context context) {
        if (handled < lowestEnded) {
            lowestEnded = handled;
            lowestEndedContext = context;
        }
    }

    /** The lowest position a consumer that ended with the ring had reached (guarded by this ring's lock). */
    private long lowestEnded = Long.MAX_VALUE;
    /** Its subscriber's context (or the ring's): where the events above it are discarded. */
    private Context lowestEndedContext;

    /**
     * A consumer left the gating set (its subscriber cancelled) at {@code handled}. Recorded before the count of
     * live consumers drops, so the last one to terminate sees every position (the lock orders them).
     */
    private synchronized void leftAt(long handled, Context context) {
        if (handled > highestLeft) {
            highestLeft = handled;
            highestLeftContext = context;
        }
    }

    /**
     * The highest position a consumer that left had reached ({@code -1}: it handled none; {@code MIN_VALUE}:
     * none left yet), guarded by this ring's lock. Only the last consumer to terminate reads it, and it has
     * recorded its own first: while it gated the producer at or below this position, the events above it
     * stayed in their slots.
     */
    private long highestLeft = Long.MIN_VALUE;
    /** Its subscriber's context (or the ring's): where the events above it are discarded. */
    private Context highestLeftContext;

    /**
     * The ring is closed and its last consumer terminated: hands the accepted events above
     * {@code handled} to the discard hook. The final count is fixed by the close. The consumer gated the
     * producer at {@code handled} until it terminated (it leaves the gating set only after this), so each
     * of those events is still in its slot; the newest {@code size} are the most there can be, which also
     * keeps a slot from being discarded twice.
     *
     * <p>Multi-producer: an event whose claim the close counted may not be published yet: its producer is
     * between the claim and the store to {@link #published}, and its slot may still hold an older event. It
     * used to be skipped, and then published to nobody: an event {@code tryPublish} had accepted was neither
     * handled nor discarded. So this waits for the store ({@link #awaitPublished}). The wait is a few
     * instructions long: nothing runs between a claim and its publication (no user code; the translator of
     * {@code tryPublishEvent} does, but event-factory rings come nowhere near here), unless the OS deschedules
     * the producer there, and a claimed event is published in any case or the consumers would wait for it
     * forever. Making the producer's store a CAS the end could win instead costs every publication 15-30 %
     * of the ring's throughput (RESULTS.md, twenty-fifth session), for an event at most per producer, once.
     */
    private void discardUnhandled(long handled, Context context) {
        long end = claimed & ~CLOSED;
        for (long s = Math.max(handled + 1, end - slots.length); s < end; s++) {
            if (!singleProducer && !isPublished(s)) {
                awaitPublished(s);
            }
            Object e = slots[(int) (s & mask)];
            if (e != null) {
                Operators.onDiscard(e, context);
            }
        }
    }

    /**
     * Spins until claimed event {@code s} is published (see {@link #discardUnhandled}): its producer is
     * between the claim and the store. Allowed by the BlockHound integration (a carrier may run the ring's
     * end), as the library's other spins of a few instructions are.
     */
    private void awaitPublished(long s) {
        while (!isPublished(s)) {
            Thread.onSpinWait();
        }
    }

    @SuppressWarnings("unchecked")
    private void recomputeRoots() {
        List<RingConsumer<T, ?>> rs = new ArrayList<>();
        for (RingConsumer<T, ?> c : consumerList) {
            if (!c.hasLiveDependency()) {
                rs.add(c);
            }
        }
        roots = rs.toArray(new RingConsumer[0]);
    }

    private void wakeAll() {
        RingConsumer<T, ?>[] cs = consumers;
        if (cs != null) {
            for (RingConsumer<T, ?> c : cs) {
                c.wake();
            }
        }
    }

    /**
     * Stops the upstream: at most once, and not one that ended by itself (rule 2.4: its subscription counts
     * as cancelled), as Reactor's operators cancel; {@code complete()}, {@code error(..)}, a failure and the
     * last consumer's termination each come here, and the ring used to cancel a live upstream twice and one
     * that had completed once, running a {@code doOnCancel} after a normal completion. Against a racing
     * {@link #onSubscribe}: this writes {@code upstreamDone} then reads {@code upstream}, it writes
     * {@code upstream} then reads {@code upstreamDone} (all volatile), so one of them sees the other and
     * cancels; {@link #upstreamCancelled} lets only one do it.
     */
    private void cancelUpstream() {
        upstreamDone = true;
        if (upstreamTerminated) {
            return;
        }
        Subscription s = upstream.get();
        if (s != null && upstreamCancelled.compareAndSet(false, true)) {
            // an upstream whose cancel() throws (rule 3.15 broken) must not cut short the ring's closing,
            // which cancels it midway (consumers still to wake, unhandled events still to discard)
            BrokenUpstreams.cancel(s, this::currentContext);
        }
    }

    /** The upstream was cancelled (at most once: {@link #cancelUpstream}). */
    private final java.util.concurrent.atomic.AtomicBoolean upstreamCancelled = new java.util.concurrent.atomic.AtomicBoolean();

    private void closeWithError(Throwable t) {
        if (!closeCause.compareAndSet(null, t)) {
            Internals.onErrorDropped(t, Context.empty());
            return;
        }
        setClosed();
    }

    private void close() {
        closeCause.compareAndSet(null, COMPLETED);
        setClosed();
    }

    /** Sets {@link #CLOSED} and fails the waiting publishes, waking nobody. */
    private void setClosedQuietly() {
        closeCause.compareAndSet(null, COMPLETED);
        setClosedBit();
        producerDrain();
    }

    private void setClosedBit() {
        for (;;) {
            long c = claimed;
            if ((c & CLOSED) != 0 || CLAIMED.compareAndSet(this, c, c | CLOSED)) {
                return;
            }
        }
    }

    private void setClosed() {
        for (;;) {
            long c = claimed;
            if ((c & CLOSED) != 0) {
                break;
            }
            if (CLAIMED.compareAndSet(this, c, c | CLOSED)) {
                break;
            }
        }
        wakeAll();
        producerDrain(); // fail the waiting publishes
    }

    /**
     * The error of a publish that finds the ring closed: {@code IllegalStateException}, or a
     * {@code RejectedExecutionException} when the ring closed because its scheduler or group was disposed (the
     * consumers' termination stopped it), as a disposed Reactor scheduler rejects work; a publish that waited
     * for space while the scheduler closed gracefully is rejected whichever it sees first.
     */
    private RuntimeException closedError() {
        Throwable f = failure.get();
        if (f instanceof java.util.concurrent.RejectedExecutionException) {
            return new java.util.concurrent.RejectedExecutionException("ring " + name + " is closed: " + f.getMessage(), f);
        }
        return new IllegalStateException("ring is closed");
    }

    /**
     * Whether the ring's group or scheduler is closing gracefully (or disposed): an event is new work for the
     * consumers, refused as the closing scheduler refuses new tasks (the class doc's "Graceful disposal"), so
     * producers that keep publishing cannot hold the shutdown open. Two volatile reads, no lock.
     */
    private boolean refusesNewEvents() {
        return group.isDisposed();
    }

    /** @return the scheduler's rejection (counted) to signal to a publish refused while closing */
    private RuntimeException rejection(reactor.util.context.ContextView context) {
        return io.reactoractor.internal.Internals.engine(group).rejectSignal(context);
    }

    /**
     * The producer-side drain, serialized by {@link #producerWip} (no lock, no blocked thread):
     * serves waiting publishes in order, then tops up the upstream's demand to the free space.
     * Lost wake-ups: a waiter increments {@link #waiters} (volatile) before calling this, and a
     * consumer writes its sequence (volatile) before reading {@link #waiters}; so either the consumer
     * runs a drain, or the waiter's drain sees the consumer's progress.
     */
    private void producerDrain() {
        if (producerWip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        for (;;) {
            PendingPublish<T> p;
            while ((p = pending.peek()) != null) {
                if (p.cancelled) {
                    pending.poll();
                    waiters.decrementAndGet();
                    continue;
                }
                if (isClosed()) {
                    pending.poll();
                    waiters.decrementAndGet();
                    p.sink.error(closedError());
                    continue;
                }
                if (refusesNewEvents()) {
                    pending.poll();
                    waiters.decrementAndGet();
                    p.sink.error(rejection(p.sink.contextView()));
                    continue;
                }
                if (!started || !tryReserve(1)) {
                    break;
                }
                pending.poll();
                long seq = claimAndPublishAny(p.value, null);
                waiters.decrementAndGet();
                if (seq >= 0) {
                    p.sink.success(seq);
                } else {
                    p.sink.error(closedError());
                }
            }
            Subscription up = upstream.get();
            // a second request at most: a synchronous upstream that filled its capped demand inside the first
            // one leaves the room the cap kept back, which it may then fill too (see upstreamCap)
            for (int requests = 0; requests < 2; requests++) {
                if (up == null || !started || upstreamDone || !pending.isEmpty() || isClosed() || refusesNewEvents()) {
                    break; // closing: the upstream keeps the demand it holds, and gets no more
                }
                long free = remainingCapacity();
                // single producer: the demand not yet received is at most reserved - cursor (events
                // received but not yet published count as outstanding; when they are published a
                // consumer advances and runs this drain again, so a request is only postponed)
                long out = singleProducer ? reserved - (claimed & ~CLOSED) : outstanding.get();
                long grant = Math.min(free, upstreamCap - out);
                if (grant <= 0 || (grant < replenish && out > 0) || !tryReserve(grant)) {
                    break;
                }
                if (!singleProducer) {
                    outstanding.addAndGet(grant);
                }
                requestBurst(up, grant);
            }
            missed = producerWip.addAndGet(-missed);
            if (missed == 0) {
                return;
            }
        }
    }

    /**
     * Requests {@code n} from the upstream with {@link #requesting} set, so that the events a
     * synchronous upstream emits inside this call are published as one burst, then wakes the root
     * consumers once. Called by the drain (holding {@link #producerWip}, so never nested).
     *
     * <p>No lost wake-up: each burst event was stored with a release; the full fence below orders
     * all of them before the consumers' status reads in {@code wake()}. A consumer that parks clears
     * its {@code SCHEDULED} bit by CAS (a full fence) and then re-reads its work (acquire reads of
     * {@link #published}). So either the status read here sees the consumer idle and schedules it,
     * or the consumer's re-check sees the events: the same argument as {@link #publishSlot}, with one
     * fence per burst instead of one per event. A consumer that is running meanwhile sees the events
     * as they are released (its barrier reads are acquires).
     */
    private void requestBurst(Subscription up, long n) {
        Throwable broken = null;
        requesting = Thread.currentThread();
        try {
            up.request(n);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            broken = t;
        } finally {
            requesting = null;
            if (singleProducer) {
                // publish the burst's events (this thread stored them): one CAS, also the full fence
                long to = spBurstTo;
                if (!spPublish(to)) {
                    spDiscard(to);
                }
            } else {
                VarHandle.fullFence();
            }
            wakeRoots();
        }
        if (broken != null) {
            // an upstream whose request(n) throws (rule 3.16 broken) is cancelled and fails the ring, as an
            // overflow does, once the events it emitted inside the call are published (above); onSubscribe,
            // where the first request happens, returns normally (rule 2.13)
            cancelUpstream();
            closeWithError(broken);
        }
    }

    /** A {@link #publish} waiting for space. */
    private static final class PendingPublish<T> {
        final T value;
        final MonoSink<Long> sink;
        volatile boolean cancelled;

        PendingPublish(T value, MonoSink<Long> sink) {
            this.value = value;
            this.sink = sink;
        }
    }

    // ================================================================== builder

    /**
     * Builds a {@link RingBuffer}.
     *
     * @param <T> the event type
     */
    public static final class Builder<T> {
        private final ActorGroup group;
        private int size = 1024;
        private String name;
        private RingErrorPolicy errorPolicy = RingErrorPolicy.STOP;
        private Supplier<? extends T> eventFactory;
        private boolean singleProducer;

        Builder(ActorGroup group) {
            this.group = group;
        }

        /**
         * @param size the number of slots: a power of two, from 1 to 2^30 (default 1024). The slots are allocated
         *             by {@link #build()}: one reference each (4 or 8 bytes, so 4 to 8 GiB at 2^30), plus, with an
         *             event factory, one preallocated event each
         * @return this builder
         * @throws IllegalArgumentException if {@code size} is not a power of two in that range
         */
        public Builder<T> size(int size) {
            if (size < 1 || size > (1 << 30) || Integer.bitCount(size) != 1) {
                throw new IllegalArgumentException("size must be a power of two between 1 and 2^30 but was " + size);
            }
            this.size = size;
            return this;
        }

        /**
         * @param name the ring's name, used in the consumers' actor paths and as the {@code ring} tag of its
         *             meters (default {@code ring-<n>}, unique); keep it unique among a metered scheduler's live
         *             rings: a second live ring under a name in use is not metered (a warning is logged), for
         *             its whole life
         * @return this builder
         * @throws NullPointerException     if {@code name} is {@code null}
         * @throws IllegalArgumentException if {@code name} is blank, longer than 128 characters or holds a
         *                                  control character
         */
        public Builder<T> name(String name) {
            Objects.requireNonNull(name, "name");
            io.reactoractor.internal.Internals.checkName(name, 128, false);
            this.name = name;
            return this;
        }

        /**
         * @param policy what a handler failure does (default {@link RingErrorPolicy#STOP})
         * @return this builder
         * @throws NullPointerException if {@code policy} is {@code null}
         */
        public Builder<T> errorPolicy(RingErrorPolicy policy) {
            this.errorPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * Pre-allocates every slot with an event from {@code factory} (called {@code size} times by
         * {@link #build()}), for producers that fill events in place with
         * {@link RingBuffer#tryPublishEvent}, as with the Disruptor's event factory: no allocation per
         * event. Consumers then see the slot's object, which is reused {@code size} events later; they
         * must not keep it beyond their handler call. {@code tryPublish(event)}, {@code publish} and
         * the {@code Subscriber} side still work but store their own object in the slot, which a later
         * {@code tryPublishEvent} on that slot then fills in place: do not mix the two styles on one
         * ring unless that is intended.
         *
         * @param factory creates one event per slot; must not return {@code null}
         * @return this builder
         * @throws NullPointerException if {@code factory} is {@code null}
         */
        public Builder<T> eventFactory(Supplier<? extends T> factory) {
            this.eventFactory = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /**
         * Declares that the ring has <em>one</em> producer, which makes publishing cheaper: the
         * producer keeps its next sequence in a plain field, stores events with plain writes and
         * publishes a whole batch with one CAS of the cursor; consumers read the cursor once per batch.
         * (The Disruptor's single-producer sequencer, adapted to a ring that can be closed from any
         * thread.) The one producer is either
         * <ul>
         *   <li>the ring's {@code Subscriber} side (one upstream: its {@code onNext} calls are serial
         *       by rule 1.3), or</li>
         *   <li>the imperative methods {@link RingBuffer#tryPublish}, {@link RingBuffer#tryPublishEvent}
         *       and {@link RingBuffer#publish} (its subscription), called from one thread at a time:
         *       calls from different threads must be ordered by a happens-before (a lock, a queue, a
         *       single-threaded executor, an actor).</li>
         * </ul>
         * Whichever is used first is the producer for the ring's life. Using the other afterwards is
         * detected: the imperative methods throw {@link IllegalStateException} ({@code publish}'s
         * {@code Mono} fails with it) on a subscribed ring, and an {@code onSubscribe} on a ring that
         * already has an imperative producer is cancelled and closes the ring with an
         * {@link IllegalStateException} (its consumers signal it after the events published before).
         * <b>Overlapping imperative calls from two threads are a caller error that is not detected</b>
         * (detecting it would cost the atomic operation this mode removes): they may publish an event
         * twice or lose one. Likewise an upstream that breaks rule 1.3 by calling {@code onNext}
         * concurrently (a multi-producer ring tolerates it). Use the default multi-producer ring when several threads publish.
         * {@link RingBuffer#complete()}, {@link RingBuffer#error} and consumer failures may still close
         * the ring from any thread: an event the producer had not yet published when the close
         * happened is then not delivered ({@code tryPublish} returns {@code false}, an {@code onNext}
         * is discarded), exactly as for a multi-producer ring.
         *
         * <p>A ring is multi-producer unless this is called; it is not chosen automatically for the
         * {@code Subscriber} side, because the multi-producer ring allows {@code tryPublish} next to
         * an upstream, which this mode forbids.
         *
         * @return this builder
         */
        public Builder<T> singleProducer() {
            this.singleProducer = true;
            return this;
        }

        /**
         * @return a new, unstarted ring
         * @throws NullPointerException if the event factory returned {@code null}
         */
        public RingBuffer<T> build() {
            return new RingBuffer<>(this);
        }
    }
}
