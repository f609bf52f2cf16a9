package io.reactoractor;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.metrics.MetricsBinding;
import io.reactoractor.internal.scheduling.SchedulerMetrics;
import io.reactoractor.internal.scheduling.SchedulingGroup;
import io.reactoractor.internal.scheduling.TimerEntry;
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
 * <p>Group names may come from clients (a tenant id), so the registry of groups is bounded: a group
 * idle for {@linkplain Builder#groupIdleTimeout the idle timeout} (no actor but idle lanes, no task
 * queued or delayed, no turn run) is <em>retired</em> from the registries and its meters are removed;
 * the application's reference to it stays valid and re-attaches it on its next use, as does
 * {@code group(name, ..)}. {@code group(name, ..)} registering a group (a new one, or a retired one
 * by its name) when {@linkplain Builder#maxGroups maxGroups} are registered first retires groups idle
 * at that moment, then fails with {@link RejectedExecutionException} if that made no room. Only the use
 * of a retired group through a reference the application kept (a task, a worker, an actor created in
 * it) re-attaches it whatever the count, because that must never fail: the registry then holds at most
 * {@code maxGroups} groups plus the retired ones the application keeps and uses, and comes back under
 * the cap as idle groups retire. See {@link ActorGroup} for the lifecycle.
 *
 * <p>What no scheduler can do: the JVM cannot preempt a running task. A task that blocks, or a
 * {@code publishOn} drain loop that never returns while items keep arriving, holds its thread; the
 * scheduler detects such hogs, logs them and starts compensating threads so other actors keep
 * running. Nor does it interrupt a running task when that task, its worker or the scheduler is
 * disposed (Reactor's own schedulers do, through {@code Future.cancel(true)}): a carrier thread is
 * shared by many actors, and an interrupt meant for one task must not reach the next actor's. A
 * disposed running task reports {@code isDisposed()} at once and runs to its end. For the same reason a
 * carrier clears its interrupt flag after each task and before each turn, and drops an interrupt that
 * reaches it while idle (as a {@code ThreadPoolExecutor}'s worker does): a task interrupted while it runs
 * sees the interrupt; the next task never sees one it did not get.
 *
 * <p>Behaviour Reactor's own schedulers define beyond the {@code Scheduler} interface is kept: a
 * task's error goes to {@code Schedulers.handleError} (the carrier's uncaught-exception handler logs it
 * through Reactor's {@code Schedulers} logger, then the {@code onHandleError} hooks); a fixed-rate task
 * keeps its schedule after an error (unless reporting it throws: then it stops, as Reactor's executor
 * stops a run that failed), a period-0 task stops; a delay or initial delay of zero or less
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
    /** The registered (live) groups: looked up without a lock; changed under {@link #groupLock}. */
    private final ConcurrentHashMap<String, ActorGroup> groups = new ConcurrentHashMap<>();
    /**
     * Guards every change of a group's registration: creation, retirement, re-attachment and the
     * removal of a disposed group, and {@link #retired}. Taken rarely: by the retirement sweep, and on
     * a task's path only by the first submission to a retired group (once per group per idle period).
     */
    final Object groupLock = new Object();
    /**
     * Retired groups, by name, held weakly: a retired group the application still references is found
     * (and re-attached) by {@code group(name, ..)}, so a name never has two groups at once; one nobody
     * references is collected, and its entry expunged. Guarded by {@link #groupLock}.
     */
    private final HashMap<String, RetiredGroup> retired = new HashMap<>();
    private final ReferenceQueue<ActorGroup> collected = new ReferenceQueue<>();
    private final long groupIdleTimeoutNanos;
    private final int maxGroups;
    /** The idle-group retirement sweep ({@code null} without a group idle timeout). */
    private final RetirementSweep sweep;
    /**
     * Whether {@link #sweep} is armed: only while a group other than the default one is registered, so an
     * idle scheduler's timer thread does not wake once a second for nothing. Guarded by {@link #groupLock}.
     */
    private boolean sweepArmed;
    private final ActorGroup defaultGroup;

    private ActorScheduler(SchedulerEngine engine, Ordering ordering, ActorMetrics metrics,
            long groupIdleTimeoutNanos, int maxGroups) {
        this.metrics = metrics;
        this.engine = engine;
        this.ordering = ordering;
        this.groupIdleTimeoutNanos = groupIdleTimeoutNanos;
        this.maxGroups = maxGroups;
        this.sweep = groupIdleTimeoutNanos > 0 ? new RetirementSweep() : null;
        this.defaultGroup = group(DEFAULT_GROUP, 1); // never retires: the sweep is armed by the first other group
        // the engine's termination terminates the actors of registered groups; retired groups the
        // application still holds are disposed here, so their idle lanes end as well
        engine.onTerminated().subscribe(null, e -> disposeRetiredGroups(), this::disposeRetiredGroups);
    }

    private void disposeRetiredGroups() {
        List<ActorGroup> held = new ArrayList<>();
        synchronized (groupLock) {
            for (RetiredGroup r : retired.values()) {
                ActorGroup g = r.get();
                if (g != null) {
                    held.add(g);
                }
            }
        }
        for (ActorGroup g : held) {
            g.dispose();
        }
    }

    /** A retired group's entry in {@link #retired}. */
    private static final class RetiredGroup extends WeakReference<ActorGroup> {
        final String name;

        RetiredGroup(ActorGroup g, ReferenceQueue<ActorGroup> q) {
            super(g, q);
            this.name = g.name();
        }
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

    /**
     * The name given to the builder. This method is also {@link Scannable#name()}: through {@code Scannable}
     * the scheduler answers this plain name, where Reactor's schedulers answer their {@code NAME} attribute;
     * {@code scan(Attr.NAME)} and {@link #toString()} give the Reactor-style {@code actor(<threads>,"<name>")}.
     *
     * @return the scheduler's name (threads are named after it)
     */
    @Override
    public String name() {
        return engine.config().name();
    }

    /** @return whether the carrier threads are daemon threads ({@link Builder#daemon(boolean)}) */
    public boolean daemon() {
        return engine.config().daemon();
    }

    /** @return the number of permanent threads */
    public int threads() {
        return engine.config().threads();
    }

    /** @return the quota of a turn */
    public Duration quota() {
        return Duration.ofNanos(engine.config().quotaNanos());
    }

    /** @return the preemption granularity: the minimum slice before a running actor yields (see the builder) */
    public Duration preemptionGranularity() {
        return Duration.ofNanos(engine.config().granularityNanos());
    }

    /** @return the ordering rule */
    public Ordering ordering() {
        return ordering;
    }

    /**
     * Returns the group named {@code name}, creating it with {@code weight} on first use. A larger
     * weight gets a proportionally larger CPU share when groups compete. While a group of that name
     * exists, this returns that same object: registered, or retired after an idle period and still
     * referenced by the application (it is then re-attached). A disposed group leaves the scheduler's
     * registries (and its meters are removed), so the same name then creates a new group; so does the
     * name of a retired group nobody references any more. A group closing gracefully
     * ({@link ActorGroup#disposeGracefully()} under way) has not left yet: until its close ends this returns it,
     * disposed (it rejects new tasks). On a disposed scheduler, also while it closes gracefully, the group it
     * returns is disposed and rejects its tasks, as a worker of a disposed scheduler does; a new one is not
     * registered (it is neither in {@link #groups()} nor in {@link #stats()}).
     *
     * @param name   the group's name: not blank, at most 128 characters, no {@code '/'} or control characters
     *               (it is a metric tag value and part of actor paths)
     * @param weight the weight, at least 1
     * @return the group, a {@link Scheduler} whose workers all belong to it
     * @throws IllegalArgumentException   if the name or weight is invalid, or the group exists with
     *                                    another weight
     * @throws RejectedExecutionException if the group (new, or retired and found by its name) would be one
     *                                    more than {@link Builder#maxGroups} registered groups and retiring
     *                                    idle ones made no room
     */
    public ActorGroup group(String name, int weight) {
        validateGroupName(name);
        if (weight < 1) {
            throw new IllegalArgumentException("weight must be >= 1 but was " + weight);
        }
        ActorGroup g = groups.get(name);
        if (g == null || g.isTerminated()) {
            // at the cap, an idle group to retire is looked for before the lock is taken (see makeRoomLocked)
            ActorGroup idleHint = groups.size() >= maxGroups ? findIdleGroup() : null;
            synchronized (groupLock) {
                g = lookupOrCreateLocked(name, weight, idleHint);
            }
        }
        if (g.weight() != weight) {
            throw new IllegalArgumentException("weight: group '" + name + "' already exists with weight "
                    + g.weight() + ", cannot use weight " + weight);
        }
        return g;
    }

    private ActorGroup lookupOrCreateLocked(String name, int weight, ActorGroup idleHint) {
        expungeCollectedLocked();
        ActorGroup g = groups.get(name);
        if (g != null && g.isTerminated()) {
            forgetLocked(g); // a disposed group is forgotten (its dispose does the same): the name starts anew
            g = null;
        }
        if (g != null) {
            return g;
        }
        RetiredGroup r = retired.get(name);
        ActorGroup old = r != null ? r.get() : null;
        if (old != null && !old.isTerminated()) {
            if (old.weight() != weight) {
                return old; // the caller reports the weight, and the group stays retired
            }
            // by name, as a new group: under the cap. Nothing says the application still holds it (a
            // retired group nobody references stays in the weak map until a collection clears it), so
            // bringing every such name back regardless would leave the registry bounded only by the GC
            if (!engine.isDisposed()) {
                makeRoomLocked(name, idleHint); // a disposed scheduler registers nothing (below): no room needed
            }
            if (reattachLocked(old)) {
                old.dispose(); // the scheduler terminated meanwhile (see reattachLocked); under the lock, rarely
            }
            return old;
        }
        if (!engine.isDisposed()) {
            // a disposed scheduler's group, also while it closes gracefully, is disposed and let go at once
            // (below): at maxGroups it must not be refused for want of room, where no group can retire to make
            // room, but returned disposed as documented. A disposal right after this read finds it registered
            makeRoomLocked(name, idleHint);
        }
        SchedulingGroup sg = engine.group(name, weight);
        g = new ActorGroup(this, engine, sg);
        groups.put(name, g);
        armSweepLocked();
        if (engine.isDisposed()) {
            // created on a disposed scheduler, also one closing gracefully (or as it was disposed: the disposal
            // writes the state, then reads the registered groups): disposed at once, as a worker of a disposed
            // scheduler is (it rejects its tasks), and out of the registries again, so a dead scheduler's
            // stats do not count the groups clients asked for while it closed
            g.dispose();
        }
        return g;
    }

    /** Where the previous search for room stopped (see {@link #makeRoomLocked}); under {@link #groupLock}. */
    private java.util.Iterator<ActorGroup> roomCursor;

    /**
     * Looks through every registered group for one idle now, without {@link #groupLock} (the registry is a
     * concurrent map and {@link ActorGroup#idleNow()} reads volatile state: the answer is a hint, checked again
     * under the lock). Called by {@code group(name, ..)} at the cap only. It stops at the first idle group; when
     * none is, it looks at every one: about 8 ms for 65,536 busy groups on the benchmark machine (cache misses,
     * two or three per group), paid by the refused caller alone, since no lock is held.
     *
     * @return an idle group other than the default one, or {@code null} if none was found
     */
    private ActorGroup findIdleGroup() {
        for (ActorGroup g : groups.values()) {
            if (g != defaultGroup && g.idleNow()) {
                return g;
            }
        }
        return null;
    }

    /**
     * Before {@code group(name, ..)} registers a group: if {@link Builder#maxGroups} are registered,
     * retires groups idle now (their idle timeout not waited for) until one fewer than the cap are, and
     * fails if that was not possible: first {@code idleHint}, the idle group {@link #findIdleGroup} found
     * anywhere in the registry before the lock was taken, if it is still registered and idle; then up to
     * {@value #SWEEP_BATCH} groups from where the previous search stopped (so room is also found when the hint
     * became busy meanwhile, or another group became idle). A refusal therefore means that no registered group
     * was idle when the registry was searched, as {@link #group(String, int)} promises, while {@link #groupLock}
     * (and the sweep, and through it the timer) is held for a bounded time. The search under the lock alone
     * used to be everything, and refused while an idle group lay beyond its {@value #SWEEP_BATCH} groups.
     */
    private void makeRoomLocked(String name, ActorGroup idleHint) {
        if (groups.size() < maxGroups) {
            return;
        }
        if (idleHint != null && groups.get(idleHint.name()) == idleHint && idleHint.idleNow()) {
            idleHint.retireLocked(System.nanoTime());
            if (groups.size() < maxGroups) {
                return;
            }
        }
        long now = System.nanoTime();
        int looked = 0;
        while (groups.size() >= maxGroups && looked < SWEEP_BATCH) {
            if (roomCursor == null || !roomCursor.hasNext()) {
                roomCursor = groups.values().iterator();
                if (!roomCursor.hasNext()) {
                    break;
                }
            }
            ActorGroup g = roomCursor.next();
            looked++;
            if (g != defaultGroup && g.idleNow()) {
                g.retireLocked(now);
            }
        }
        if (groups.size() >= maxGroups) {
            throw new RejectedExecutionException("cannot register group '" + name + "' in scheduler '" + name()
                    + "': " + groups.size() + " groups are registered, the maximum (maxGroups = " + maxGroups
                    + "); none of them was idle when looked at (groups in use, re-attached ones included, count"
                    + " until idle)");
        }
    }

    /**
     * Re-attaches a retired group in use again (its schedule, createWorker, or an actor created in it).
     * Never throws: it runs after a task was accepted, and inside an actor's constructor, where a failure
     * would lose the task's handle or leave a half-built actor counted. It therefore ignores
     * {@link Builder#maxGroups}: an existing group the application uses is let in, over the cap until the
     * next idle group retires. After the scheduler's disposal it does nothing (the task is rejected by
     * the lane, the actor terminated by its creator).
     */
    void reattach(ActorGroup g) {
        boolean terminatedMeanwhile;
        synchronized (groupLock) {
            expungeCollectedLocked();
            terminatedMeanwhile = reattachLocked(g);
        }
        if (terminatedMeanwhile) {
            g.dispose();
        }
    }

    /**
     * Puts a retired group back into the registries, unless the scheduler is disposed.
     *
     * <p>A {@link #dispose()} racing it: {@code shutdownNow} sets the engine's state to terminated and
     * then terminates the actors of the groups in the engine's registry, while the retired groups are
     * disposed by this scheduler from its weak map. A re-attachment that passed the check below, then
     * took the group out of the weak map after that disposal looked, and put it into the engine's
     * registry after the termination went through it, would be missed by both: its idle lanes never
     * terminated, counted in {@link #stats()} of a dead scheduler. So it reads the state again after its
     * write to the engine's registry (a concurrent map: volatile writes and reads), while the termination
     * writes the state before it reads the registry: one of the two sees the other, and the caller
     * disposes the group when this one does.
     *
     * @return whether the engine terminated while the group was re-attached: the caller disposes it,
     *         outside {@link #groupLock}
     */
    private boolean reattachLocked(ActorGroup g) {
        if (!g.isRetired() || g.isTerminated() || engine.isDisposed()) {
            return false;
        }
        forgetRetiredLocked(g);
        g.reattachLocked();
        groups.put(g.name(), g);
        armSweepLocked();
        return engine.isStopping();
    }

    /** Removes {@code g}'s entry from the weak registry, if it is there (a newer group's is left alone). */
    private void forgetRetiredLocked(ActorGroup g) {
        RetiredGroup r = retired.get(g.name());
        if (r != null && r.get() == g) {
            retired.remove(g.name());
        }
    }

    /** Called by a group that retired itself (the lock held): it moves to the weak registry. */
    void retiredLocked(ActorGroup g) {
        groups.remove(g.name(), g);
        retired.put(g.name(), new RetiredGroup(g, collected));
    }

    private void expungeCollectedLocked() {
        java.lang.ref.Reference<? extends ActorGroup> ref;
        while ((ref = collected.poll()) != null) {
            RetiredGroup r = (RetiredGroup) ref;
            retired.remove(r.name, r);
        }
    }

    /** A group other than the default one was registered: the retirement sweep runs (under {@link #groupLock}). */
    private void armSweepLocked() {
        if (sweep != null && !sweepArmed && groups.size() > 1 && !engine.isDisposed()) {
            sweepArmed = true;
            sweep.arm(); // the timer's lock is a leaf: never held while a timer entry fires
        }
    }

    /** @return whether the retirement sweep is armed (for tests) */
    boolean retirementSweepArmed() {
        synchronized (groupLock) {
            return sweepArmed;
        }
    }

    /** Groups one firing of the retirement sweep looks at, at most (the timer thread runs it). */
    static final int SWEEP_BATCH = 1_024;

    /**
     * Retires the groups idle for the idle timeout, on the scheduler's timer. Its period is half the
     * timeout, at least 1 ms and at most 1 s. A firing looks at {@value #SWEEP_BATCH} groups at most,
     * continuing where the previous one stopped, so the timer thread (which also fires every delayed
     * task of the scheduler) and {@link #groupLock} are held for a bounded time (a fraction of a millisecond)
     * whatever the number of groups; with more groups a cycle over all of them takes several periods.
     * A group retires once two looks at it, at least the timeout apart, found it idle and found that no
     * turn ran in between: within the timeout plus two cycles of its last activity. It runs only while a
     * group other than the default one is registered ({@link #sweepArmed}).
     */
    private final class RetirementSweep extends TimerEntry {
        private final long periodNanos = Math.max(1_000_000L, Math.min(1_000_000_000L, groupIdleTimeoutNanos / 2));
        /** Where the previous firing stopped (weakly consistent: groups added or removed meanwhile are fine). */
        private java.util.Iterator<ActorGroup> cursor;

        void arm() {
            engine.scheduleTimer(this, System.nanoTime() + periodNanos);
        }

        @Override
        protected void fire() {
            boolean again = true; // a failed sweep (an allocation failure) leaves the next one armed
            try {
                synchronized (groupLock) {
                    expungeCollectedLocked();
                    long now = System.nanoTime();
                    if (cursor == null || !cursor.hasNext()) {
                        cursor = groups.values().iterator();
                    }
                    for (int n = 0; n < SWEEP_BATCH && cursor.hasNext(); n++) {
                        ActorGroup g = cursor.next();
                        if (g != defaultGroup) {
                            g.sweepLocked(now, groupIdleTimeoutNanos);
                        }
                    }
                    if (groups.size() <= 1) {
                        // only the default group, which never retires: disarmed until another is registered
                        // (armSweepLocked, under this lock: it sees this write, or this sweep saw its group)
                        again = false;
                        sweepArmed = false;
                        cursor = null;
                    }
                }
            } finally {
                if (again && !engine.isDisposed()) {
                    arm();
                }
            }
        }

        @Override
        protected boolean awaitedOnShutdown() {
            return false;
        }

        @Override
        protected boolean internal() {
            return true;
        }
    }

    private static void validateGroupName(String name) {
        io.reactoractor.internal.Internals.checkName(name, 128, true);
    }

    /** Removes a disposed group from every registry (idempotent; a newer group of that name stays). */
    void forget(ActorGroup g) {
        synchronized (groupLock) {
            forgetLocked(g);
        }
    }

    private void forgetLocked(ActorGroup g) {
        engine.removeGroup(g.schedulingGroup());
        groups.remove(g.name(), g);
        forgetRetiredLocked(g);
    }

    /** @return the most groups registered at once ({@link Builder#maxGroups}) */
    public int maxGroups() {
        return maxGroups;
    }

    /** @return how long a group stays idle before it is retired ({@link Builder#groupIdleTimeout}); zero: only at the cap */
    public Duration groupIdleTimeout() {
        return Duration.ofNanos(groupIdleTimeoutNanos);
    }

    /** @return the group of {@link #createWorker()} and direct {@code schedule} calls */
    public ActorGroup defaultGroup() {
        return defaultGroup;
    }

    /**
     * @return the registered groups (the default group included), those that count towards
     *         {@link Builder#maxGroups}: a group closing gracefully ({@link ActorGroup#disposeGracefully()} under
     *         way, disposed: it rejects new tasks) is listed until its close ends, as {@link #stats()} lists it;
     *         retired and disposed ones are not. The list is empty once the scheduler is disposed, gracefully or
     *         not: its groups are disposed with it
     */
    public List<ActorGroup> groups() {
        if (isDisposed()) {
            return List.of(); // the scheduler's disposal disposes every group, though they stay registered
        }
        List<ActorGroup> gs = new ArrayList<>(groups.size());
        for (ActorGroup g : groups.values()) {
            if (!g.isTerminated()) { // a group disposed at once leaves the registry as it terminates
                gs.add(g);
            }
        }
        return List.copyOf(gs);
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
     * Reactor's deprecated way to {@link #init()}. An {@code ActorScheduler} cannot be restarted, so after a
     * disposal this does nothing and the scheduler stays disposed (its tasks are rejected): the behaviour Reactor's
     * own scheduler tests ({@code restartSupport}) expect of a scheduler without restart, which Reactor's
     * {@code Scheduler#start()} Javadoc allows ("some implementations allowed restarting a Scheduler, while others
     * did not"). Use {@link #init()}, which says so with an {@link IllegalStateException}, or build a new one.
     *
     * @deprecated use {@link #init()}, as Reactor's {@code Scheduler#start()} says
     */
    @Override
    @Deprecated
    public void start() {
        startUnlessDisposed(this);
    }

    /** {@link #start()} of the scheduler and of its groups: {@code init()}, or nothing once disposed. */
    static void startUnlessDisposed(Scheduler s) {
        if (!s.isDisposed()) {
            try {
                s.init();
            } catch (IllegalStateException disposedMeanwhile) {
                if (!s.isDisposed()) {
                    throw disposedMeanwhile;
                }
            }
        }
    }

    /**
     * Disposes now: new tasks are rejected, threads exit after their current task, tasks that have
     * not started are abandoned (those of idle workers are cancelled). Its meters are removed before this
     * returns, so a scheduler of the same name on the same registry can be built right away.
     */
    @Override
    public void dispose() {
        engine.shutdownNow();
    }

    /**
     * Lazily disposes gracefully: on subscription new tasks are rejected, periodic tasks are
     * cancelled, queued tasks and one-shot delayed tasks still run; then the threads stop and the
     * returned {@code Mono} completes. Work of suspended workers is not waited for, unless a timer of
     * the library will resume them: a timed suspension ({@code ActorContext.resumeAfter}, the back-off of
     * an {@code ErrorPolicy} or {@code RingErrorPolicy} retry, the back-off after a failing
     * {@code Schedulers.onScheduleHook}) is a one-shot delayed task like the others, so the shutdown waits
     * for it and the work it resumes. New work is what arrives after the disposal began, in every form:
     * tasks, an actor's {@code tell} ({@code false}) and {@code send} and timers
     * ({@code RejectedExecutionException}), new demand to an actor's upstreams (none is granted), an element
     * reaching {@code ActorOperators.publishOn} (rejected, its stream ended after the elements already
     * queued); so traffic that keeps coming does not hold the disposal open. Combine with
     * {@code timeout(..)} and {@link #dispose()} to bound the wait.
     *
     * @return a Mono completing when all threads have stopped, on another thread (as Reactor's schedulers
     *         do): code chained onto it may block
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

    /**
     * @return the registered groups; none once the scheduler terminated (its {@code dispose()}, or the end of a
     *         graceful disposal), as Reactor's schedulers list no workers then: the registry lets its disposed
     *         groups go only as each one's own disposal runs, moments later, and they must not show meanwhile
     */
    @Override
    public Stream<? extends Scannable> inners() {
        if (engine.isStopping()) {
            return Stream.empty();
        }
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
        /** The preemption granularity unless set, or the quota when that is shorter. */
        static final long DEFAULT_GRANULARITY_NANOS = 500_000L;

        /** The longest quota, preemption granularity and hog threshold. */
        static final Duration MAX_DURATION = Duration.ofDays(1);

        private String name = "actor";
        private int threads = Runtime.getRuntime().availableProcessors();
        private Duration quota = Duration.ofMillis(5);
        /** {@code null}: the default, 500 µs or the quota if that is shorter ({@link #build()}). */
        private Duration granularity;
        private Ordering ordering = Ordering.FAIR;
        private Duration hogThreshold;
        private Integer maxCompensating;
        private ActorMetrics metrics = ActorMetrics.NONE;
        private Duration groupIdleTimeout = Duration.ofMinutes(5);
        private int maxGroups = 65_536;
        private boolean daemon = true;

        private Builder() {
        }

        /**
         * @param name thread and metric name prefix; not blank, at most 64 characters, no control characters
         * @return this
         */
        public Builder name(String name) {
            io.reactoractor.internal.Internals.checkName(name, 64, false);
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
         *                    (default 500 µs, or the quota when that is shorter: a short quota alone is a
         *                    valid setting); positive, at most the quota (so at most 1 day)
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
         *                  thread is started, up to {@link #maxCompensatingThreads} at once, during a graceful
         *                  disposal too (its queued work still runs); default 10 × quota; at least the quota,
         *                  at most 1 day when set
         * @return this
         */
        public Builder hogThreshold(Duration threshold) {
            this.hogThreshold = positive("hogThreshold", threshold);
            return this;
        }

        /**
         * Whether the carrier threads (and the compensating ones) are daemon threads, which do not keep
         * the JVM alive. Default {@code true}, as Reactor's shared {@code Schedulers.parallel()}; Reactor's
         * {@code Schedulers.newParallel(name, n)} makes non-daemon threads, which keep the JVM running
         * until the scheduler is disposed ({@link ActorSchedulers} follows the flag of the thread factory
         * Reactor passes). The timer and hog-monitor threads are daemon threads either way: they only
         * serve the carriers.
         *
         * @param daemon {@code false} for threads that keep the JVM alive until {@link ActorScheduler#dispose()}
         * @return this
         */
        public Builder daemon(boolean daemon) {
            this.daemon = daemon;
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

        /**
         * @param groupIdleTimeout how long a group stays registered while idle (no actor but its idle
         *                         lanes, no task queued or delayed, no turn run) before it is retired:
         *                         it leaves the registries and its meters are removed, and is re-attached
         *                         on its next use (default 5 min); zero: only to make room at
         *                         {@link #maxGroups}; at most 1 day
         * @return this
         */
        public Builder groupIdleTimeout(Duration groupIdleTimeout) {
            if (groupIdleTimeout == null || groupIdleTimeout.isNegative()) {
                throw new IllegalArgumentException("groupIdleTimeout must be >= 0 but was " + groupIdleTimeout);
            }
            if (groupIdleTimeout.compareTo(MAX_DURATION) > 0) {
                throw new IllegalArgumentException("groupIdleTimeout must be at most " + MAX_DURATION + " but was "
                        + groupIdleTimeout);
            }
            this.groupIdleTimeout = groupIdleTimeout;
            return this;
        }

        /**
         * @param maxGroups the most groups {@code group(name, ..)} registers at once, the default group
         *                  included (default 65,536, at least 1): at the cap it retires groups idle at
         *                  that moment first (looking through the whole registry if needed: a refusal at
         *                  65,536 busy groups costs its caller about 8 ms, no lock held), and fails with
         *                  {@link RejectedExecutionException} if that made no room; a retired group used
         *                  through a reference the application kept
         *                  is always re-attached (over the cap until idle groups retire)
         * @return this
         */
        public Builder maxGroups(int maxGroups) {
            if (maxGroups < 1) {
                throw new IllegalArgumentException("maxGroups must be >= 1 but was " + maxGroups);
            }
            this.maxGroups = maxGroups;
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
            long granularityNanos = granularity != null ? granularity.toNanos()
                    : Math.min(DEFAULT_GRANULARITY_NANOS, quotaNanos);
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
                    granularityNanos, ordering == Ordering.FAIR, hogNanos, maxComp, schedulerMetrics, daemon));
            ActorScheduler scheduler = new ActorScheduler(engine, ordering, metrics, groupIdleTimeout.toNanos(),
                    maxGroups);
            scheduler.init();
            return scheduler;
        }
    }
}
