package io.reactoractor.benchmarks;

import io.reactoractor.ActorScheduler;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The schedulers the JMH benchmarks compare, by the name used in their {@code scheduler} parameter.
 * Every peer has {@link #THREADS} threads except {@code single}, which has one by definition.
 *
 * <table>
 *   <caption>peers</caption>
 *   <tr><th>name</th><th>scheduler</th><th>worker ({@code createWorker()})</th></tr>
 *   <tr><td>{@code actorFair}</td><td>{@code ActorScheduler}, {@code Ordering.FAIR}</td>
 *       <td>an actor: FIFO, one task at a time</td></tr>
 *   <tr><td>{@code actorFifo}</td><td>{@code ActorScheduler}, {@code Ordering.FIFO}</td>
 *       <td>the same</td></tr>
 *   <tr><td>{@code parallel}</td><td>{@code Schedulers.newParallel("parallel", 2)}: the implementation of
 *       {@code Schedulers.parallel()}, sized explicitly and disposable</td>
 *       <td>pinned to one of the 2 threads (round-robin)</td></tr>
 *   <tr><td>{@code single}</td><td>{@code Schedulers.newSingle("single")}: <b>one</b> thread; every task
 *       and every worker of the scheduler runs on it, so it can never use the second core</td>
 *       <td>that thread</td></tr>
 *   <tr><td>{@code boundedElastic}</td><td>{@code Schedulers.newBoundedElastic(2, 100_000, "be")}</td>
 *       <td>pinned to one of at most 2 threads (the least busy)</td></tr>
 *   <tr><td>{@code fjp}</td><td>{@code Schedulers.fromExecutorService(new ForkJoinPool(2))}</td>
 *       <td><b>not serial</b>: Reactor's {@code ExecutorServiceWorker} submits each task straight to the
 *       pool, so the tasks of one worker can run concurrently and out of order (operators such as
 *       {@code publishOn} serialise themselves, so they still work)</td></tr>
 * </table>
 *
 * <p>{@code boundedElastic}: the thread cap is 2 (its default is 10 × cores) so that it has as many
 * threads as the others. The queued-task cap, 100,000 per thread, is Reactor's default
 * ({@code Schedulers.DEFAULT_BOUNDED_ELASTIC_QUEUESIZE}) and above the largest burst any benchmark
 * submits ({@value SchedulerHandoffBenchmark#TASKS} tasks), so no submission is ever rejected.
 */
public final class SchedulerPeers {

    /** Threads of every peer except {@code single}. */
    public static final int THREADS = 2;

    /** Every peer name, in the order the tables list them. */
    public static final List<String> NAMES =
            List.of("actorFair", "actorFifo", "parallel", "single", "boundedElastic", "fjp");

    private SchedulerPeers() {
    }

    /**
     * Creates one peer.
     *
     * @param name one of {@link #NAMES}
     * @return a new scheduler; the caller disposes it
     */
    public static Scheduler create(String name) {
        return create(name, "");
    }

    private static Scheduler create(String name, String suffix) {
        switch (name) {
            case "actorFair":
                return ActorScheduler.builder().name("actor-fair" + suffix).threads(THREADS)
                        .ordering(ActorScheduler.Ordering.FAIR).build();
            case "actorFifo":
                return ActorScheduler.builder().name("actor-fifo" + suffix).threads(THREADS)
                        .ordering(ActorScheduler.Ordering.FIFO).build();
            case "parallel":
                return Schedulers.newParallel("parallel" + suffix, THREADS);
            case "single":
                return Schedulers.newSingle("single" + suffix);
            case "boundedElastic":
                return Schedulers.newBoundedElastic(THREADS, 100_000, "be" + suffix);
            case "fjp":
                return Schedulers.fromExecutorService(new ForkJoinPool(THREADS), "fjp" + suffix);
            default:
                throw new IllegalArgumentException("unknown scheduler: " + name);
        }
    }

    /**
     * Creates two distinct schedulers of the same kind, for a two-stage pipeline.
     *
     * <p>{@code ActorScheduler}: two groups of weight 1 ({@code "upstream"}, {@code "downstream"}) of
     * one 2-thread scheduler, the way the library separates stages; both stages share its 2 threads.
     * Reactor's schedulers have no groups, so they get two instances (2 × 2 threads; 2 × 1 for
     * {@code single}). A stage keeps at most one thread busy, so every peer runs the pipeline on 2
     * busy threads; the extra idle threads of the Reactor pairs cost nothing but memory.
     *
     * @param name one of {@link #NAMES}
     * @return the pair; {@link Pair#dispose()} releases everything
     */
    public static Pair createPair(String name) {
        if (name.startsWith("actor")) {
            ActorScheduler s = (ActorScheduler) create(name);
            return new Pair(s.group("upstream", 1), s.group("downstream", 1), s);
        }
        Scheduler a = create(name, "-a");
        Scheduler b = create(name, "-b");
        return new Pair(a, b, () -> {
            a.dispose();
            b.dispose();
        });
    }

    /**
     * Two schedulers for the two ends of a pipeline and what owns their threads.
     *
     * @param upstream   where the source runs ({@code subscribeOn})
     * @param downstream where the items are handed to ({@code publishOn})
     * @param owner      disposes both
     */
    public record Pair(Scheduler upstream, Scheduler downstream, Disposable owner) implements Disposable {
        @Override
        public void dispose() {
            owner.dispose();
        }
    }
}
