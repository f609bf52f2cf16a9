package io.reactoractor.micrometer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.scheduling.SchedulerMetrics;
import io.reactoractor.internal.scheduling.SchedulingGroup;

/**
 * Exports one scheduler's figures (the table is in {@link MicrometerActorMetrics}). Everything but the
 * scheduling delay is read from the engine when the registry is scraped, so the hot path does no
 * metrics work; the delay costs one timer record per turn (not per task).
 */
final class MicrometerSchedulerMetrics implements SchedulerMetrics {

    /** Micrometer has no base unit for these; plural nouns, as its conventions ask. */
    static final String ACTORS = "actors";
    static final String TURNS = "turns";
    static final String ERRORS = "errors";
    static final String SECONDS = "seconds";

    private final MeterRegistry registry;
    private final String scheduler;
    private volatile MeterSet schedulerMeters;
    /**
     * Per-group meters, kept here rather than on the group so the engine carries no metrics state;
     * an entry leaves with its group ({@link #unbindGroup}). Its meters are removed under {@code this}'s lock, by
     * {@link #unbindGroup} and {@link #close()} alike, so whichever comes second returns once they are gone.
     */
    private final Map<SchedulingGroup, GroupMeters> groups = new ConcurrentHashMap<>();

    private record GroupMeters(MeterSet meters, Timer delay) {
    }

    MicrometerSchedulerMetrics(MeterRegistry registry, String scheduler) {
        this.registry = registry;
        this.scheduler = scheduler;
    }

    @Override
    public void bindScheduler(SchedulerEngine e) {
        schedulerMeters = new MeterSet(registry, Tags.of("scheduler", scheduler))
                // the executor.* names of Micrometer's ExecutorServiceMetrics, where they mean the same
                .counter("reactor.actor.completed", BaseUnits.TASKS, "Tasks run, those that threw included",
                        e, SchedulerEngine::tasksRun)
                .gauge("reactor.actor.active", BaseUnits.THREADS, "Threads running a task",
                        e, SchedulerEngine::activeThreads)
                .gauge("reactor.actor.queued", BaseUnits.TASKS, "Tasks and messages waiting in the actors' mailboxes",
                        e, MicrometerSchedulerMetrics::queuedInScheduler)
                .gauge("reactor.actor.pool.size", BaseUnits.THREADS, "Live threads, permanent and compensating",
                        e, SchedulerEngine::poolSize)
                .gauge("reactor.actor.pool.core", BaseUnits.THREADS, "Permanent threads",
                        e, x -> x.config().threads())
                .gauge("reactor.actor.pool.max", BaseUnits.THREADS, "Most threads: permanent plus compensating",
                        e, x -> x.config().threads() + (double) x.config().maxCompensating())
                // the scheduler's own figures
                .gauge("reactor.actor.threads.compensating", BaseUnits.THREADS,
                        "Compensating threads started while hogs run", e, SchedulerEngine::compensatingThreads)
                .gauge("reactor.actor.ready", ACTORS, "Actors waiting in the run queue", e, SchedulerEngine::readyActors)
                .gauge("reactor.actor.actors", ACTORS, "Live actors", e, SchedulerEngine::actors)
                .gauge("reactor.actor.actors.suspended", ACTORS, "Suspended live actors",
                        e, SchedulerEngine::suspendedActors)
                .counter("reactor.actor.failed", BaseUnits.TASKS, "Tasks that threw", e, SchedulerEngine::failedTasks)
                .counter("reactor.actor.rejected", BaseUnits.TASKS,
                        "Tasks rejected because the scheduler, group or worker was disposed",
                        e, SchedulerEngine::rejectedTasks)
                .counter("reactor.actor.quota.overruns", BaseUnits.TASKS, "Tasks that alone ran longer than the quota",
                        e, SchedulerEngine::quotaOverruns)
                .counter("reactor.actor.hogs", BaseUnits.TASKS, "Tasks detected running far longer than the quota",
                        e, SchedulerEngine::hogsDetected)
                .counter("reactor.actor.mailbox.full", BaseUnits.MESSAGES,
                        "Messages refused because an actor's mailbox was full", e, SchedulerEngine::mailboxFullRejections)
                .counter("reactor.actor.internal.errors", ERRORS,
                        "Errors caught by the scheduler's own threads (each thread went on)",
                        e, SchedulerEngine::internalErrors);
    }

    @Override
    public void bindGroup(SchedulerEngine e, SchedulingGroup g) {
        // the counters count from this binding: a group re-attached after an idle retirement (bound again)
        // starts them at zero like any new meter. Reporting its whole past again would make a step
        // registry report it as one step's increase; a cumulative registry sees an ordinary reset
        double cpuAtBind = g.cpuTimeNanos() / 1e9;
        long turnsAtBind = g.turns();
        MeterSet meters = new MeterSet(registry, Tags.of("scheduler", scheduler, "group", g.name()))
                .gauge("reactor.actor.group.queued", BaseUnits.TASKS,
                        "Tasks and messages waiting in the group's mailboxes", g, MicrometerSchedulerMetrics::queuedInGroup)
                .counter("reactor.actor.group.cpu", SECONDS, "run time of the group's turns (wall-clock time on the carriers)",
                        g, x -> x.cpuTimeNanos() / 1e9 - cpuAtBind)
                .counter("reactor.actor.group.turns", TURNS, "Turns run by the group's actors",
                        g, x -> x.turns() - turnsAtBind)
                .gauge("reactor.actor.group.actors", ACTORS, "Live actors of the group", g, SchedulingGroup::actors)
                .gauge("reactor.actor.group.actors.suspended", ACTORS, "Suspended actors of the group",
                        g, MicrometerSchedulerMetrics::suspended);
        Timer delay = meters.timer("reactor.actor.scheduling.delay",
                "Time an actor waited between becoming ready and running");
        GroupMeters previous = groups.put(g, new GroupMeters(meters, delay));
        if (previous != null) {
            previous.meters().removeAll(); // the engine unbinds a group before binding it again; this guards a misuse
        }
    }

    @Override
    public synchronized void unbindGroup(SchedulingGroup g) {
        // removed under the lock: a close() racing a group's disposal returns only once these meters are gone too
        GroupMeters own = groups.remove(g);
        if (own != null) {
            own.meters().removeAll();
        }
    }

    private static double queuedInScheduler(SchedulerEngine e) {
        double sum = 0;
        for (SchedulingGroup g : e.groups()) {
            sum += queuedInGroup(g);
        }
        return sum;
    }

    private static double queuedInGroup(SchedulingGroup g) {
        long[] sum = {0};
        g.forEachCell(c -> sum[0] += c.pendingWork());
        return sum[0];
    }

    private static double suspended(SchedulingGroup g) {
        long[] sum = {0};
        g.forEachCell(c -> sum[0] += c.isSuspended() ? 1 : 0);
        return sum[0];
    }

    @Override
    public boolean recordsSchedulingDelay() {
        return true;
    }

    @Override
    public void schedulingDelay(SchedulingGroup group, long nanos) {
        // one map lookup per turn; a group already unbound (disposed) records nothing
        GroupMeters own = groups.get(group);
        if (own != null) {
            MeterSet.record(own.delay(), nanos);
        }
    }

    @Override
    public synchronized void close() {
        MeterSet own = schedulerMeters;
        if (own != null) {
            own.removeAll();
        }
        for (SchedulingGroup g : java.util.List.copyOf(groups.keySet())) {
            unbindGroup(g);
        }
    }

    @Override
    public String toString() {
        return "MicrometerSchedulerMetrics[" + scheduler + "]";
    }
}
