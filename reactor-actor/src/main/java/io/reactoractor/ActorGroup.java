package io.reactoractor;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.reactoractor.internal.Internals;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.scheduling.SchedulingGroup;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A group of actors sharing one fair share of an {@link ActorScheduler} (a tenant, a consumer
 * group), usable wherever Reactor expects a {@link Scheduler}.
 *
 * <p>CPU is divided between groups by weight first, then between the actors of a group: a group
 * with 1,000 busy workers gets the same share as a group with one, at equal weight.
 * {@link #createWorker()} creates an actor of this group; {@link #schedule(Runnable)} hands the task
 * to one of the group's <em>lanes</em> (one actor per scheduler thread: the submitting carrier's own
 * lane when a task of this scheduler submits, or the next lane if the own one has more tasks ahead,
 * counting a submitting task of the own lane, which the new task would otherwise wait for;
 * otherwise chosen round-robin, like
 * {@code Schedulers.parallel()} picks a worker), so direct submissions are charged to the group and
 * compete by virtual time like everything else.
 *
 * <h2>Lifecycle</h2>
 * <pre>
 *   state    | event                                   | next
 *   ---------+-----------------------------------------+------------------------------------------------
 *   OPEN     | idle for the scheduler's idle timeout   | RETIRED: out of the registries (groups(), stats,
 *            | (no actor but idle lanes, nothing queued| meters removed); its lanes stay with it, idle
 *            | or delayed, no turn), or idle when a    |
 *            | group is registered at maxGroups        |
 *   RETIRED  | schedule*, createWorker, an actor       | OPEN: registered again with its virtual time and
 *            | created in it                           | statistics (always, over maxGroups if need be)
 *   RETIRED  | group(name, weight)                     | OPEN, the same object (under maxGroups: idle
 *            |                                         | groups retire to make room, or it throws)
 *   RETIRED  | the scheduler terminates                | DISPOSED (if the application still holds it)
 *   RETIRED  | no reference left                       | collected; group(name, ..) then creates a new one
 *   RETIRED  | dispose()                               | DISPOSED
 *   OPEN     | dispose()                               | DISPOSED: every actor of the group terminated
 *            |                                         | (pending tasks cancelled; a running one finishes)
 *   OPEN     | disposeGracefully() subscribed          | CLOSING: new tasks rejected (also new input of
 *            |                                         | its actors and publishOn streams), periodic tasks
 *            |                                         | cancelled; queued and one-shot delayed tasks run
 *   CLOSING  | every actor idle (checked each 1 ms     | DISPOSED, the Mono completes
 *            | on the timer; suspended ones excepted,  |
 *            | unless a library timer will resume them)|
 *   CLOSING  | dispose(), or the scheduler terminates   | DISPOSED, the Mono completes
 *   DISPOSED | (entered)                               | the group leaves the scheduler's registries and
 *            |                                         | its meters are removed; its name may be reused
 * </pre>
 * The parent scheduler keeps running, except for its {@linkplain ActorScheduler#defaultGroup() default
 * group}: that one is the scheduler's own (the scheduler's {@code schedule} and {@code createWorker} use
 * it), so disposing it, forcibly or gracefully, disposes the scheduler the same way.
 * Groups are created, and looked up, by
 * {@link ActorScheduler#group(String, int)}; after disposal that call creates a new group. Once the
 * scheduler is disposed, every group rejects its tasks and its {@link #createWorker()} returns a
 * disposed worker (Reactor's convention); a group asked for then is returned disposed, and a lane
 * created then is disposed at once, so nothing is left counted on the dead scheduler. A retired group
 * re-attached as the scheduler terminates is disposed by whichever of the two sees the other.
 *
 * <p>Retirement is invisible to the group's users: nothing they call fails because of it (re-attaching
 * never does), a task that races it runs (at worst briefly uncounted by the group's meters: a
 * retirement that sees the task undoes itself), and a retired group is the same object when it comes
 * back, so a name never has two groups at once. A re-attached group's meters count from zero again. The races are settled by two handshakes, each a
 * volatile write followed by a volatile read on both sides: an actor created in the group raises the
 * group's actor count and then reads its retirement mark, which the retirement writes before it counts
 * the actors ({@code SchedulingGroup.register}); a task submitted to a lane is published by the lane's
 * signal and then {@link #retired} is read, which the retirement writes before it checks that the
 * lanes are still idle ({@link #retireLocked}).
 */
public final class ActorGroup implements Scheduler, Scannable {

    static {
        Internals.installGroupAccess(new Internals.GroupAccess() {
            @Override
            public SchedulerEngine engine(ActorGroup group) {
                return group.engine;
            }

            @Override
            public SchedulingGroup schedulingGroup(ActorGroup group) {
                group.ensureAttached(); // an actor is about to be created in it
                return group.group;
            }
        });
    }

    private final ActorScheduler scheduler;
    private final SchedulerEngine engine;
    private final SchedulingGroup group;
    private final AtomicLong workerSeq = new AtomicLong();
    private final AtomicInteger roll = new AtomicInteger();
    private final ActorWorker[] lanes;
    /** Workers created by {@link #createWorker()} and not disposed yet (for a graceful shutdown). */
    private final java.util.Set<ActorWorker> workers = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Rejects new work: set by {@code dispose()} and by a graceful shutdown. */
    private volatile boolean disposed;
    /** Every actor terminated and the group forgotten. */
    private volatile boolean terminated;
    private final reactor.core.publisher.Sinks.Empty<Void> onTerminated = reactor.core.publisher.Sinks.empty();
    /** While closing gracefully: the subscription that disposes the group if the scheduler terminates first. */
    private volatile Disposable engineWatch;
    /**
     * Retired: out of the scheduler's registries (see the lifecycle). Written under the scheduler's group
     * lock; read twice on every submission ({@link #ensureAttached}).
     */
    private volatile boolean retired;
    /** What an actor registering in the retired group runs (see {@code SchedulingGroup.register}). */
    private final Runnable reattachOnRegistration = () -> scheduler().reattach(this);
    /** The retirement sweep's record, under the scheduler's group lock: idle since (or {@link #ACTIVE}). */
    private long idleSince = ACTIVE;
    /** The group's turns when the sweep last looked: a change means it ran in between. */
    private long turnsSeen = -1;
    private static final long ACTIVE = Long.MIN_VALUE;

    ActorGroup(ActorScheduler scheduler, SchedulerEngine engine, SchedulingGroup group) {
        this.scheduler = scheduler;
        this.engine = engine;
        this.group = group;
        this.lanes = new ActorWorker[engine.config().threads()];
    }

    /**
     * The group's name. This method is also {@link Scannable#name()}: through {@code Scannable} the group
     * answers this plain name; {@code scan(Attr.NAME)} and {@link #toString()} give the Reactor-style
     * {@code actor(<threads>,"<scheduler>").group("<name>",<weight>)}.
     *
     * @return the group's name
     */
    @Override
    public String name() {
        return group.name();
    }

    /** @return the group's weight (relative CPU share) */
    public int weight() {
        return group.weight();
    }

    /** @return the scheduler this group belongs to */
    public ActorScheduler scheduler() {
        return scheduler;
    }

    /** @return the scheduling group behind this group (reached by the library through {@link Internals}) */
    SchedulingGroup schedulingGroup() {
        return group;
    }

    /** @return the engine running this group's actors (reached by the library through {@link Internals}) */
    SchedulerEngine engine() {
        return engine;
    }

    @Override
    public ActorWorker createWorker() {
        ensureAttached();
        ActorWorker w = new ActorWorker(this, engine, group.name() + "/worker-" + workerSeq.incrementAndGet());
        if (isDisposed()) {
            w.dispose(); // Reactor's convention: a worker of a disposed scheduler rejects its tasks
            return w;
        }
        workers.add(w);
        if (disposed) {
            w.dispose(); // raced a dispose that did not see it
        }
        return w;
    }

    /** A worker of this group was disposed: it no longer counts for a graceful shutdown. */
    void workerDisposed(ActorWorker w) {
        workers.remove(w);
    }

    /** @return whether the group takes new tasks (not disposed, not closing gracefully) */
    boolean isAccepting() {
        return !disposed;
    }

    /** @return whether every actor was terminated and the group left the registries */
    boolean isTerminated() {
        return terminated;
    }

    private ActorWorker lane() {
        // From a carrier of this scheduler: that carrier's own lane, unless it already has tasks waiting
        // and the next lane has fewer. A task a running task submits then usually lands in the mailbox
        // of the lane the carrier is running (or ran last), so it is picked up without a run-queue round
        // trip or a wake-up of the other carrier; but a self-feeding stream (each completion submits the
        // next task, e.g. flatMap(.. subscribeOn(group))) would otherwise keep all its work in one lane,
        // that is on one carrier at a time, while the others idle. From any other thread: round-robin
        // over the lanes, as Schedulers.parallel() picks a worker.
        // A task of the own lane that submits (scheduler.schedule from inside one of its tasks) counts
        // as one more task ahead: its lane cannot start the new task before the submitter returns, so with
        // a submitter that goes on running (a loop, a long computation) the task would wait for all of it
        // on one carrier while another idles, where Reactor's parallel() runs it on the next worker.
        Thread t = Thread.currentThread();
        int c = engine.carrierIndex(t);
        if (c < 0) {
            return laneAt(Math.floorMod(roll.getAndIncrement(), lanes.length));
        }
        int i = c % lanes.length;
        ActorWorker own = laneAt(i);
        if (lanes.length > 1) {
            int ahead = own.pendingTasks() + (engine.isRunning(t, own.cell()) ? 1 : 0);
            if (ahead > 0) {
                ActorWorker next = laneAt((i + 1) % lanes.length);
                if (next.pendingTasks() < ahead) {
                    return next;
                }
            }
        }
        return own;
    }

    private ActorWorker laneAt(int i) {
        ActorWorker w = lanes[i];
        if (w == null) {
            synchronized (lanes) {
                w = lanes[i];
                if (w == null) {
                    w = new ActorWorker(this, engine, group.name() + "/lane-" + (i + 1));
                    if (isDisposed()) {
                        // the group's or the scheduler's disposal: a lane created now takes no task, and
                        // one registered after the scheduler's termination went through its actors would
                        // stay counted forever (the lane registered, then reads the state; the termination
                        // writes the state, then reads the registered actors: one sees the other)
                        w.dispose();
                    }
                    lanes[i] = w;
                }
            }
        }
        return w;
    }

    @Override
    public Disposable schedule(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (disposed) {
            throw engine.reject();
        }
        ensureAttached();
        Disposable d = lane().schedule(task);
        ensureAttached(); // the second read of the handshake
        return d;
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit"); // bad input first, as the scheduler and its workers check it
        if (disposed) {
            throw engine.reject();
        }
        ensureAttached();
        Disposable d = lane().schedule(task, delay, unit);
        ensureAttached(); // the second read of the handshake
        return d;
    }

    @Override
    public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit"); // bad input first, as the scheduler and its workers check it
        if (disposed) {
            throw engine.reject();
        }
        ensureAttached();
        Disposable d = lane().schedulePeriodically(task, initialDelay, period, unit);
        ensureAttached(); // the second read of the handshake
        return d;
    }

    /**
     * A retired group is registered again. Called before a submission or an actor's creation, and again
     * after a submission to a lane: the task was published by the lane's signal (a volatile write, or a
     * fence), so either a retirement that started meanwhile sees the lane busy and is undone, or the read
     * after the submission sees it and re-attaches the group (see {@link #retireLocked}).
     */
    private void ensureAttached() {
        if (retired) {
            scheduler.reattach(this);
        }
    }

    /** @return whether the group is retired (see the lifecycle) */
    boolean isRetired() {
        return retired;
    }

    /**
     * Whether the group may be retired now: open, no actor but its lanes, every lane idle (no task
     * queued or delayed, not scheduled). Racy reads, settled by {@link #retireLocked}'s handshakes.
     */
    boolean idleNow() {
        if (disposed || terminated || retired || !workers.isEmpty()) {
            return false;
        }
        int n = 0;
        for (ActorWorker lane : lanes) {
            if (lane != null) {
                if (!lane.cell().isIdle()) {
                    return false;
                }
                n++;
            }
        }
        return group.actors() == n;
    }

    /**
     * The scheduler's retirement sweep (its group lock held): retires the group once it has been idle,
     * with no turn run, for {@code timeoutNanos}.
     */
    void sweepLocked(long now, long timeoutNanos) {
        long turns = group.turns();
        boolean idle = idleNow();
        if (!idle || turns != turnsSeen) {
            turnsSeen = turns;
            idleSince = idle ? now : ACTIVE;
            return;
        }
        if (idleSince == ACTIVE) {
            idleSince = now;
        } else if (now - idleSince >= timeoutNanos) {
            retireLocked(now);
        }
    }

    /**
     * Retires the group if it is idle (the scheduler's group lock held): the lanes leave the counts, the
     * group leaves the registries (its meters are removed), {@link #retired} is set.
     *
     * <p>Two handshakes make it safe against concurrent use (see the class comment):
     * <ol>
     *   <li>{@code SchedulingGroup.tryRetire} writes the retirement mark, then checks that the group's
     *       actors are exactly its lanes: an actor created concurrently is either counted there (the
     *       retirement is undone) or sees the mark and re-attaches the group, waiting for this lock.</li>
     *   <li>{@link #retired} is written, then the lanes are checked idle again: a task submitted
     *       concurrently is either seen there (the group is re-attached at once) or the submitter reads
     *       {@code retired} after its signal and re-attaches the group ({@link #ensureAttached}).</li>
     * </ol>
     *
     * @return whether it retired
     */
    boolean retireLocked(long now) {
        if (!idleNow()) {
            return false;
        }
        ActorWorker[] ls = lanes.clone();
        int n = 0;
        for (ActorWorker lane : ls) {
            n += lane != null ? 1 : 0;
        }
        if (!group.tryRetire(reattachOnRegistration, n)) {
            return false;
        }
        if (!workers.isEmpty()) {
            group.attached();
            return false;
        }
        for (ActorWorker lane : ls) {
            if (lane != null) {
                lane.cell().detachFromGroup();
            }
        }
        engine.removeGroup(group);
        retired = true;
        scheduler.retiredLocked(this);
        for (ActorWorker lane : ls) {
            if (lane != null && !lane.cell().isIdle()) {
                scheduler.reattach(this); // a task raced the retirement: it stays registered
                return false;
            }
        }
        idleSince = ACTIVE;
        return true;
    }

    /** Registers the retired group again (the scheduler's group lock held; the scheduler's map is its part). */
    void reattachLocked() {
        group.attached();
        engine.reattachGroup(group);
        // not under the lanes' lock: a lane created meanwhile holds it while it registers, and may wait for
        // the scheduler's group lock (held here) to re-attach the group; such a lane counted itself in
        for (ActorWorker lane : lanes) {
            if (lane != null) {
                lane.cell().reattachToGroup();
            }
        }
        retired = false;
        idleSince = ACTIVE;
        turnsSeen = -1;
    }

    /**
     * @return the run time of this group's actors' turns so far, in nanoseconds: the wall-clock time its
     *         carriers spent in those turns (what the fair order charges the group), which includes time the
     *         OS or the JVM took from a carrier during a turn; on a machine with other load it exceeds the
     *         thread CPU time the turns used
     */
    public long cpuTimeNanos() {
        return group.cpuTimeNanos();
    }

    /** @return the number of turns run by this group's actors */
    public long turns() {
        return group.turns();
    }

    /**
     * @return the number of live actors (workers, lanes, library actors) in this group; a retired group
     *         counts none (its idle lanes are out of the counts until it is re-attached)
     */
    public int actors() {
        return group.actors();
    }

    @Override
    public void init() {
        if (disposed) {
            throw new IllegalStateException("Initializing a disposed scheduler is not permitted");
        }
        scheduler.init();
    }

    /**
     * Reactor's deprecated way to {@link #init()}; as {@link ActorScheduler#start()}, it does nothing on a disposed
     * group (or one of a disposed scheduler), which stays disposed: no restart. {@link #init()} throws then.
     *
     * @deprecated use {@link #init()}, as Reactor's {@code Scheduler#start()} says
     */
    @Override
    @Deprecated
    public void start() {
        ActorScheduler.startUnlessDisposed(this);
    }

    @Override
    public void dispose() {
        if (this == scheduler.defaultGroup()) {
            // the default group is the scheduler's own (its schedule and createWorker go here): without it
            // the scheduler would reject everything while not disposed
            scheduler.dispose();
        }
        disposed = true;
        group.close(); // before the walk below: an actor joining from now on terminates itself
        synchronized (lanes) {
            for (ActorWorker lane : lanes) {
                if (lane != null) {
                    lane.dispose();
                }
            }
        }
        for (ActorWorker w : workers) {
            w.dispose();
        }
        scheduler.forEachCell(group, ActorCell::terminate);
        terminated = true;
        scheduler.forget(this);
        engine.completeOffEngineThreads(onTerminated); // a graceful one ends on the timer: not there
        Disposable watch = engineWatch;
        if (watch != null) {
            watch.dispose();
        }
    }

    /**
     * Lazily disposes gracefully, like {@link ActorScheduler#disposeGracefully()} for this group only:
     * on subscription new tasks are rejected and periodic tasks cancelled; tasks already queued and
     * one-shot delayed tasks still run; when every actor of the group is idle the group is disposed and
     * the {@code Mono} completes. Work of suspended workers is not waited for, unless a timer of the library
     * will resume them (a timed suspension: {@code ActorContext.resumeAfter}, an {@code ErrorPolicy} retry's
     * back-off, the back-off after a failing {@code Schedulers.onScheduleHook}) or hand them a task
     * ({@code ActorContext.schedule}): as for the scheduler, that is a one-shot delayed task, so the shutdown
     * waits for it and the work it resumes. New work for the group's actors is refused from the start as the
     * scheduler's graceful disposal refuses it (see there: {@code tell}, {@code send}, timers, upstream demand,
     * {@code ActorOperators.publishOn} elements). Combine with
     * {@code timeout(..)} and {@link #dispose()} to bound the wait.
     *
     * @return a Mono completing when the group is disposed; never on the scheduler's own threads (the
     *         carriers, the timer): code chained onto it may block, and does not hold up the scheduler's
     *         timers
     */
    @Override
    public Mono<Void> disposeGracefully() {
        if (this == scheduler.defaultGroup()) {
            // see dispose(): the default group closes with its scheduler
            return scheduler.disposeGracefully().then(Mono.fromRunnable(this::dispose));
        }
        return Mono.defer(() -> {
            if (!disposed) {
                disposed = true;
                group.startQuiescing(); // before the first check: the turns its actors start are counted
                forEachWorker(ActorWorker::cancelPeriodic);
                new QuiescenceCheck().arm();
                // a scheduler disposed meanwhile drops the check from its timer: the group is then
                // disposed with it, so this Mono completes (as a forced dispose completes Reactor's).
                // dispose() cancels this watch, so a long-lived scheduler keeps none per closed group
                Disposable watch = engine.onTerminated().subscribe(null, e -> dispose(), this::dispose);
                engineWatch = watch;
                if (terminated) {
                    watch.dispose(); // disposed before the watch was stored
                }
            }
            return onTerminated.asMono();
        });
    }

    private void forEachWorker(java.util.function.Consumer<ActorWorker> action) {
        synchronized (lanes) {
            for (ActorWorker lane : lanes) {
                if (lane != null) {
                    action.accept(lane);
                }
            }
        }
        workers.forEach(action);
    }

    /**
     * Whether every actor of the group is idle, or suspended with no timer of the library armed to resume it or
     * hand it a task (nothing left that will run): a timed suspension is a one-shot delayed task, waited for as
     * the scheduler's graceful shutdown waits for it.
     */
    private boolean quiescent() {
        // One walk over the actors is not a snapshot: an actor seen suspended for want of demand can be resumed
        // by a later one's turn (a chain: b requests from a), which then ends and is seen idle, so the walk saw
        // every actor at rest, though never all at once, and the disposal discarded what a still held (found
        // by a black-box probe). So: two walks, with the turns the group's actors started (counted from the
        // start of the close, SchedulingGroup#turnsWhileQuiescing) read before the first and after the second.
        // Every wake-up comes from a turn (the closing group takes no new input from outside). A turn that
        // started before the first read had ended by the time the first walk saw its actor at rest: what it woke
        // is either scheduled when the second walk sees it (not at rest) or started a turn (counted). A turn that
        // started later is counted. So with both walks at rest and the count unchanged, there was a moment
        // between the walks when every actor was at rest, and nothing ran after it.
        long turns = group.turnsWhileQuiescing();
        return atRest() && atRest() && group.turnsWhileQuiescing() == turns;
    }

    /**
     * One walk: every actor idle, or suspended with no timer of the library armed for it and no outside answer
     * awaited ({@code ActorCell.awaitsReply()}: the answer is posted to it, a wake-up from outside the group that
     * the turn count below does not see, so an actor awaiting one is not at rest), and in either case not
     * scheduled (see {@link #quiescent}): an actor that suspended itself in a turn still running (for want of
     * demand) can still wake another as that turn ends (the credits it hands back upstream), so it is at rest only
     * once its carrier let it go; a suspended actor still queued is skipped when taken, which the next check sees.
     */
    private boolean atRest() {
        boolean[] idle = {true};
        scheduler.forEachCell(group, c -> {
            if (!c.isTerminated() && (c.awaitsTimer() || c.awaitsReply() || c.isScheduled()
                    || (!c.isIdle() && !c.isSuspended()))) {
                idle[0] = false;
            }
        });
        return idle[0];
    }

    /** Polls the group's quiescence every millisecond on the scheduler's timer, then disposes it. */
    private final class QuiescenceCheck extends io.reactoractor.internal.scheduling.TimerEntry {
        void arm() {
            if (!engine.scheduleTimer(this, System.nanoTime() + 1_000_000L)) {
                dispose(); // the scheduler stopped: nothing will run any more
            }
        }

        @Override
        protected void fire() {
            if (terminated) {
                return;
            }
            if (quiescent()) {
                dispose();
            } else {
                arm();
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

    @Override
    public boolean isDisposed() {
        return disposed || scheduler.isDisposed();
    }

    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return toString();
        }
        if (key == Attr.PARENT) {
            return scheduler;
        }
        if (key == Attr.TERMINATED || key == Attr.CANCELLED) {
            return isDisposed();
        }
        if (key == Attr.CAPACITY) {
            return scheduler.threads(); // a group's actors may use every carrier when others are idle
        }
        if (key == Attr.BUFFERED) {
            return scheduler.buffered(group);
        }
        return null;
    }

    /**
     * @return the lanes that run this group's direct {@code schedule} calls, as Reactor's parallel
     *         scheduler lists its executors: workers from {@link #createWorker()} are not listed (they
     *         belong to their callers, and Reactor's schedulers do not list theirs either)
     */
    @Override
    public Stream<? extends Scannable> inners() {
        return Stream.of(lanes).filter(Objects::nonNull);
    }

    /**
     * @return {@code actor(<threads>,"<scheduler>").group("<name>",<weight>)}, after the scheduler's
     *         Reactor-style form; also the {@link Scannable.Attr#NAME}
     */
    @Override
    public String toString() {
        return scheduler + ".group(\"" + name() + "\"," + weight() + ")";
    }
}
