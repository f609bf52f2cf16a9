package io.reactoractor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.metrics.MetricsBinding;
import io.reactoractor.internal.scheduling.SchedulerMetrics;
import io.reactoractor.internal.scheduling.SchedulingGroup;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A fair actor scheduler for Project Reactor.
 *
 * <p>It implements {@link Scheduler}, so {@code publishOn}, {@code subscribeOn},
 * {@code Mono.delay(d, scheduler)} and every other operator run on it unchanged. Inside, each
 * {@link #createWorker() worker} is an <em>actor</em>: a mailbox of tasks run one at a time (FIFO) in
 * <em>turns</em> on a small pool of threads. A turn ends when the mailbox is empty, when the quota
 * (5 ms by default) is used, or earlier when an actor that used less CPU has been waiting (cooperative
 * preemption between tasks). The next actor is the one with the least weighted CPU time used, with
 * placement rules that keep newcomers and long sleepers from monopolising the pool.
 *
 * <p>Actors can be grouped ({@link #group(String, int)}): CPU is shared fairly between groups first,
 * then between the actors of a group. Workers can be {@link ActorWorker#suspend() suspended} and
 * resumed. Threads are named after the scheduler and are {@link reactor.core.scheduler.NonBlocking}.
 *
 * <p>What no scheduler can do: the JVM cannot preempt a running task. A task that blocks, or a
 * {@code publishOn} drain loop that never returns while items keep arriving, holds its thread; the
 * scheduler detects such hogs, logs them and starts compensating threads so other actors keep
 * running. Nor does it interrupt a running task when that task, its worker or the scheduler is
 * disposed (Reactor's own schedulers do, through {@code Future.cancel(true)}): a carrier thread is
 * shared by many actors, and an interrupt meant for one task must not reach the next actor's. A
 * disposed running task reports {@code isDisposed()} at once and runs to its end.
 *
 * <p>Behaviour Reactor's own schedulers define beyond the {@code Scheduler} interface is kept: a
 * task's error goes to {@code Schedulers.handleError} (the carrier's uncaught-exception handler logs it
 * through Reactor's {@code Schedulers} logger, then the {@code onHandleError} hooks); a fixed-rate task
 * keeps its schedule after an error, a period-0 task stops; a delay or initial delay of zero or less
 * runs the task in FIFO order with the worker's immediate tasks; {@code init()} after a disposal throws.
 *
 * <pre>{@code
 * ActorScheduler scheduler = ActorScheduler.builder()
 *         .name("tenants").threads(4).quota(Duration.ofMillis(5))
 *         .build();
 * Scheduler tenantA = scheduler.group("tenant-a", 1);
 * flux.publishOn(tenantA)...
 * }</pre>
 */
public final class ActorScheduler implements Scheduler, Scannable {

    /** How the next actor is chosen. */
    public enum Ordering {
        /** Least weighted CPU time first, with placement rules and preemption (the default). */
        FAIR,
        /** First come, first served, bounded only by the quota (for comparison). */
        FIFO
    }

    /** The name of the group used by {@link #createWorker()} and {@link #schedule(Runnable)}. */
    public static final String DEFAULT_GROUP = "default";

    private final SchedulerEngine engine;
    private final Ordering ordering;
    private final ActorMetrics metrics;
    private final ConcurrentHashMap<String, ActorGroup> groups = new ConcurrentHashMap<>();
    private final ActorGroup defaultGroup;

    private ActorScheduler(SchedulerEngine engine, Ordering ordering, ActorMetrics metrics) {
        this.metrics = metrics;
        this.engine = engine;
        this.ordering = ordering;
        this.defaultGroup = group(DEFAULT_GROUP, 1);
    }

    /**
     * A started scheduler with the defaults: name {@code "actor"}, one thread per available
     * processor, 5 ms quota, fair ordering.
     *
     * @return a new scheduler
     */
    public static ActorScheduler create() {
        return builder().build();
    }

    /** @return a builder with the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the scheduler's name (threads are named after it) */
    public String name() {
        return engine.config().name();
    }

    /** @return the number of permanent threads */
    public int threads() {
        return engine.config().threads();
    }

    /** @return the quota of a turn */
    public Duration quota() {
        return Duration.ofNanos(engine.config().quotaNanos());
    }

    /** @return the ordering rule */
    public Ordering ordering() {
        return ordering;
    }

    /**
     * Returns the group named {@code name}, creating it with {@code weight} on first use. A larger
     * weight gets a proportionally larger CPU share when groups compete. A disposed group leaves the
     * scheduler's registries (and its meters are removed), so the same name then creates a new group.
     *
     * @param name   the group's name: not empty, at most 128 characters, no {@code '/'}
     * @param weight the weight, at least 1
     * @return the group, a {@link Scheduler} whose workers all belong to it
     * @throws IllegalArgumentException if the name or weight is invalid, or the group exists with another weight
     */
    public ActorGroup group(String name, int weight) {
        validateGroupName(name);
        if (weight < 1) {
            throw new IllegalArgumentException("weight must be >= 1 but was " + weight);
        }
        ActorGroup g;
        for (;;) {
            g = groups.get(name);
            if (g == null) {
                SchedulingGroup sg = engine.group(name, weight);
                g = groups.computeIfAbsent(name, n -> new ActorGroup(this, engine, sg));
            }
            if (!g.isTerminated()) {
                break;
            }
            // a disposed group is forgotten (its dispose does the same); its name starts a new group
            forget(g);
        }
        if (g.weight() != weight) {
            throw new IllegalArgumentException("weight: group '" + name + "' already exists with weight "
                    + g.weight() + ", cannot use weight " + weight);
        }
        return g;
    }

    private static void validateGroupName(String name) {
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
        if (name.isEmpty() || name.length() > 128) {
            throw new IllegalArgumentException("name must have 1 to 128 characters but has " + name.length());
        }
        if (name.indexOf('/') >= 0) {
            throw new IllegalArgumentException("name must not contain '/' but was '" + name + "'");
        }
    }

    /** Removes a disposed group from every registry (idempotent; a newer group of that name stays). */
    void forget(ActorGroup g) {
        engine.removeGroup(g.schedulingGroup());
        groups.remove(g.name(), g);
    }

    /** @return the group of {@link #createWorker()} and direct {@code schedule} calls */
    public ActorGroup defaultGroup() {
        return defaultGroup;
    }

    /** @return the groups created so far (the default group included) */
    public List<ActorGroup> groups() {
        return List.copyOf(groups.values());
    }

    /** Creates a worker (an actor) in the {@link #defaultGroup() default group}. */
    @Override
    public ActorWorker createWorker() {
        return defaultGroup.createWorker();
    }

    @Override
    public Disposable schedule(Runnable task) {
        return defaultGroup.schedule(task);
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        return defaultGroup.schedule(task, delay, unit);
    }

    @Override
    public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        return defaultGroup.schedulePeriodically(task, initialDelay, period, unit);
    }

    /**
     * Starts the threads (the factories already did; idempotent).
     *
     * @throws IllegalStateException if the scheduler was disposed
     */
    @Override
    public void init() {
        engine.init();
    }

    /**
     * Disposes now: new tasks are rejected, threads exit after their current task, tasks that have
     * not started are abandoned (those of idle workers are cancelled).
     */
    @Override
    public void dispose() {
        engine.shutdownNow();
    }

    /**
     * Lazily disposes gracefully: on subscription new tasks are rejected, periodic tasks are
     * cancelled, queued tasks and one-shot delayed tasks still run; then the threads stop and the
     * returned {@code Mono} completes. Work of suspended workers is not waited for. Combine with
     * {@code timeout(..)} and {@link #dispose()} to bound the wait.
     *
     * @return a Mono completing when all threads have stopped
     */
    @Override
    public Mono<Void> disposeGracefully() {
        return Mono.defer(() -> {
            engine.shutdownGracefully();
            return engine.onTerminated();
        });
    }

    @Override
    public boolean isDisposed() {
        return engine.isDisposed();
    }

    /**
     * The metrics binding given to the builder, for components built on this scheduler (such as the
     * pull consumer) to report next to the scheduler.
     *
     * @return the binding, {@link ActorMetrics#NONE} when metrics are off
     */
    public ActorMetrics metrics() {
        return metrics;
    }

    /** @return a snapshot of the scheduler's counters */
    public SchedulerStats stats() {
        List<SchedulerStats.GroupStats> gs = new ArrayList<>();
        for (SchedulingGroup g : engine.groups()) {
            gs.add(new SchedulerStats.GroupStats(g.name(), g.weight(), g.actors(), g.cpuTimeNanos(), g.turns()));
        }
        return new SchedulerStats(name(), threads(), engine.compensatingThreads(), engine.readyActors(),
                engine.actors(), engine.suspendedActors(), engine.tasksRun(), engine.failedTasks(),
                engine.rejectedTasks(), engine.quotaOverruns(), engine.hogsDetected(), engine.internalErrors(), gs);
    }

    void forEachCell(SchedulingGroup g, Consumer<? super ActorCell> action) {
        g.forEachCell(action);
    }

    int buffered(SchedulingGroup g) {
        int[] sum = {0};
        g.forEachCell(c -> sum[0] += c.pendingWork());
        return sum[0];
    }

    /**
     * Reactor's {@link Scannable} attributes: {@code NAME} ({@link #toString()}), {@code TERMINATED} and
     * {@code CANCELLED} (disposed), {@code CAPACITY} (the threads: tasks that can run at once, as Reactor's
     * {@code parallel()}). {@code BUFFERED} differs from Reactor's {@code parallel()}, which reports its
     * worker count there: here it is the work waiting in the actors' mailboxes (immediate tasks and
     * messages; delayed tasks not yet due are not counted), an approximate sum while producers are active.
     */
    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return toString(); // as Reactor's schedulers: parallel(2,"x") there, actor(2,"x") here
        }
        if (key == Attr.TERMINATED || key == Attr.CANCELLED) {
            return isDisposed();
        }
        if (key == Attr.CAPACITY) {
            return threads(); // as Reactor's parallel(): the tasks that can run at once
        }
        if (key == Attr.BUFFERED) {
            int sum = 0;
            for (SchedulingGroup g : engine.groups()) {
                sum += buffered(g);
            }
            return sum;
        }
        return null;
    }

    @Override
    public Stream<? extends Scannable> inners() {
        return groups.values().stream();
    }

    /**
     * @return {@code actor(<threads>,"<name>")}, in the form of Reactor's own schedulers
     *         ({@code parallel(2,"name")}), so tools that print schedulers read naturally; also the
     *         {@link Scannable.Attr#NAME}
     */
    @Override
    public String toString() {
        return "actor(" + threads() + ",\"" + name() + "\")";
    }

    /** The engine; for the library's own actor kinds (internal). */
    SchedulerEngine engine() {
        return engine;
    }

    /**
     * Builds an {@link ActorScheduler}. Every parameter is validated when set: an invalid value throws
     * {@link IllegalArgumentException} naming the parameter.
     */
    public static final class Builder {

        /** The most carrier threads, permanent and compensating together (as {@code ForkJoinPool}'s bound). */
        static final int MAX_THREADS = 32_767;
        /** The longest quota, preemption granularity and hog threshold. */
        static final Duration MAX_DURATION = Duration.ofDays(1);

        private String name = "actor";
        private int threads = Runtime.getRuntime().availableProcessors();
        private Duration quota = Duration.ofMillis(5);
        private Duration granularity = Duration.ofNanos(500_000);
        private Ordering ordering = Ordering.FAIR;
        private Duration hogThreshold;
        private Integer maxCompensating;
        private ActorMetrics metrics = ActorMetrics.NONE;

        private Builder() {
        }

        /**
         * @param name thread and metric name prefix; not empty, at most 64 characters
         * @return this
         */
        public Builder name(String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("name must not be null or blank");
            }
            if (name.length() > 64) {
                throw new IllegalArgumentException("name must have at most 64 characters but has " + name.length());
            }
            this.name = name;
            return this;
        }

        /**
         * @param threads permanent carrier threads, 1 to {@value #MAX_THREADS} (default: available processors)
         * @return this
         */
        public Builder threads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be >= 1 but was " + threads);
            }
            if (threads > MAX_THREADS) {
                throw new IllegalArgumentException("threads must be <= " + MAX_THREADS + " but was " + threads);
            }
            this.threads = threads;
            return this;
        }

        /**
         * @param quota the bound of a turn, checked between tasks (after a run of tasks under 1 µs, up to 3
         *              more may start before the check) (default 5 ms); positive, at most 1 day
         * @return this
         */
        public Builder quota(Duration quota) {
            this.quota = positive("quota", quota);
            return this;
        }

        /**
         * @param granularity preemption granularity: a running actor yields between tasks when an actor
         *                    with less CPU time has waited, or its own turn has lasted, this long
         *                    (default 500 µs); positive, at most the quota (so at most 1 day)
         * @return this
         */
        public Builder preemptionGranularity(Duration granularity) {
            this.granularity = positive("preemptionGranularity", granularity);
            return this;
        }

        /**
         * @param ordering {@link Ordering#FAIR} (default) or {@link Ordering#FIFO}
         * @return this
         */
        public Builder ordering(Ordering ordering) {
            if (ordering == null) {
                throw new IllegalArgumentException("ordering must not be null");
            }
            this.ordering = ordering;
            return this;
        }

        /**
         * @param threshold a task running longer than this is a hog: it is logged and a compensating
         *                  thread is started (default 10 × quota); at least the quota, at most 1 day when set
         * @return this
         */
        public Builder hogThreshold(Duration threshold) {
            this.hogThreshold = positive("hogThreshold", threshold);
            return this;
        }

        /**
         * @param max the most compensating threads running at once (default: {@code threads}, or what is left
         *            of {@value #MAX_THREADS}); 0 disables
         *            compensation (hogs are still detected and reported); with {@code threads}, at most
         *            {@value #MAX_THREADS} in all
         * @return this
         */
        public Builder maxCompensatingThreads(int max) {
            if (max < 0 || max > MAX_THREADS) {
                throw new IllegalArgumentException("maxCompensatingThreads must be between 0 and " + MAX_THREADS
                        + " but was " + max);
            }
            this.maxCompensating = max;
            return this;
        }

        /**
         * Reports the scheduler's figures, and those of the pull consumers built on it, to a metrics
         * binding; for Micrometer ({@code reactor.actor.*}, tags {@code scheduler} and {@code group}):
         * {@code metrics(MicrometerActorMetrics.of(meterRegistry))} from {@code io.reactoractor.micrometer}.
         * Micrometer is an optional dependency, needed only by that package.
         *
         * @param metrics the binding (default {@link ActorMetrics#NONE})
         * @return this
         * @throws IllegalArgumentException if {@code metrics} is null or was not created by a binding of
         *                                  this library
         */
        public Builder metrics(ActorMetrics metrics) {
            if (metrics == null) {
                throw new IllegalArgumentException("metrics must not be null");
            }
            if (!(metrics instanceof MetricsBinding)) {
                throw new IllegalArgumentException("metrics (" + metrics + ") is not a binding of this library:"
                        + " use MicrometerActorMetrics.of(registry) or ActorMetrics.NONE");
            }
            this.metrics = metrics;
            return this;
        }

        private static Duration positive(String parameter, Duration d) {
            if (d == null) {
                throw new IllegalArgumentException(parameter + " must not be null");
            }
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(parameter + " must be positive but was " + d);
            }
            if (d.compareTo(MAX_DURATION) > 0) {
                // the engine adds these to clock readings and multiplies the quota: bounded, nothing overflows
                throw new IllegalArgumentException(parameter + " must be at most " + MAX_DURATION + " but was " + d);
            }
            return d;
        }

        /**
         * Builds and starts the scheduler.
         *
         * @return the scheduler
         * @throws IllegalArgumentException if parameters are inconsistent (named in the message)
         */
        public ActorScheduler build() {
            long quotaNanos = quota.toNanos();
            long granularityNanos = granularity.toNanos();
            if (granularityNanos > quotaNanos) {
                throw new IllegalArgumentException("preemptionGranularity (" + granularity
                        + ") must not exceed quota (" + quota + ")");
            }
            long hogNanos = hogThreshold != null ? hogThreshold.toNanos() : Math.multiplyExact(quotaNanos, 10L);
            if (hogNanos < quotaNanos) {
                throw new IllegalArgumentException("hogThreshold (" + Duration.ofNanos(hogNanos)
                        + ") must be at least the quota (" + quota + ")");
            }
            int maxComp = maxCompensating != null ? maxCompensating : Math.min(threads, MAX_THREADS - threads);
            if (threads + maxComp > MAX_THREADS) {
                throw new IllegalArgumentException("maxCompensatingThreads (" + maxComp + ") plus threads (" + threads
                        + ") must be at most " + MAX_THREADS);
            }
            SchedulerMetrics schedulerMetrics = ((MetricsBinding) metrics).schedulerMetrics(name);
            if (schedulerMetrics == null) {
                throw new IllegalArgumentException("metrics (" + metrics + ") returned no SchedulerMetrics");
            }
            SchedulerEngine engine = new SchedulerEngine(new SchedulerEngine.Config(name, threads, quotaNanos,
                    granularityNanos, ordering == Ordering.FAIR, hogNanos, maxComp, schedulerMetrics));
            ActorScheduler scheduler = new ActorScheduler(engine, ordering, metrics);
            scheduler.init();
            return scheduler;
        }
    }
}
