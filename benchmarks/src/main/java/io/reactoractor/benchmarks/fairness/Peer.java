package io.reactoractor.benchmarks.fairness;

import io.reactoractor.ActorScheduler;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** The schedulers compared by {@link FairnessRunner}, all with the same number of threads. */
public enum Peer {
    ACTOR_FAIR("actor-fair"),
    ACTOR_FIFO("actor-fifo"),
    /** {@code Schedulers.newParallel("parallel", n)}: what {@code Schedulers.parallel()} is, sized explicitly. */
    PARALLEL("parallel");

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
            default:
                throw new AssertionError(this);
        }
    }

    /**
     * The scheduler whose workers form group {@code name}: {@code scheduler.group(name, 1)} for an
     * {@link ActorScheduler}; for a scheduler without groups, the scheduler itself (the group is then
     * just the set of workers the caller created for it).
     */
    public Scheduler group(Scheduler scheduler, String name) {
        if (scheduler instanceof ActorScheduler) {
            return ((ActorScheduler) scheduler).group(name, 1);
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
