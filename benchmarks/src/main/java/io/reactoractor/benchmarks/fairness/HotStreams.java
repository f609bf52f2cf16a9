package io.reactoractor.benchmarks.fairness;

import io.reactoractor.actor.ActorOperators;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * Streams for the {@code publishOn} scenario, each moved onto the scheduler under test either by
 * Reactor's {@code publishOn(scheduler)} or by the library's
 * {@code transform(ActorOperators.publishOn(scheduler))}.
 *
 * <p>A hot stream is a never-ending {@code Flux.generate} whose subscriber burns {@code itemNanos} per
 * item on the scheduler's thread. Behind Reactor's {@code publishOn}, the drain loop refills itself from
 * the synchronous source and never returns: one task that holds its thread for as long as the stream
 * runs. Behind the actor operator, every item is one message of an actor, which yields at the quota or
 * preemption point like every other actor.
 */
final class HotStreams {

    /** How a stream is moved onto the scheduler. */
    enum Operator {
        /** Reactor's {@code publishOn(scheduler)}. */
        PUBLISH_ON("publishOn"),
        /** {@code transform(ActorOperators.publishOn(scheduler))}; only for an {@code ActorScheduler}. */
        ACTOR_OPERATOR("actor-op");

        private final String label;

        Operator(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }

        <T> Flux<T> apply(Flux<T> source, Scheduler scheduler) {
            return this == PUBLISH_ON ? source.publishOn(scheduler) : source.transform(ActorOperators.publishOn(scheduler));
        }
    }

    private HotStreams() {
    }

    /** Subscribes a never-ending hot stream; dispose the result to stop it. */
    static Disposable hot(Scheduler scheduler, Operator op, long itemNanos, LongAdder busy) {
        Flux<Boolean> source = Flux.generate(sink -> sink.next(Boolean.TRUE));
        return op.apply(source, scheduler).subscribe(item -> busy.add(Busy.burn(itemNanos)));
    }

    /**
     * A light stream: whatever the returned target is given (one {@link LightProbe} task per item) goes
     * through a unicast sink and the operator, and runs in the subscriber.
     */
    static final class Light {
        private final Sinks.Many<Runnable> sink = Sinks.many().unicast().onBackpressureBuffer();
        private final Disposable subscription;

        Light(Scheduler scheduler, Operator op) {
            subscription = op.apply(sink.asFlux(), scheduler).subscribe(Runnable::run);
        }

        /** For a single submitting thread (the sink is not to be fed concurrently). */
        LightProbe.Target target() {
            return task -> {
                Sinks.EmitResult r = sink.tryEmitNext(task);
                if (r.isFailure()) {
                    throw new RejectedExecutionException("light stream refused an item: " + r);
                }
            };
        }

        void dispose() {
            subscription.dispose();
        }
    }
}
