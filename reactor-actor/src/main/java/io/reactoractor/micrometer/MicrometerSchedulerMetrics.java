package io.reactoractor.metrics;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.reactoractor.scheduling.SchedulerEngine;
import io.reactoractor.scheduling.SchedulerMetrics;
import io.reactoractor.scheduling.SchedulingGroup;

/**
 * Exports an {@code ActorScheduler}'s figures to a Micrometer {@link MeterRegistry}.
 *
 * <table>
 *   <caption>Meters (tags: {@code scheduler}, and {@code group} where noted)</caption>
 *   <tr><th>name</th><th>type</th><th>meaning</th></tr>
 *   <tr><td>reactor.actor.ready</td><td>gauge</td><td>actors waiting in the run queue</td></tr>
 *   <tr><td>reactor.actor.actors</td><td>gauge</td><td>live actors</td></tr>
 *   <tr><td>reactor.actor.actors.suspended</td><td>gauge</td><td>suspended live actors</td></tr>
 *   <tr><td>reactor.actor.threads.compensating</td><td>gauge</td><td>compensating threads running</td></tr>
 *   <tr><td>reactor.actor.tasks.completed</td><td>counter</td><td>tasks run</td></tr>
 *   <tr><td>reactor.actor.tasks.failed</td><td>counter</td><td>tasks that threw</td></tr>
 *   <tr><td>reactor.actor.tasks.rejected</td><td>counter</td><td>tasks rejected after dispose</td></tr>
 *   <tr><td>reactor.actor.quota.overruns</td><td>counter</td><td>tasks that alone ran past the quota</td></tr>
 *   <tr><td>reactor.actor.mailbox.full</td><td>counter</td><td>messages refused by a full mailbox ({@code tell})</td></tr>
 *   <tr><td>reactor.actor.group.mailbox.size</td><td>gauge, group</td><td>messages and tasks waiting in the group's mailboxes</td></tr>
 *   <tr><td>reactor.actor.group.actors.suspended</td><td>gauge, group</td><td>suspended actors of the group</td></tr>
 *   <tr><td>reactor.actor.hogs</td><td>counter</td><td>tasks detected running far past the quota</td></tr>
 *   <tr><td>reactor.actor.group.cpu</td><td>counter (seconds), group</td><td>CPU time of the group's turns</td></tr>
 *   <tr><td>reactor.actor.group.turns</td><td>counter, group</td><td>turns of the group's actors</td></tr>
 *   <tr><td>reactor.actor.group.actors</td><td>gauge, group</td><td>live actors of the group</td></tr>
 *   <tr><td>reactor.actor.scheduling.delay</td><td>timer, group</td><td>ready → running delay per turn</td></tr>
 * </table>
 *
 * <p>Everything but the scheduling delay is read from the engine when the registry is scraped, so
 * the hot path does no metrics work; the delay costs one timer record per turn (not per task).
 */
public final class MicrometerSchedulerMetrics implements SchedulerMetrics {

    private final MeterRegistry registry;
    private final List<Meter> meters = new CopyOnWriteArrayList<>();
    /** Per-group meters, removed with their group ({@link #unbindGroup}). */
    private final java.util.Map<SchedulingGroup, List<Meter>> groupMeters = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile Tags schedulerTags = Tags.empty();

