package io.reactoractor.benchmarks.savina;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.pattern.Patterns;

/**
 * One run of a workload on Pekko classic actors: creates the (top-level) actors, carries the
 * result, and stops the actors afterwards (outside the timed part). Pekko's default mailbox is
 * unbounded, so nothing here can drop a message.
 */
public final class PekkoRun {

    private final ActorSystem system;
    private final CompletableFuture<Long> result = new CompletableFuture<>();
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

    /** @param value the workload's computed result; the first call wins */
    public void complete(long value) {
        result.complete(value);
    }

    /** @param error fails the run; the first call wins */
    public void fail(Throwable error) {
        result.completeExceptionally(error);
    }

    /**
     * Waits for {@link #complete} or {@link #fail}.
     *
     * @param timeout the longest wait
     * @return the result
     * @throws Exception the failure, or a {@link TimeoutException}
     */
    public long await(Duration timeout) throws Exception {
        try {
            return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        } catch (TimeoutException e) {
            throw new TimeoutException("no result after " + timeout + "; " + actors.size() + " actors");
        }
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
