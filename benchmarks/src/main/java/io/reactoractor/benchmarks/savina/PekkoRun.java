package io.reactoractor.benchmarks.savina;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.pattern.Patterns;

/**
 * One run of a workload on Pekko classic actors: creates the (top-level) actors, carries the
 * result, and stops the actors afterwards (outside the timed part). Pekko's default mailbox is
 * unbounded, so nothing here can drop a message.
 */
public final class PekkoRun extends WorkloadRun {

    private final ActorSystem system;
    private final Queue<ActorRef> actors = new ConcurrentLinkedQueue<>();

    /** @param system the actor system every actor of the run is created in */
    public PekkoRun(ActorSystem system) {
        this.system = system;
    }

    /**
     * Creates a top-level actor (on the system's default dispatcher).
     *
     * @param props what to create
     * @return its reference
     */
    public ActorRef actorOf(Props props) {
        ActorRef ref = system.actorOf(props);
        actors.add(ref);
        return ref;
    }

    @Override
    protected String progress() {
        return actors.size() + " actors";
    }

    /**
     * Stops every actor and waits until all have stopped, so the next run starts with no live actor
     * in the system.
     *
     * @param timeout the longest wait
     * @throws Exception if an actor did not stop in time
     */
    public void teardown(Duration timeout) throws Exception {
        CompletableFuture<?>[] stops = actors.stream()
                .map(a -> Patterns.gracefulStop(a, timeout).toCompletableFuture())
                .toArray(CompletableFuture<?>[]::new);
        CompletableFuture.allOf(stops).get(timeout.toNanos() + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
    }
}