    /** @param registry the registry to export to */
    public MicrometerSchedulerMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void bindScheduler(SchedulerEngine e) {
        Tags tags = Tags.of("scheduler", e.config().name());
        schedulerTags = tags;
        meters.add(Gauge.builder("reactor.actor.ready", e, SchedulerEngine::readyActors)
                .description("Actors waiting in the run queue").tags(tags).register(registry));
        meters.add(Gauge.builder("reactor.actor.actors", e, SchedulerEngine::actors)
                .description("Live actors").tags(tags).register(registry));
        meters.add(Gauge.builder("reactor.actor.actors.suspended", e, SchedulerEngine::suspendedActors)
                .description("Suspended live actors").tags(tags).register(registry));
        meters.add(Gauge.builder("reactor.actor.threads.compensating", e, SchedulerEngine::compensatingThreads)
                .description("Compensating threads started while hogs run").tags(tags).register(registry));
        meters.add(FunctionCounter.builder("reactor.actor.tasks.completed", e, SchedulerEngine::tasksRun)
                .description("Tasks run").tags(tags).register(registry));
        meters.add(FunctionCounter.builder("reactor.actor.tasks.failed", e, SchedulerEngine::failedTasks)
                .description("Tasks that threw").tags(tags).register(registry));
        meters.add(FunctionCounter.builder("reactor.actor.tasks.rejected", e, SchedulerEngine::rejectedTasks)
                .description("Tasks rejected because the scheduler, group or worker was disposed")
                .tags(tags).register(registry));
        meters.add(FunctionCounter.builder("reactor.actor.internal.errors", e, SchedulerEngine::internalErrors)
                .description("Errors caught by the scheduler's own threads (each thread went on)")
                .tags(tags).register(registry));
        meters.add(FunctionCounter.builder("reactor.actor.quota.overruns", e, SchedulerEngine::quotaOverruns)
                .description("Tasks that alone ran longer than the quota").tags(tags).register(registry));
        meters.add(FunctionCounter.builder("reactor.actor.mailbox.full", e, SchedulerEngine::mailboxFullRejections)
                .description("Messages refused because an actor's mailbox was full").tags(tags).register(registry));
        meters.add(FunctionCounter.builder("reactor.actor.hogs", e, SchedulerEngine::hogsDetected)
                .description("Tasks detected running far longer than the quota").tags(tags).register(registry));
    }

    @Override
    public void bindGroup(SchedulerEngine e, SchedulingGroup g) {
        Tags tags = Tags.of("scheduler", e.config().name(), "group", g.name());
        List<Meter> own = new java.util.ArrayList<>();
        own.add(FunctionCounter.builder("reactor.actor.group.cpu", g, x -> x.cpuTimeNanos() / 1e9)
                .description("CPU time used by the group's turns").baseUnit("seconds").tags(tags).register(registry));
        own.add(FunctionCounter.builder("reactor.actor.group.turns", g, SchedulingGroup::turns)
                .description("Turns run by the group's actors").tags(tags).register(registry));
        own.add(Gauge.builder("reactor.actor.group.actors", g, SchedulingGroup::actors)
                .description("Live actors of the group").tags(tags).register(registry));
        own.add(Gauge.builder("reactor.actor.group.mailbox.size", g, MicrometerSchedulerMetrics::mailboxSize)
                .description("Messages and tasks waiting in the group's mailboxes").tags(tags).register(registry));
        own.add(Gauge.builder("reactor.actor.group.actors.suspended", g, MicrometerSchedulerMetrics::suspended)
                .description("Suspended actors of the group").tags(tags).register(registry));
        Timer delay = Timer.builder("reactor.actor.scheduling.delay")
                .description("Time an actor waited between becoming ready and running")
                .tags(tags).register(registry);
        own.add(delay);
        groupMeters.put(g, own);
        g.metricsHandle(delay);
    }

    @Override
    public void unbindGroup(SchedulingGroup g) {
        List<Meter> own = groupMeters.remove(g);
        if (own != null) {
            for (Meter m : own) {
                registry.remove(m);
            }
        }
        g.metricsHandle(null);
    }

    private static double mailboxSize(SchedulingGroup g) {
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
        Object h = group.metricsHandle();
        if (h instanceof Timer) {
            ((Timer) h).record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void close() {
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
        for (SchedulingGroup g : List.copyOf(groupMeters.keySet())) {
            unbindGroup(g);
        }
    }

    @Override
    public String toString() {
        return "MicrometerSchedulerMetrics" + schedulerTags;
    }
}
