package io.reactoractor.actor;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import io.reactoractor.internal.Internals;
import org.reactivestreams.Processor;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

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
 * {@code reactor.actor.mailbox.full}); {@link #send} waits for a credit without blocking a thread. While a
 * send waits, no {@code tell} or new {@code send} takes a credit ahead of it (a {@code tell} is refused, a
 * {@code send} waits behind it), so one thread's {@code send}s and {@code tell}s reach the mailbox in the
 * order it made them, also when a {@code send} had to wait. A sole
 * upstream on the actor's own {@code Subscriber} side holds every credit it was granted, so with it a
 * {@code tell} is refused and a {@code send} waits, the mailbox empty, until its messages give credits
 * back; an upstream subscribed through {@link #newSubscriber()} holds at most a quarter of the
 * capacity, leaving the rest to {@code tell}/{@code send} (with four or more upstreams their windows
 * together can hold the whole capacity, and {@code tell}/{@code send} then get credits only as messages
 * leave). A port attached after a sole upstream on the actor's own side waits as {@code tell} and
 * {@code send} do: it is granted its share only as that upstream's messages give credits back, so next
 * to a quiet one (a hot source with nothing to say) it waits too. Where several upstreams may be quiet,
 * subscribe them all through {@link #newSubscriber()} ports, which never hold more than their window.
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
 *       {@link #complete()}: {@code onComplete} downstream once the mailbox is empty. The actor's own
 *       {@code Subscriber} side counts from its {@code onSubscribe} (an actor fed only through
 *       {@link #newSubscriber()} ports completes when they have); a {@code newSubscriber()} port counts from
 *       the moment it is handed out. So when the actor has ports of both kinds, subscribe its own side
 *       first: if every handed-out port completed before it, the actor completed, and an upstream
 *       subscribed to it afterwards is cancelled unread, as by any terminated {@code Processor}.</li>
 *   <li>Upstream error, or a behaviour error under {@link ErrorPolicy#stop()}: {@code onError}
 *       downstream on the actor's next turn, without draining the mailbox: other upstreams cancelled,
 *       messages still in the mailbox discarded. The first failure wins; later ones (another upstream's
 *       error, a second bad request) go to {@code Hooks.onErrorDropped}, as Reactor's multi-source operators
 *       drop theirs.</li>
 *   <li>Downstream cancellation: the actor stops and cancels its upstreams, also while suspended (a
 *       retry's back-off, {@link #suspend()} or a behaviour's {@link ActorContext#resumeAfter} is cut
 *       short).</li>
 *   <li>{@code request(n <= 0)}: {@code onError(IllegalArgumentException)} (rule 3.9).</li>
 *   <li>{@link #dispose()}: at once, with or without a subscriber, suspended or not:
 *       {@code onError(CancellationException)}, upstreams cancelled, the mailbox discarded.</li>
 *   <li>Its scheduler or group closing gracefully ({@code disposeGracefully()} subscribed): the actor takes
 *       no new input, as Reactor's schedulers reject new tasks once a graceful shutdown began.
 *       {@link #tell} returns {@code false} (counted among the scheduler's rejected tasks), {@link #send}
 *       fails with {@code RejectedExecutionException} (so do the sends still waiting for a credit),
 *       upstreams are granted no new demand (elements within the demand they already hold are taken and
 *       processed), and {@link ActorContext#schedule} throws {@code RejectedExecutionException}. The
 *       messages the actor holds are processed (as demand allows), so the disposal waits for the work
 *       the actors held when it began, never for traffic that keeps coming. An upstream that is itself an
 *       actor or an {@link ActorOperators#publishOn} closing too (its scheduler or group is closing),
 *       directly or through one-parent operators ({@code Flux.from(a).map(f).subscribe(b)}, found through
 *       their {@code Scannable} parents), is the exception: what it emits is work it held, so it keeps
 *       getting demand and a chain of actors drains what its stages held.</li>
 *   <li>Its scheduler or group disposed ({@code dispose()}, or the end of a {@code disposeGracefully()},
 *       which lets the actor's queued work run first): {@code onError(RejectedExecutionException)}, as
 *       Reactor's operators signal on a disposed scheduler; pending {@link #send}s fail the same way, and a
 *       subscriber arriving later gets {@code onSubscribe} then that error.</li>
 *   <li>A subscriber that throws from {@code onSubscribe} (rule 2.13): its subscription counts as
 *       cancelled (the actor stops as above) and it gets the error; {@code subscribe} returns.</li>
 *   <li>A subscriber whose {@code onNext} throws (rule 2.13): its subscription counts as cancelled (the actor
 *       stops as for a cancel, signalling nothing more) and the error goes to {@code Schedulers.onHandleError},
 *       as with Reactor's {@code publishOn}. It is not the behaviour's error: the {@link ErrorPolicy} does not
 *       see it (a retry would deliver the same result again to a broken subscriber).</li>
 *   <li>An upstream whose {@code request(n)} throws (rule 3.16 broken), in {@code onSubscribe} or later on
 *       the actor's thread: it is cancelled and its exception fails the actor as an upstream error would
 *       (Reactor's {@code subscribe(..)} cancels and signals such an exception too); {@code onSubscribe}
 *       returns normally (rule 2.13).</li>
 *   <li>An upstream whose {@code cancel()} throws (rule 3.15 broken): the actor ends all the same (its other
 *       upstreams cancelled, the mailbox discarded, its subscriber signalled, the actor gone from its group),
 *       and the exception goes to {@code Hooks.onErrorDropped}; {@link #dispose()} and {@link #complete()}
 *       return normally, and so does the {@code onSubscribe} of a second subscription (rule 2.5), cancelled as
 *       refused. Wherever the actor hands an error to {@code Hooks.onErrorDropped} while it ends, a hook
 *       that throws does not stop it ending: the hook's exception is logged (Reactor's operators let it
 *       propagate).</li>
 * </ul>
 * Terminal signals are delivered on the actor's turn; a user-suspended actor delivers them when
 * resumed (but for {@code dispose()}).
 *
 * @param <I> inbound message type
 * @param <O> outbound result type
 */
public final class Actor<I, O> implements Processor<I, O>, CoreSubscriber<I>, Scannable, reactor.core.Disposable {

    // The public front. The parts, each package-private in this package:
    //   ActorTurnLoop   lifecycle (the state table), mailboxes, the cell, the turn, backpressure suspension
    //   InboundCredits  the mailbox credits, waiting send()s, the inbound ports' fair shares
    //   InboundPort     one upstream subscriber (the primary one is this Processor's Subscriber side)
    //   OutboundPort    the unicast downstream: subscriber slot, demand, out buffer, its Subscription
    //   BehaviourContext, ActorTimers   what the behaviour sees, and its timers

    private static final AtomicLong SEQ = new AtomicLong();

    private final ActorTurnLoop<I, O> loop;
    private final InboundCredits<I> credits;
    private final OutboundPort<O> out;
    /** {@code credits.primary}, kept here so the Processor's {@code onNext} is one hop from the actor. */
    private final InboundPort<I> primary;

    private Actor(Builder<I, O> b) {
        String name = b.name != null ? b.name : "actor-" + SEQ.incrementAndGet();
        this.loop = new ActorTurnLoop<>(b.group, b.group.name() + "/" + name, b.weight, b.capacity, b.behaviour,
                b.policy);
        this.credits = loop.credits;
        this.out = loop.out;
        this.primary = credits.primary;
        out.actor(this); // the subscription's Scannable parent
    }

    // ================================================================== factories

    /**
     * @param scheduler an {@link ActorScheduler} (its default group) or one of its {@link ActorGroup}s
     * @param <I>       inbound type
     * @param <O>       outbound type
     * @return a builder
     * @throws NullPointerException     if {@code scheduler} is {@code null}
     * @throws IllegalArgumentException if {@code scheduler} is not an actor scheduler or group
     */
    public static <I, O> Builder<I, O> builder(Scheduler scheduler) {
        return new Builder<>(Internals.groupOf(scheduler));
    }

    /**
     * An actor that passes every message downstream unchanged (the TCK's identity processor). For a
     * fair hop of a {@code Flux} onto the scheduler, {@link ActorOperators#publishOn(Scheduler)} is the
     * lighter choice: Reactor's {@code publishOn} semantics over a single-producer queue.
     *
     * @param scheduler an {@link ActorScheduler} or one of its groups
     * @param capacity  the mailbox capacity (≥ 1)
     * @param <T>       the element type
     * @return a new identity actor
     */
    public static <T> Actor<T, T> identity(Scheduler scheduler, int capacity) {
        return Actor.<T, T>builder(scheduler).capacity(capacity).behaviour(Behaviour.identity()).build();
    }

    // ================================================================== public API

    /** @return the actor's path, {@code <group>/<name>} */
    public String path() {
        return loop.path();
    }

    /** @return the group this actor's CPU time is charged to */
    public ActorGroup group() {
        return loop.group;
    }

    /** @return the mailbox capacity (= the most demand all upstreams together are granted) */
    public int capacity() {
        return credits.capacity;
    }

    /** @return messages waiting in the mailbox */
    public int mailboxSize() {
        return loop.mailbox.size();
    }

    /** @return messages dropped by {@link ErrorPolicy#skip()} or {@link ErrorPolicy#retryThenSkip} */
    public long skippedMessages() {
        return loop.skippedMessages();
    }

    /** @return messages the behaviour completed */
    public long processedMessages() {
        return loop.processedMessages();
    }

    /** @return whether the actor is suspended (by itself, by the user, or for lack of downstream demand) */
    public boolean isSuspended() {
        return loop.cell.isSuspended();
    }

    /**
     * Suspends the actor (re-entrant); see {@link io.reactoractor.ActorWorker#suspend()}. A user
     * suspension is counted apart from the actor's own ones (no downstream demand, an error policy's
     * back-off): {@link #resume()} only ever lifts a user suspension.
     */
    public void suspend() {
        loop.suspendByUser();
    }

    /**
     * Lifts one user suspension ({@link #suspend()}, {@link ActorContext#suspend()}, or a cancelled
     * {@link ActorContext#resumeAfter}). The actor's own suspensions (waiting for downstream demand,
     * an error policy's back-off) are never lifted here: they end when demand arrives or the back-off
     * elapses.
     *
     * @return {@code true} if a user suspension was lifted, {@code false} if there was none or the actor
     *         terminated (a terminated actor has no suspension in force, as {@link #isSuspended()} says)
     */
    public boolean resume() {
        return loop.resumeUser();
    }

    /** @return whether the actor terminated (completed, failed or cancelled) */
    public boolean isTerminated() {
        return loop.isTerminated();
    }

    /**
     * A new inbound subscriber feeding this actor; each upstream needs its own (rule 2.5). All of them
     * share the mailbox's credits. It counts from now for the actor's completion ("when every inbound
     * subscriber completed"): one handed out and never subscribed keeps the actor from completing by
     * itself ({@link #complete()} still ends it), and one subscribed after the other upstreams completed
     * still feeds it. One handed out once every upstream counted so far had completed comes too late: the
     * actor's completion was requested at that moment (as by {@link #complete()}, even with messages still in
     * its mailbox), so the port cancels its upstream unread when subscribed, as {@link #tell} answers
     * {@code false} after {@code complete()}. It exposes the actor's {@link #currentContext()} (its subscriber's) to the upstream.
     * It is {@link Scannable} as a Reactor operator's inner subscriber: {@code PARENT} its upstream,
     * {@code ACTUAL} this actor (so a walk down from the upstream reaches the actor and its subscriber),
     * {@code PREFETCH} its window, {@code TERMINATED} once its upstream ended, {@code CANCELLED} once the
     * actor cancelled that upstream.
     *
     * @return a subscriber to subscribe to an upstream publisher
     */
    public CoreSubscriber<I> newSubscriber() {
        return credits.newPort(null, this);
    }

    /**
     * Like {@link #newSubscriber()}, exposing {@code context} to the upstream (Reactor context propagation)
     * instead of the subscriber's.
     *
     * @param context the context
     * @return a subscriber
     */
    public CoreSubscriber<I> newSubscriber(ContextView context) {
        return credits.newPort(Context.of(Objects.requireNonNull(context, "context")), this);
    }

    /**
     * Offers a message without waiting.
     *
     * <p>After {@link #complete()} the actor takes no new message ({@code false}, as a completed sink
     * refuses emissions). A message told while {@code complete()} or {@link #dispose()} is being called
     * from another thread is either processed or, if the actor terminated first, handed to the
     * subscriber's discard hook ({@code doOnDiscard}): never silently lost, and never both refused and
     * discarded. The return value says who owns the message: {@code true}, the actor (processed or
     * discarded); {@code false}, still the caller (nothing was done with it).
     *
     * @param message the message, not {@code null}
     * @return {@code true} if the actor took the message; {@code false} if no mailbox credit is free
     *         (counted as {@code mailbox.full}: the mailbox is full, or its free places are granted to
     *         upstreams as demand, or a {@link #send} waits for one and comes first, see the class doc), completion was requested, the actor's scheduler or
     *         group is closing gracefully or disposed (counted as a rejected task), or the actor
     *         terminated, and the message was not taken
     */
    public boolean tell(I message) {
        Objects.requireNonNull(message, "message");
        if (isTerminated() || loop.isCompleteRequested()) {
            return false;
        }
        if (loop.isClosing()) {
            loop.engine.countRejected(); // a new task for a closing scheduler, as Reactor's rejects its tasks
            return false;
        }
        if (!credits.tryAcquireForNewMessage()) {
            loop.engine.countMailboxFull();
            return false;
        }
        // in the mailbox, the message is the actor's: if it terminated meanwhile (enqueue answers false), its
        // drain hands the message to the discard hook, so it is taken either way and must not be refused too
        loop.enqueue(message);
        return true;
    }

    /**
     * Sends a message, waiting (without blocking a thread) for a mailbox credit: a free place not granted
     * to an upstream as demand (see the class doc; waiting sends get returned credits first). The returned
     * {@code Mono} is lazy, as Reactor's are: nothing is sent until it is subscribed, and each subscription
     * sends the message once more ({@code send(m).subscribe()} for fire-and-forget; {@link #tell} answers
     * at once instead).
     *
     * @param message the message, not {@code null}
     * @return completes when the message was accepted (taken by the actor, as {@link #tell} answers
     *         {@code true}: processed, or discarded if the actor terminates first); errors, the message not
     *         taken, with {@code IllegalStateException} if the actor terminated first or {@link #complete()}
     *         was called before the send, with {@code RejectedExecutionException} if its scheduler or group
     *         is closing gracefully (a send already waiting for a credit then fails so too, when the actor
     *         next frees one, at the latest when the disposal ends); a send still waiting for a credit when
     *         the actor terminates fails with the actor's error if it failed ({@code CancellationException} for {@link #dispose()}),
     *         else with {@code IllegalStateException}. Cancelling it while it waits for a credit (a
     *         {@code timeout}, a {@code take}) withdraws the message: it is never taken, so a
     *         {@code send(m).timeout(d).retry()} whose timeout fires while the send waits does not deliver
     *         {@code m} twice. A cancel that races the acceptance itself comes too late (the message was taken,
     *         the completion is on its way): the timeout then still fires and the retry sends {@code m} again,
     *         as any retry after a timeout does with a call that succeeded late. So {@code timeout(d).retry()}
     *         is at least once, not exactly once; the shorter {@code d}, the likelier the race
     */
    public Mono<Void> send(I message) {
        Objects.requireNonNull(message, "message");
        return credits.send(message);
    }

    /** Completes the actor: {@code onComplete} downstream once the mailbox drained; upstreams are cancelled. */
    public void complete() {
        loop.requestComplete();
    }

    /**
     * Terminates the actor now, with or without a subscriber (as Reactor's {@code FluxProcessor.dispose()}):
     * its upstreams are cancelled, waiting {@link #send}s fail, the messages still in its mailbox go to the
     * subscriber's discard hook, and the downstream gets {@code onError(CancellationException)} (a
     * subscriber that comes later gets it on subscription). A message being processed finishes first.
     * It releases an actor that never got a subscriber, which {@link #complete()} does not (completion
     * waits for one). Idempotent; a failure already pending is delivered instead.
     */
    @Override
    public void dispose() {
        loop.dispose();
    }

    /** @return whether the actor terminated (disposed, completed, failed or cancelled) */
    @Override
    public boolean isDisposed() {
        return isTerminated();
    }


    // ================================================================== Processor (primary inbound port)

    /**
     * The context the actor exposes to the upstream it subscribes to (it is a {@link CoreSubscriber}, so
     * Reactor hands it over without a wrapper): its subscriber's context, as Reactor's processors expose
     * theirs, or an empty one before anyone subscribed. The upstream's {@code deferContextual} and the
     * dropped-signal hooks local to that context see it; an upstream subscribed before the actor's subscriber
     * sees an empty context. The subscriber is asked each time, as Reactor's processors ask theirs, so a chain
     * built before its last subscriber ({@code Flux.from(a).map(f).subscribe(b)}, then {@code b} subscribed
     * with a {@code contextWrite}) sees that context at {@code a}; once the actor terminated, its subscriber's
     * last context. Each {@link #newSubscriber(ContextView)} exposes its own.
     *
     * @return the downstream subscriber's context, or an empty one
     */
    @Override
    public Context currentContext() {
        return primary.currentContext();
    }

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
        out.subscribe(s);
    }

    // ================================================================== Scannable

    /**
     * Reactor's {@link Scannable} view, after its processors' conventions: {@code NAME} (the path),
     * {@code PARENT} (the subscription of the upstream this actor subscribed to as a {@code Subscriber},
     * {@code null} before one), {@code ACTUAL} (the downstream subscriber, {@code null} before one), {@code RUN_ON}
     * (the group the actor runs in), {@code CAPACITY} and {@code PREFETCH} (the mailbox capacity), {@code BUFFERED},
     * {@code REQUESTED_FROM_DOWNSTREAM} (the downstream's demand not yet met, {@code Long.MAX_VALUE} once
     * unbounded), {@code TERMINATED} (completed or failed: {@code false} after a cancel, as Reactor's
     * operators answer), {@code CANCELLED}, {@code ERROR}, {@code RUN_STYLE} ({@code ASYNC}).
     */
    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return path();
        }
        if (key == Attr.PARENT) {
            return primary.upstream();
        }
        if (key == Attr.RUN_ON) {
            return group();
        }
        if (key == Attr.CAPACITY || key == Attr.PREFETCH) {
            return capacity();
        }
        if (key == Attr.BUFFERED) {
            return mailboxSize();
        }
        if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
            return out.outstandingDemand();
        }
        if (key == Attr.ACTUAL) {
            return out.scanUnsafe(Attr.ACTUAL); // the subscriber, once there is one: a walk down reaches it
        }
        if (key == Attr.TERMINATED) {
            // completed or failed, as Reactor's convention has it; a cancelled actor is CANCELLED, not TERMINATED
            return isTerminated() && !loop.cancelled;
        }
        if (key == Attr.CANCELLED) {
            return loop.cancelled;
        }
        if (key == Attr.ERROR) {
            return loop.pendingError;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String toString() {
        return "Actor[" + path() + ", capacity=" + capacity() + "]";
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
         * @param name the actor's name inside its group: not blank, 1 to 128 characters, no {@code '/'} or
         *             control characters
         * @return this
         */
        public Builder<I, O> name(String name) {
            io.reactoractor.internal.Internals.checkName(name, 128, true);
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
