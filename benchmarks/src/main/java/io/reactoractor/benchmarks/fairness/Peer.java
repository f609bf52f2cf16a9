package io.reactoractor.benchmarks.fairness;

import io.reactoractor.ActorScheduler;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** The schedulers compared by {@link FairnessRunner}, all with the same number of threads. */
public enum Peer {
    ACTOR_FAIR("actor-fair"),
    ACTOR_FIFO("actor-fifo"),
    /** {@code Schedulers.newParallel("parallel", n)}: what {@code Schedulers.parallel()} is, sized explicitly. */
    PARALLEL("parallel"),
    /**
     * A fixed {@link ThreadPoolExecutor} (n threads, one unbounded FIFO queue) wrapped with
     * {@code Schedulers.fromExecutorService}. Its workers hand every task straight to the shared queue,
     * so tasks of one worker are not guaranteed to run one at a time; the scenarios keep at most one
     * task of a worker outstanding where that matters.
     */
    TPE("tpe"),
    /** {@link QmqStyleScheduler}: one global priority queue by raw cumulative run time, 5 ms quota. */
    QMQ_PQ("qmq-pq");

    private final String label;

    Peer(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public Scheduler create(int threads) {
        switch (this) {
            case ACTOR_FAIR:
                return ActorScheduler.builder().name(label).threads(threads)
                        .ordering(ActorScheduler.Ordering.FAIR).build();
            case ACTOR_FIFO:
                return ActorScheduler.builder().name(label).threads(threads)
                        .ordering(ActorScheduler.Ordering.FIFO).build();
            case PARALLEL:
                return Schedulers.newParallel(label, threads);
            case TPE: {
                AtomicInteger n = new AtomicInteger();
                ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS,
                        new LinkedBlockingQueue<>(), r -> {
                            Thread t = new Thread(r, label + "-" + n.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        });
                Scheduler s = Schedulers.fromExecutorService(pool, label);
                s.init();
                return s;
            }
            case QMQ_PQ:
                return new QmqStyleScheduler(label, threads);
            default:
                throw new AssertionError(this);
        }
    }

    /** @return whether the scheduler has groups with weights (only {@link ActorScheduler} has) */
    public boolean hasGroups() {
        return this == ACTOR_FAIR || this == ACTOR_FIFO;
    }

    /**
     * The scheduler whose workers form group {@code name}: {@code scheduler.group(name, weight)} for an
     * {@link ActorScheduler}; for a scheduler without groups, the scheduler itself (the group is then
     * just the set of workers the caller created for it, and the weight is ignored).
     */
    public Scheduler group(Scheduler scheduler, String name, int weight) {
        if (scheduler instanceof ActorScheduler) {
            return ((ActorScheduler) scheduler).group(name, weight);
        }
        return scheduler;
    }

    public static Peer fromLabel(String label) {
        for (Peer p : values()) {
            if (p.label.equals(label)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown peer '" + label + "'");
    }
}
