package io.reactoractor.benchmarks.savina;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.Actor;
import io.reactoractor.actor.Behaviour;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * One run of a workload on this library's {@link Actor}s: builds the actors, carries the result, and
 * terminates the actors afterwards (outside the timed part).
 *
 * <h2>Mailbox capacity: never a silent drop</h2>
 * An {@link Actor}'s mailbox is bounded and {@link Actor#tell} returns {@code false} when it is full.
 * Every actor here is built with {@link #capacityFor(int) a capacity derived from the most messages
 * the workload can have waiting for it at once}, so a full mailbox cannot happen in a correct run.
 * Should it happen anyway, {@link #tell} throws: inside a behaviour that fails the actor (the default
 * {@link io.reactoractor.actor.ErrorPolicy#stop() stop} policy), which fails the run at once through the actor's
 * downstream {@code onError}; the run never continues with a message missing.
 *
 * <h2>Why every actor gets a subscriber</h2>
 * An {@link Actor} only runs its behaviour while its outbound publisher has a subscriber with demand
 * (see its Javadoc). The workloads' actors emit nothing, so each gets a sink that requests
 * {@code Long.MAX_VALUE}, turns {@code onError} into a failed run and records termination.
 */
public final class OursRun extends WorkloadRun {

    private final ActorScheduler scheduler;
    private final Queue<Actor<?, Void>> actors = new ConcurrentLinkedQueue<>();
    private final Queue<CompletableFuture<Void>> terminations = new ConcurrentLinkedQueue<>();

    /** @param scheduler the scheduler every actor of the run is built on */
    public OursRun(ActorScheduler scheduler) {
        this.scheduler = scheduler;
    }

    /**
     * The capacity that makes {@code tell} succeed while at most {@code maxWaiting} messages sent to an
     * actor are unprocessed (counting the one being processed). The actor holds a credit per message
     * until the message has left the mailbox, and hands credits back in batches of up to
     * {@code capacity / 4}; so {@code maxWaiting + capacity / 4} credits must fit, which
     * {@code 2 * maxWaiting + 2} does.
     *
     * @param maxWaiting the most messages that can be waiting for the actor at once
     * @return the mailbox capacity to use
     */
    public static int capacityFor(int maxWaiting) {
        long c = 2L * maxWaiting + 2;
        if (c > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("maxWaiting too large: " + maxWaiting);
        }
        return (int) c;
    }

    /**
     * Builds an actor whose mailbox fits {@code maxWaiting} messages (see {@link #capacityFor}).
     *
     * @param maxWaiting the most messages that can be waiting for this actor at once
     * @param behaviour  what it does with a message
     * @param <I>        the message type
     * @return the started actor
     */
    public <I> Actor<I, Void> actor(int maxWaiting, Behaviour<I, Void> behaviour) {
        Actor<I, Void> a = Actor.<I, Void>builder(scheduler).capacity(capacityFor(maxWaiting))
                .behaviour(behaviour).build();
        CompletableFuture<Void> terminated = new CompletableFuture<>();
        a.subscribe(new Sink(terminated));
        actors.add(a);
        terminations.add(terminated);
        return a;
    }

    /**
     * Tells {@code to} a message; a full mailbox is a bug in the workload's sizing, never a drop.
     *
     * @param to      the receiver
     * @param message the message
     * @param <I>     the message type
     * @throws IllegalStateException if the mailbox was full or the actor terminated
     */
    public static <I> void tell(Actor<I, ?> to, I message) {
        if (!to.tell(message)) {
            throw new IllegalStateException("mailbox of " + to.path() + " full (capacity " + to.capacity()
                    + ") or actor terminated: the workload's capacity is too small");
        }
    }

    @Override
    protected String progress() {
        long waiting = 0;
        for (Actor<?, Void> a : actors) {
            waiting += a.mailboxSize();
        }
        return actors.size() + " actors, " + waiting + " messages still in their mailboxes";
    }

    /**
     * Completes every actor and waits until all have terminated, so the next run starts with no live
     * actor in the scheduler.
     *
     * @param timeout the longest wait
     * @throws Exception if an actor did not terminate in time
     */
    public void teardown(Duration timeout) throws Exception {
        for (Actor<?, Void> a : actors) {
            a.complete();
        }
        CompletableFuture.allOf(terminations.toArray(new CompletableFuture<?>[0]))
                .get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Unbounded demand; an error fails the run, any terminal signal records termination. */
    private final class Sink implements CoreSubscriber<Void> {
        private final CompletableFuture<Void> terminated;

        Sink(CompletableFuture<Void> terminated) {
            this.terminated = terminated;
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void v) {
            // the workloads' actors emit nothing
        }

        @Override
        public void onError(Throwable t) {
            fail(t);
            terminated.complete(null);
        }

        @Override
        public void onComplete() {
            terminated.complete(null);
        }
    }
}
