package io.reactoractor.actor;

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
 * to an identity {@link Actor} instead: each element is one message, and the actor's turn ends at
 * the quota or at the preemption point like every other actor, so a hot stream shares the threads.
 * The cost is a mailbox hand-off per element (measured in {@code benchmarks/RESULTS.md}).
 */
public final class ActorOperators {

    /** The default mailbox capacity (prefetch) of {@link #publishOn(Scheduler)}. */
    public static final int DEFAULT_PREFETCH = 256;

    private ActorOperators() {
    }

    /**
     * A fair replacement for {@code Flux.publishOn}: {@code flux.transform(ActorOperators.publishOn(s))}.
     * Signals are delivered on the actor scheduler's threads, in order; upstream is requested in batches
     * of the mailbox capacity; the Reactor context propagates upstream.
     *
     * @param scheduler an {@code ActorScheduler} or one of its groups
     * @param <T>       the element type
     * @return a function for {@code Flux.transform}
     */
    public static <T> Function<Flux<T>, Publisher<T>> publishOn(Scheduler scheduler) {
        return publishOn(scheduler, DEFAULT_PREFETCH);
    }

    /**
     * @param scheduler an {@code ActorScheduler} or one of its groups
     * @param prefetch  the mailbox capacity, at least 1
     * @param <T>       the element type
     * @return a function for {@code Flux.transform}
     */
    public static <T> Function<Flux<T>, Publisher<T>> publishOn(Scheduler scheduler, int prefetch) {
        Actor.groupOf(scheduler);
        if (prefetch < 1) {
            throw new IllegalArgumentException("prefetch must be >= 1 but was " + prefetch);
        }
        return source -> Flux.deferContextual(ctx -> {
            Actor<T, T> actor = Actor.identity(scheduler, prefetch);
            source.subscribe(actor.newSubscriber(ctx));
            return Flux.from(actor);
        });
    }
}
