package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The machinery behind an {@code ActorScheduler}: groups, the run queue, the carrier threads, the
 * timer, the hog monitor, counters and the lifecycle. Internal SPI: applications use
 * {@code io.reactoractor.ActorScheduler}.
 *
 * <h2>Lifecycle</h2>
 * <pre>
 *   state          | event                         | next state
 *   ---------------+-------------------------------+---------------------------------------------------
 *   NEW            | init()                        | RUNNING: carriers, timer and hog monitor started
 *   RUNNING        | init()                        | RUNNING (no-op)
 *   RUNNING        | shutdownGracefully()          | SHUTTING_DOWN: new work rejected, periodic timers
 *                  |                               | cancelled, queued work and one-shot timers still run
 *   SHUTTING_DOWN  | timer owes nothing and run    | TERMINATED (observed twice, 1 ms apart, by an idle
 *                  | queue quiescent               | carrier)
 *   NEW, RUNNING,  | shutdownNow()                 | TERMINATED: timer cleared, carriers exit after their
 *   SHUTTING_DOWN  |                               | current task, idle actors drained (tasks cancelled)
 *   TERMINATED     | last thread exits             | {@link #onTerminated()} completes
 *   SHUTTING_DOWN, | init()                        | IllegalStateException
 *   TERMINATED     |                               |
 * </pre>
 */
public final class SchedulerEngine {

    /**
     * The engine's configuration. The public builder validates first, with messages naming its own
     * parameters; this record checks the same invariants again, so an engine built directly (tests,
     * benchmarks) cannot start in a state the run loop does not expect.
     *
     * @param name               thread and metric name
     * @param threads            permanent carriers
     * @param quotaNanos         hard bound of a turn
     * @param granularityNanos   preemption granularity
     * @param fair               fair ordering (else FIFO)
     * @param hogThresholdNanos  a task running longer than this is a hog
     * @param maxCompensating    at most this many compensating carriers
     * @param metrics            metrics binding
     */
    public record Config(String name, int threads, long quotaNanos, long granularityNanos, boolean fair,
            long hogThresholdNanos, int maxCompensating, SchedulerMetrics metrics, boolean daemon) {

        /**
         * As the canonical constructor, with daemon carriers.
         *
         * @param name              thread and metric name
         * @param threads           permanent carriers
         * @param quotaNanos        hard bound of a turn
         * @param granularityNanos  preemption granularity
         * @param fair              fair ordering (else FIFO)
         * @param hogThresholdNanos a task running longer than this is a hog
         * @param maxCompensating   at most this many compensating carriers
         * @param metrics           metrics binding
         */
        public Config(String name, int threads, long quotaNanos, long granularityNanos, boolean fair,
                long hogThresholdNanos, int maxCompensating, SchedulerMetrics metrics) {
            this(name, threads, quotaNanos, granularityNanos, fair, hogThresholdNanos, maxCompensating, metrics,
                    true);
        }

        /**
         * Checks the configuration.
         *
         * @param name              thread and metric name
         * @param threads           permanent carriers
         * @param quotaNanos        hard bound of a turn
         * @param granularityNanos  preemption granularity
         * @param fair              fair ordering (else FIFO)
         * @param hogThresholdNanos a task running longer than this is a hog
         * @param maxCompensating   at most this many compensating carriers
         * @param metrics           metrics binding
         * @param daemon            whether the carriers are daemon threads
         * @throws IllegalArgumentException naming the first invalid component
         */
        public Config {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(metrics, "metrics");
            if (threads < 1) {
                throw new IllegalArgumentException("threads must be at least 1 but was " + threads);
            }
            if (quotaNanos <= 0) {
                throw new IllegalArgumentException("quotaNanos must be positive but was " + quotaNanos);
            }
            if (granularityNanos <= 0 || granularityNanos > quotaNanos) {
                throw new IllegalArgumentException("granularityNanos must be in (0, quotaNanos] but was "
                        + granularityNanos);
            }
            if (hogThresholdNanos < quotaNanos) {
                throw new IllegalArgumentException("hogThresholdNanos must be at least quotaNanos but was "
                        + hogThresholdNanos);
            }
            if (maxCompensating < 0) {
                throw new IllegalArgumentException("maxCompensating must not be negative but was "
                        + maxCompensating);
            }
        }
    }

    private static final Logger LOG = Loggers.getLogger(SchedulerEngine.class);

    static final int NEW = 0;
    static final int RUNNING = 1;
    static final int SHUTTING_DOWN = 2;
    static final int TERMINATED = 3;

    private static final VarHandle STATE;
    private static final VarHandle INTERNAL_ERROR_LOGGED;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(SchedulerEngine.class, "state", int.class);
            INTERNAL_ERROR_LOGGED = MethodHandles.lookup().findVarHandle(SchedulerEngine.class, "internalErrorLogged",
                    boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile int state = NEW;

    private final Config config;
    private final RunQueue runQueue;
    private final RunNext runNext;
    /** Whether the scheduling-delay metric is recorded: the only reader of an actor's ready time. */
    private final boolean exactReadyAt;
    private final CarrierPool pool;
    private final TimerQueue timer;
    private final HogMonitor hogMonitor;
    private final ConcurrentHashMap<String, SchedulingGroup> groups = new ConcurrentHashMap<>();

    private final AtomicInteger actors = new AtomicInteger();
    private final AtomicInteger suspended = new AtomicInteger();
    private final AtomicInteger liveThreads = new AtomicInteger();
    private final LongAdder failedTasks = new LongAdder();
    private final LongAdder rejectedTasks = new LongAdder();
    private final LongAdder quotaOverruns = new LongAdder();
    private final LongAdder mailboxFull = new LongAdder();
    private final LongAdder exitedCarrierTasks = new LongAdder();
    private final LongAdder exitedCarrierChains = new LongAdder();
    private final LongAdder exitedCarrierTurns = new LongAdder();
    private final LongAdder exitedCarrierPreemptions = new LongAdder();
    private final LongAdder exitedCarrierClockReads = new LongAdder();
    private final LongAdder internalErrors = new LongAdder();
    private volatile boolean internalErrorLogged;
    private final AtomicLong quiescentSince = new AtomicLong();
    private final Sinks.Empty<Void> terminated = Sinks.empty();

    /**
     * Creates an engine; {@link #init()} starts its threads.
     *
     * @param config the validated configuration
     */
    public SchedulerEngine(Config config) {
        this.config = config;
        this.runQueue = config.fair()
                ? new FairRunQueue(config.threads(), config.quotaNanos(), config.granularityNanos())
                : new FifoRunQueue();
        this.runNext = new RunNext(this, runQueue, System::nanoTime, visitor -> pool().forEach(visitor));
        this.exactReadyAt = config.metrics().recordsSchedulingDelay();
        this.pool = new CarrierPool(this, config.threads(), config.maxCompensating());
        this.timer = new TimerQueue(this);
        this.hogMonitor = new HogMonitor(this, config.hogThresholdNanos());
        metricsCall("registering the scheduler's meters", () -> config.metrics().bindScheduler(this));
    }

    // ------------------------------------------------------------------ lifecycle

    /**
     * Starts the threads (idempotent).
     *
     * @throws IllegalStateException if the engine was disposed
     */
    public void init() {
        for (;;) {
            int s = state;
            if (s == RUNNING) {
                return;
            }
            if (s != NEW) {
                throw new IllegalStateException("Initializing a disposed scheduler is not permitted");
            }
            if (STATE.compareAndSet(this, NEW, RUNNING)) {
                timer.start(config.name() + "-timer");
                pool.start();
                hogMonitor.start();
                return;
            }
        }
    }

    /** Stops accepting work and terminates once queued work and one-shot timers are done. */
    public void shutdownGracefully() {
        for (;;) {
            int s = state;
            if (s >= SHUTTING_DOWN) {
                return;
            }
            if (STATE.compareAndSet(this, s, SHUTTING_DOWN)) {
                if (s == NEW) {
                    shutdownNow();
                    return;
                }
                for (TimerEntry e : timer.removeNotAwaited()) {
                    e.shutdownCancelled();
                }
                pool.wakeAll();
                return;
            }
        }
    }

    /** Terminates now: pending work is abandoned (idle actors' tasks are cancelled). */
    public void shutdownNow() {
        for (;;) {
            int s = state;
            if (s == TERMINATED) {
                return;
            }
            if (STATE.compareAndSet(this, s, TERMINATED)) {
                onTerminatedState(s == NEW);
                return;
            }
        }
    }

    private void onTerminatedState(boolean neverStarted) {
        timer.shutdown();
        pool.wakeAll();
        for (SchedulingGroup g : groups.values()) {
            for (ActorCell c : g.cells) {
                c.terminate();
            }
        }
        // the meters go now, not when the last thread exits (after its running task, or a parked carrier's
        // wake-up): a scheduler of the same name built right after dispose() found every id still held by this
        // one, was refused them all, and ran without meters for good once these were removed
        closeMetrics();
        if (neverStarted) {
            terminated.tryEmitEmpty();
        }
    }

    /** Called by idle carriers while shutting down. */
    void checkQuiescence() {
        if (state != SHUTTING_DOWN) {
            return;
        }
        if (timer.owesNothing() && runNext.isEmpty() && runQueue.isQuiescent()) {
            long now = System.nanoTime();
            long since = quiescentSince.get();
            if (since == 0) {
                quiescentSince.compareAndSet(0, now);
            } else if (now - since >= 1_000_000L && !anyHeldWork()
                    && STATE.compareAndSet(this, SHUTTING_DOWN, TERMINATED)) {
                onTerminatedState(false);
            }
        } else {
            quiescentSince.set(0);
        }
    }

    /**
     * Whether a live actor holds work nothing queued shows: one that is not suspended has work a producer
     * claimed and has not written yet ({@link ActorCell#hasClaimedWork()}: that producer signals it only once
     * written, but what was added behind that place was accepted before the shutdown began and must run; a
     * producer descheduled between its claim and its store is enough), or one, suspended or not, waits for
     * the answer of an outside call it must apply ({@link ActorCell#awaitsReply()}: a store's
     * acknowledgement, posted to it when it comes). One walk over the actors, made only when everything else
     * says quiescent, once per poll.
     */
    private boolean anyHeldWork() {
        for (SchedulingGroup g : groups.values()) {
            for (ActorCell c : g.cells) {
                if (!c.isTerminated() && (c.awaitsReply() || (!c.isSuspended() && c.hasClaimedWork()))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Completes {@code sink} of a termination ({@link #onTerminated()}, a group's graceful disposal) so that
     * the code its subscribers chain onto it never runs on this engine's threads: on a carrier, a
     * {@code NonBlocking} thread, it could not block (Reactor's schedulers complete {@code disposeGracefully}
     * on a thread of their own, where it can); on the timer it would delay every timer of the scheduler. From
     * one of them, the completion is handed to a short-lived daemon thread (named
     * {@code reactor-actor-terminated[<scheduler>]}, so not counted among the scheduler's
     * {@code <name>-*} threads); from any other thread it completes there. If no thread can be started (out
     * of memory, a thread limit), it completes inline rather than never.
     *
     * @param sink the termination's sink
     */
    public void completeOffEngineThreads(Sinks.Empty<Void> sink) {
        Thread current = Thread.currentThread();
        boolean own = (current instanceof CarrierThread c && c.engineIs(this)) || timer.isTimerThread();
        if (own) {
            try {
                Thread t = new Thread(sink::tryEmitEmpty, "reactor-actor-terminated[" + config.name() + "]");
                t.setDaemon(true);
                t.setUncaughtExceptionHandler(TaskErrors.UNCAUGHT);
                t.start();
                return;
            } catch (Throwable e) { // OutOfMemoryError "unable to create native thread", a thread limit
                internalError("starting the thread that signals a termination", e);
            }
        }
        sink.tryEmitEmpty();
    }

    /** @return a Mono completing once the engine is terminated and all its threads exited */
    public Mono<Void> onTerminated() {
        return terminated.asMono();
    }

    /** @return whether work is still accepted */
    public boolean isAccepting() {
        return state <= RUNNING;
    }

    /** @return whether dispose (graceful or not) started */
    public boolean isDisposed() {
        return state >= SHUTTING_DOWN;
    }

    boolean isShuttingDown() {
        return state == SHUTTING_DOWN;
    }

    /** @return whether the engine reached its terminal state (its threads may still be exiting) */
    public boolean isStopping() {
        return state == TERMINATED;
    }

    /** @return whether every thread of this engine has exited */
    public boolean isTerminated() {
        return state == TERMINATED && liveThreads.get() == 0;
    }

    void threadStarting() {
        liveThreads.incrementAndGet();
    }

    void carrierExited(CarrierThread c) {
        synchronized (exitedCarrierTasks) {
            // moved from the carrier's slot to the exited sums in one step for the readers (carrierSum):
            // counted once, and never missing (a monotonic counter that drops reads as a reset)
            exitedCarrierTasks.add(c.tasksRun());
            exitedCarrierChains.add(c.chainedTurns);
            exitedCarrierTurns.add(c.turns);
            exitedCarrierPreemptions.add(c.preemptions);
            exitedCarrierClockReads.add(c.clockReads);
            pool.exited(c);
        }
        threadExited();
    }

    void timerExited() {
        threadExited();
    }

    private void threadExited() {
        if (liveThreads.decrementAndGet() == 0 && state == TERMINATED) {
            try {
                drainAbandoned();
                closeMetrics();
            } finally {
                // whatever failed above, the termination is signalled; off this exiting carrier or timer
                completeOffEngineThreads(terminated);
            }
        }
    }

    // ------------------------------------------------------------------ groups and actors

    /**
     * Returns the group named {@code name}, creating it with {@code weight} on first use.
     *
     * @param name   the group's name
     * @param weight its weight, at least 1
     * @return the group
     * @throws IllegalArgumentException if it exists with another weight
     */
    public SchedulingGroup group(String name, int weight) {
        SchedulingGroup g = groups.computeIfAbsent(name, n -> {
            SchedulingGroup created = new SchedulingGroup(n, weight);
            synchronized (metricsLock) {
                if (!metricsClosed) {
                    // a group created once the scheduler terminated gets no meters: nothing would remove them
                    metricsCall("registering a group's meters", () -> config.metrics().bindGroup(this, created));
                }
            }
            return created;
        });
        if (g.weight() != weight) {
            throw new IllegalArgumentException("weight: group '" + name + "' already exists with weight "
                    + g.weight() + ", cannot use weight " + weight);
        }
        return g;
    }

    /** Guards {@link #metricsClosed} against a group binding its meters while the scheduler's close removes them. */
    private final Object metricsLock = new Object();
    private boolean metricsClosed;

    /**
     * What removes the meters of a component built on this scheduler (a ring buffer, a pull consumer), run by
     * {@link #closeMetrics}: those meters go when the scheduler terminates, inside {@code dispose()}, not when the
     * component's actor ends its running turn, so a namesake built on a new scheduler of the same name right
     * after {@code dispose()} finds their ids free. Guarded by {@link #metricsLock}; each closer leaves when its
     * component removed its meters itself, so the set holds only live components.
     */
    private final java.util.Set<Runnable> metricsClosers = new java.util.LinkedHashSet<>();

    /**
     * Registers {@code closer}, which removes a component's meters, to run when the scheduler terminates (its
     * {@code dispose()}, or the end of a graceful disposal); runs it at once if it terminated already.
     * {@code closer} must be idempotent and must not throw (the metrics SPI's contract; a closer that throws
     * anyway is counted as an internal error).
     *
     * @param closer removes the component's meters
     * @return removes the registration (the component removed its meters itself)
     */
    public reactor.core.Disposable onMetricsClose(Runnable closer) {
        synchronized (metricsLock) {
            if (!metricsClosed) {
                metricsClosers.add(closer);
                return () -> {
                    synchronized (metricsLock) {
                        metricsClosers.remove(closer);
                    }
                };
            }
        }
        runCloser(closer);
        return reactor.core.Disposables.disposed();
    }

    private void runCloser(Runnable closer) {
        try {
            closer.run();
        } catch (Throwable e) {
            internalError("removing a component's meters", e);
        }
    }

    /**
     * Held for the whole of {@link #closeMetrics}: it has two callers, {@code dispose()} (through
     * {@link #onTerminatedState}) and the last thread to exit, which race once the state is {@code TERMINATED}; the
     * second must return only once the first has removed every meter, because {@code dispose()} promises its caller
     * they are gone. Taken by nothing else; inside it {@link #metricsLock} and the components' and binding's own
     * locks are taken (never the other way round).
     */
    private final Object metricsClosing = new Object();

    /** Removes the scheduler's meters and its components' (at termination); groups created afterwards bind none. */
    private void closeMetrics() {
        synchronized (metricsClosing) { // a second caller waits until the first is done: see metricsClosing
            Runnable[] closers;
            synchronized (metricsLock) {
                if (metricsClosed) {
                    return;
                }
                metricsClosed = true;
                closers = metricsClosers.toArray(new Runnable[0]);
                metricsClosers.clear();
            }
            for (Runnable closer : closers) {
                runCloser(closer);
            }
            metricsCall("removing the scheduler's meters", () -> config.metrics().close());
        }
    }

    /**
     * A call into the metrics binding. The SPI's contract is that they never throw (the library's Micrometer binding
     * logs a failing registry itself); one that throws anyway is counted as an internal error, so a binding cannot
     * fail a {@code dispose()}, a group's creation or removal, or the scheduler's construction.
     */
    private void metricsCall(String what, Runnable call) {
        try {
            call.run();
        } catch (Throwable e) {
            internalError(what, e);
        }
    }

    /**
     * Forgets a disposed group: it leaves the registry and its meters are removed, so its name can
     * be used by a new group. Idempotent; a newer group of the same name is left alone.
     *
     * @param group the disposed group
     */
    public void removeGroup(SchedulingGroup group) {
        if (groups.remove(group.name(), group)) {
            metricsCall("removing a group's meters", () -> config.metrics().unbindGroup(group));
        }
    }

    /**
     * Puts a retired group back into the registry and binds its meters again (its statistics and
     * virtual time were kept). The caller holds the scheduler's group lock.
     *
     * @param group the retired group
     * @return {@code false} if another group of that name is registered (the group is left out)
     */
    public boolean reattachGroup(SchedulingGroup group) {
        if (groups.putIfAbsent(group.name(), group) != null) {
            return false;
        }
        synchronized (metricsLock) {
            if (!metricsClosed) {
                metricsCall("registering a group's meters", () -> config.metrics().bindGroup(this, group));
            }
        }
        return true;
    }

    /** @return the live groups */
    public Collection<SchedulingGroup> groups() {
        return groups.values();
    }

    void actorCreated(ActorCell cell) {
        actors.incrementAndGet();
    }

    void actorTerminated(ActorCell cell) {
        actors.decrementAndGet();
    }

    void suspendedDelta(int d) {
        suspended.addAndGet(d);
    }

    /**
     * Makes an actor that just became {@code SCHEDULED} runnable: into the calling carrier's run-next
     * slot when it was woken by a task about to end (see {@link RunNext}), else into the run queue,
     * waking a carrier.
     */
    void enqueue(ActorCell cell) {
        Thread t = Thread.currentThread();
        if (t instanceof CarrierThread c && c.engineIs(this) && runNext.tryPlace(c, cell)) {
            return;
        }
        // the ready time is read only by the scheduling-delay metric: no clock read per wake-up without it
        enqueueShared(cell, exactReadyAt ? System.nanoTime() : 0L, true);
    }

    /**
     * Puts a {@code SCHEDULED} actor into the run queue and, if {@code wake}, wakes a carrier if none
     * is looking.
     */
    void enqueueShared(ActorCell cell, long now, boolean wake) {
        Thread t = Thread.currentThread();
        runQueue.enqueue(cell, now,
                t instanceof CarrierThread c && c.engineIs(this) ? c.index() : RunQueue.OUTSIDE);
        if (wake) {
            pool.onWork();
        }
        if (state == TERMINATED && liveThreads.get() == 0) {
            // a late enqueue (its SCHEDULED bit was set just before the actor was terminated) after the
            // last thread's drain: nobody else will ever take it (see drainAbandoned)
            drainAbandoned();
        }
    }

    /**
     * Once terminated and without threads: gives every actor left in the run queue its terminal drain
     * ({@link ActorCell#drainAbandoned}), so pending tasks are cancelled and terminal signals delivered
     * even for actors that were queued, not idle, when the engine stopped (idle ones were drained by
     * {@code terminate()} already). Called by the last thread to exit, and by an enqueue that finds the
     * engine in that state: the enqueue takes its carrier queue's lock (or, from outside the pool, offers
     * to the queue's arrivals: a volatile store) before it reads the thread count (volatile) and the last
     * thread decrements the count before it takes each queue's lock and polls its arrivals (volatile
     * loads), so one of them sees the actor.
     */
    private void drainAbandoned() {
        ActorCell c;
        while ((c = runQueue.take(RunQueue.OUTSIDE, 0L)) != null) {
            try {
                c.drainAbandoned();
            } catch (Throwable t) {
                internalError("draining an actor abandoned by a terminated scheduler", t);
            }
        }
    }

    // ------------------------------------------------------------------ timers

    /**
     * Arms {@code entry} at {@code deadline} ({@code System.nanoTime()} terms).
     *
     * @param entry    what to run
     * @param deadline when
     * @return {@code false} if the timer no longer accepts entries
     */
    public boolean scheduleTimer(TimerEntry entry, long deadline) {
        return timer.schedule(entry, deadline);
    }

    /**
     * Disarms {@code entry}.
     *
     * @param entry an entry armed by {@link #scheduleTimer}
     * @return whether it was still armed
     */
    public boolean cancelTimer(TimerEntry entry) {
        return timer.cancel(entry);
    }

    // ------------------------------------------------------------------ errors and counters

    /**
     * Counts and reports a task failure through Reactor's {@code Schedulers.handleError} (uncaught
     * handler or logger, then {@code Schedulers.onHandleError} hooks); never throws, even when the
     * reporting itself fails (then it is an {@linkplain #internalError internal error}).
     *
     * @param cell the actor whose task failed
     * @param t    the task's error
     * @return {@code true} if the report returned; {@code false} if a handler, hook or logger threw
     *         (a fixed-rate task then stops, as a Reactor periodic task whose error handling throws)
     */
    public boolean taskFailed(ActorCell cell, Throwable t) {
        failedTasks.increment();
        try {
            TaskErrors.report(t);
            return true;
        } catch (Throwable reportFailure) {
            internalError("reporting a failed task of actor '" + cell.path() + "'", reportFailure);
            return false;
        }
    }

    /**
     * Counts an error that reached one of the scheduler's own loops (carriers, timer, hog monitor)
     * and logs the first one; never throws. The loop then goes on: no internal thread dies from a
     * Throwable, whether user code or an allocation failure threw it. Logging is guarded because it
     * can fail again for the same reason (an {@code OutOfMemoryError}, a hostile {@code toString()}).
     *
     * @param where what the loop was doing
     * @param t     the error
     */
    void internalError(String where, Throwable t) {
        internalErrors.increment();
        if (internalErrorLogged || !INTERNAL_ERROR_LOGGED.compareAndSet(this, false, true)) {
            return;
        }
        try {
            LOG.error("[" + config.name() + "] internal error while " + where
                    + "; the thread goes on (further internal errors are only counted: reactor.actor.internal.errors)", t);
        } catch (Throwable loggingFailed) {
            // nothing left to report with; the counter has it
        }
    }

    /** @return errors caught by the scheduler's own loops so far (see {@link #internalError}) */
    public long internalErrors() {
        return internalErrors.sum();
    }

    void timerFailed(Throwable t) {
        internalError("delivering a timer", t);
    }

    void quotaOverrun(ActorCell cell, long nanos) {
        quotaOverruns.increment();
    }

    /**
     * Counts a rejected task and returns the exception to throw (Reactor's rejection type).
     *
     * @return the exception
     */
    public RejectedExecutionException reject() {
        rejectedTasks.increment();
        return Exceptions.failWithRejected();
    }

    /**
     * Counts a rejected task and returns the error to <em>signal</em> to a subscriber ({@code onError}, a
     * {@code Mono}'s error), where {@link #reject()} gives the one to throw from a {@code schedule} call. As Reactor's
     * operators report a rejected task ({@code publishOn} on a disposed scheduler): through
     * {@link reactor.core.publisher.Operators#onRejectedExecution}, so the {@code reactor.onRejectedExecution.local}
     * hook of {@code context} or else {@code Hooks.onOperatorError} applies, and a fresh exception, never Reactor's
     * shared one that {@link #reject()} returns (a subscriber adding a suppressed exception to it would change every
     * later rejection in the JVM).
     *
     * <p>A hook that throws gives its own error, which is returned to be signalled (as a throwing
     * {@code Hooks.onOperatorError} replaces a behaviour's error, {@code ErrorPolicy}): thrown from here, it ended the
     * terminal drain that was to signal it, and the subscriber never got a terminal signal. A JVM-fatal error is
     * thrown.
     *
     * @param context the subscriber's context ({@code Context.empty()} if there is none)
     * @return the error to signal
     */
    public RuntimeException rejectSignal(reactor.util.context.ContextView context) {
        RejectedExecutionException rejected = reject();
        try {
            return reactor.core.publisher.Operators.onRejectedExecution(rejected,
                    reactor.util.context.Context.of(context));
        } catch (Throwable hookFailure) {
            Exceptions.throwIfJvmFatal(hookFailure);
            return Exceptions.propagate(hookFailure);
        }
    }

    /** Counts a rejected task whose caller is told otherwise than by an exception ({@code Actor.tell}'s {@code false}). */
    public void countRejected() {
        rejectedTasks.increment();
    }

    // ------------------------------------------------------------------ accessors

    /** @return the configuration */
    public Config config() {
        return config;
    }

    RunQueue runQueue() {
        return runQueue;
    }

    RunNext runNext() {
        return runNext;
    }

    /**
     * Scheduler-internal counters for benchmarks (how much the shared structures are used), not a
     * stable API.
     *
     * @return {@code [run-queue lock acquisitions, carrier wake-ups, turns chained through a run-next
     *         slot, run-next occupants rescued by another thread, acquisitions of a run-queue lock that is
     *         not the caller's own carrier's (steals, hand-offs from outside; all of them in FIFO order),
     *         turns begun (chained or not), turns cut by a preemption, clock reads by the carriers between
     *         and after tasks]} so far
     */
    public long[] engineCounters() {
        return new long[] {runQueue.lockAcquisitions(), pool.wakeUps(), chainedTurns(), runNext.rescues(),
                runQueue.remoteLockAcquisitions(), carrierSum(exitedCarrierTurns, c -> c.turns),
                carrierSum(exitedCarrierPreemptions, c -> c.preemptions),
                carrierSum(exitedCarrierClockReads, c -> c.clockReads)};
    }

    CarrierPool pool() {
        return pool;
    }

    TimerQueue timer() {
        return timer;
    }

    HogMonitor hogMonitor() {
        return hogMonitor;
    }

    /** @return actors ready to run (not running) */
    public int readyActors() {
        return runQueue.readyCount();
    }

    /** @return live actors */
    public int actors() {
        return actors.get();
    }

    /** @return suspended live actors */
    public int suspendedActors() {
        return suspended.get();
    }

    /** @return tasks that threw */
    public long failedTasks() {
        return failedTasks.sum();
    }

    /** @return tasks rejected because the scheduler, group or worker was disposed */
    public long rejectedTasks() {
        return rejectedTasks.sum();
    }

    /** Counts a message refused because an actor's mailbox was full ({@code tell} returned false). */
    public void countMailboxFull() {
        mailboxFull.increment();
    }

    /** @return messages refused because a mailbox was full */
    public long mailboxFullRejections() {
        return mailboxFull.sum();
    }

    /** @return tasks that alone ran longer than the quota */
    public long quotaOverruns() {
        return quotaOverruns.sum();
    }

    /** @return hogs detected (tasks running far longer than the quota) */
    public long hogsDetected() {
        return hogMonitor.detected();
    }

    /** @return compensating carriers currently running */
    public int compensatingThreads() {
        return pool.compensators();
    }

    /** @return live carriers, permanent and compensating (counted on demand: nothing to maintain per start) */
    public int poolSize() {
        int[] n = {0};
        pool.forEach(c -> n[0]++);
        return n[0];
    }

    /**
     * @return carriers running a task now; approximate (each carrier's opaque task start is read once),
     *         computed on demand so that turns pay nothing for it
     */
    public int activeThreads() {
        int[] n = {0};
        pool.forEach(c -> n[0] += c.taskStartedAt() != 0 ? 1 : 0);
        return n[0];
    }

    /**
     * @return armed timers of delayed and periodic tasks and of the library's actors; the scheduler's
     *         own internal entries (the hog monitor's tick, always armed) are not counted, so 0 means
     *         no user timer is left armed
     */
    public int pendingTimers() {
        return timer.size();
    }

    /** @return turns that came from a run-next slot so far (racy sum of carrier counters) */
    private long chainedTurns() {
        return carrierSum(exitedCarrierChains, c -> c.chainedTurns);
    }

    /** A carrier-confined counter summed over the live carriers (racy reads) plus the exited ones'. */
    private long carrierSum(LongAdder exited, java.util.function.ToLongFunction<CarrierThread> counter) {
        synchronized (exitedCarrierTasks) { // see carrierExited; rare (statistics, meters)
            long[] sum = {exited.sum()};
            pool.forEach(c -> sum[0] += counter.applyAsLong(c));
            return sum[0];
        }
    }

    /** @return tasks run so far (approximate while running) */
    public long tasksRun() {
        return carrierSum(exitedCarrierTasks, CarrierThread::tasksRun);
    }

    /** @return the names of the live threads of this engine (carriers) */
    public List<String> carrierNames() {
        List<String> names = new ArrayList<>();
        pool.forEach(c -> names.add(c.getName()));
        return names;
    }

    /**
     * @param t a thread
     * @return whether {@code t} is one of this engine's carriers
     */
    public boolean isCarrier(Thread t) {
        return pool.isCarrier(t);
    }

    /**
     * @param t a thread
     * @return its slot in this scheduler's pool (0..threads-1 for permanent carriers, higher for
     *         compensating ones), or -1 if it is not a carrier of this scheduler
     */
    public int carrierIndex(Thread t) {
        return pool.isCarrier(t) ? ((CarrierThread) t).index() : -1;
    }

    /**
     * @param t    a thread
     * @param cell an actor
     * @return whether {@code t} is one of this engine's carriers running a turn of {@code cell} (then a
     *         task queued on {@code cell} waits for the one {@code t} is running)
     */
    public boolean isRunning(Thread t, ActorCell cell) {
        return pool.isCarrier(t) && ((CarrierThread) t).currentCell() == cell;
    }
}
