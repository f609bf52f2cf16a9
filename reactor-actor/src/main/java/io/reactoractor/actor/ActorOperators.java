package io.reactoractor.actor;

import io.reactoractor.ActorGroup;

import java.util.function.Function;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Reactor operators built on {@link Actor}s.
 *
 * <h2>Why a fair {@code publishOn}</h2>
 * Reactor's {@code publishOn} drains its queue in <em>one</em> task that does not return while items
 * keep arriving. No scheduler can enforce a quota inside it: on any scheduler, two hot
 * {@code publishOn} streams can hold two threads for as long as they run, and a third stream pinned
 * to the same threads waits (reactor-core issue #3954). {@link #publishOn(Scheduler)} hands the items
 * to an actor instead: each element is one task of the actor's turn, and the turn ends at
 * the quota or at the preemption point like every other actor, so a hot stream shares the threads.
 * The cost is a queue hand-off per element (measured in {@code benchmarks/RESULTS.md}).
 */
public final class ActorOperators {

    /** The default mailbox capacity (prefetch) of {@link #publishOn(Scheduler)}. */
    public static final int DEFAULT_PREFETCH = 256;

    private ActorOperators() {
    }

    /**
     * A fair replacement for {@code Flux.publishOn(scheduler)}:
     * {@code flux.transform(ActorOperators.publishOn(s))}. It keeps Reactor's {@code publishOn}
     * semantics: signals are delivered on the actor scheduler's threads, in order; upstream is
     * requested {@value #DEFAULT_PREFETCH} at first, then replenished by Reactor's limit (three quarters
     * of the prefetch) as elements are delivered; elements queued before an upstream error are all
     * delivered before the error; on cancellation the queued elements go to the {@code doOnDiscard}
     * hook; the downstream Reactor context is visible upstream; fusion as Reactor's (a synchronously
     * fusable source is polled, an asynchronously fusable one, such as a unicast sink or
     * {@code onBackpressureBuffer}, keeps the elements in its own queue, which is polled, so its bound still
     * holds; and asynchronous fusion is offered downstream). Only the drain differs:
     * it is an actor's turn, which yields between elements at the preemption point or the quota, also
     * when a fused downstream polls the queue on that turn.
     * <p>The operator is itself a {@code Flux}, so {@code transform} returns it as is and it reads as
     * Reactor's {@code publishOn} does: {@code getPrefetch()} and {@code Scannable} attributes
     * {@code PREFETCH}, {@code PARENT} (the source), {@code RUN_ON} (the scheduler or group passed) and
     * {@code RUN_STYLE} ({@code ASYNC}).
     * <p>One difference in timing: when the scheduler (or the group) is disposed under a live stream, the
     * stream fails at once with a {@code RejectedExecutionException} (through Reactor's rejection hooks, as
     * Reactor's operators report a rejected task), its queue goes to the discard hook and the upstream is
     * cancelled; Reactor's {@code publishOn} fails the same way, but only at the next upstream signal it
     * cannot schedule (an idle stream waits until then), and not at all when its drain was queued and not yet
     * run as the scheduler was disposed: that drain is abandoned and its stream stays silent for good (a
     * forced disposal abandons queued tasks, Reactor's own schedulers included).
     * <p>While the scheduler (or the group) closes gracefully, as Reactor's {@code publishOn} on a closing
     * scheduler: the first element that arrives after the disposal began is rejected (it goes to the discard
     * hook, the upstream is cancelled), and the stream ends with {@code RejectedExecutionException} once the
     * elements queued before it were delivered (as demand allows); an asynchronously fused source's signal
     * is rejected as Reactor's operator rejects it: the source is cancelled and what its queue holds goes to
     * the discard hook (a fused source cannot be polled once cancelled), then the error. So a hot source
     * never holds the disposal open. A synchronously fused source (a {@code range}) is not an arrival: it is polled on as
     * long as the downstream requests, as Reactor's drain runs it in one task.
     * <p>An upstream whose {@code cancel()} throws (rule 3.15 broken): the operator's actor ends all the same
     * (its queue cleared, the actor gone from its group) and the exception goes to {@code Hooks.onErrorDropped}
     * (a hook that throws as well is logged and does not stop that either);
     * Reactor's {@code publishOn} lets it reach whoever cancelled, whose {@code cancel()} then throws too. One
     * whose replenishing {@code request(n)} throws (rule 3.16 broken) is cancelled and the stream fails with the
     * exception; Reactor's lets it leave the drain task (to {@code Schedulers.onHandleError}) and its stream
     * then waits for good. The first request, in {@code onSubscribe}, throws to the caller in both.
     *
     * @param scheduler an {@code ActorScheduler} or one of its groups
     * @param <T>       the element type
     * @return a function for {@code Flux.transform}
     * @throws NullPointerException     if {@code scheduler} is {@code null}
     * @throws IllegalArgumentException if {@code scheduler} is not an actor scheduler or group
     */
    public static <T> Function<Flux<T>, Publisher<T>> publishOn(Scheduler scheduler) {
        return publishOn(scheduler, DEFAULT_PREFETCH);
    }

    /**
     * Like {@link #publishOn(Scheduler)} with a given prefetch, as {@code Flux.publishOn(scheduler,
     * prefetch)}: upstream is requested {@code prefetch} at first and replenished by
     * {@code prefetch - prefetch / 4}; {@code Integer.MAX_VALUE} requests an unbounded amount.
     *
     * @param scheduler an {@code ActorScheduler} or one of its groups
     * @param prefetch  the queue size and first request, at least 1
     * @param <T>       the element type
     * @return a function for {@code Flux.transform}
     * @throws NullPointerException     if {@code scheduler} is {@code null}
     * @throws IllegalArgumentException if {@code scheduler} is not an actor scheduler or group, or
     *                                  {@code prefetch < 1}
     */
    public static <T> Function<Flux<T>, Publisher<T>> publishOn(Scheduler scheduler, int prefetch) {
        ActorGroup group = io.reactoractor.internal.Internals.groupOf(scheduler);
        if (prefetch < 1) {
            throw new IllegalArgumentException("prefetch must be >= 1 but was " + prefetch);
        }
        return source -> FairPublishOn.assemble(source, scheduler, group, prefetch);
    }
}
