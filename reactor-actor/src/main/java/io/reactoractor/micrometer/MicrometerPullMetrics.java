package io.reactoractor.metrics;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.reactoractor.pull.GroupStats;
import io.reactoractor.pull.PullMetrics;

/**
 * Exports a {@code PullConsumer}'s figures to Micrometer, tagged {@code scheduler}, {@code subject}
 * and {@code group}.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>meaning</th></tr>
 *   <tr><td>reactor.actor.pull.queue.time</td><td>timer</td><td>pull submitted → handled by the group's actor</td></tr>
 *   <tr><td>reactor.actor.pull.requests</td><td>counter</td><td>pulls received</td></tr>
 *   <tr><td>reactor.actor.pull.timeouts</td><td>counter</td><td>pulls answered empty at their timeout</td></tr>
 *   <tr><td>reactor.actor.pull.expired</td><td>counter</td><td>pulls that had expired before their turn</td></tr>
 *   <tr><td>reactor.actor.pull.suspends</td><td>counter</td><td>suspensions for lack of data</td></tr>
 *   <tr><td>reactor.actor.pull.resumes</td><td>counter</td><td>resumptions (append, timer, command)</td></tr>
 *   <tr><td>reactor.actor.pull.delivered</td><td>counter</td><td>messages delivered (with redeliveries)</td></tr>
 *   <tr><td>reactor.actor.pull.committed</td><td>counter</td><td>messages settled (acknowledged, skipped, dead-lettered)</td></tr>
 *   <tr><td>reactor.actor.pull.redelivered</td><td>counter</td><td>redeliveries</td></tr>
 *   <tr><td>reactor.actor.pull.dead.lettered</td><td>counter</td><td>messages moved to the dead-letter subject</td></tr>
 *   <tr><td>reactor.actor.pull.lag</td><td>gauge</td><td>end offset − committed offset</td></tr>
 *   <tr><td>reactor.actor.pull.waiting</td><td>gauge</td><td>long polls waiting</td></tr>
 *   <tr><td>reactor.actor.pull.in.flight</td><td>gauge</td><td>delivered, not yet acknowledged</td></tr>
 * </table>
 */
public final class MicrometerPullMetrics implements PullMetrics {

    private final MeterRegistry registry;
    private final String scheduler;
    private final Map<String, List<Meter>> byGroup = new ConcurrentHashMap<>();

    /**
     * @param registry  the registry
     * @param scheduler the scheduler's name (tag)
     */
    public MicrometerPullMetrics(MeterRegistry registry, String scheduler) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    }

    @Override
    public GroupRecorder bindGroup(String subject, String group, Supplier<GroupStats> stats) {
        Tags tags = Tags.of("scheduler", scheduler, "subject", subject, "group", group);
        List<Meter> meters = new CopyOnWriteArrayList<>();
        counter(meters, "reactor.actor.pull.requests", "Pulls received", tags, stats, GroupStats::pulls);
        counter(meters, "reactor.actor.pull.timeouts", "Pulls answered empty at their timeout", tags, stats,
                GroupStats::pullsTimedOut);
        counter(meters, "reactor.actor.pull.expired", "Pulls that had expired before their turn", tags, stats,
                GroupStats::pullsExpired);
        counter(meters, "reactor.actor.pull.suspends", "Suspensions for lack of data", tags, stats,
                GroupStats::suspends);
        counter(meters, "reactor.actor.pull.resumes", "Resumptions by an append, the timer or a command", tags,
                stats, GroupStats::resumes);
        counter(meters, "reactor.actor.pull.delivered", "Messages delivered, redeliveries included", tags, stats,
                GroupStats::delivered);
        counter(meters, "reactor.actor.pull.committed", "Messages settled (acknowledged, skipped, dead-lettered)",
                tags, stats, GroupStats::acknowledged);
        counter(meters, "reactor.actor.pull.redelivered", "Redeliveries", tags, stats, GroupStats::redelivered);
        counter(meters, "reactor.actor.pull.dead.lettered", "Messages moved to the dead-letter subject", tags,
                stats, GroupStats::deadLettered);
        gauge(meters, "reactor.actor.pull.lag", "End offset minus committed offset", tags, stats, GroupStats::lag);
        gauge(meters, "reactor.actor.pull.waiting", "Long polls waiting", tags, stats, GroupStats::waitingPulls);
        gauge(meters, "reactor.actor.pull.in.flight", "Delivered, not yet acknowledged", tags, stats,
                GroupStats::inFlight);
        Timer queueTime = Timer.builder("reactor.actor.pull.queue.time")
                .description("Time from a pull's submission to its group's actor handling it")
                .tags(tags).register(registry);
        meters.add(queueTime);
        List<Meter> previous = byGroup.put(key(subject, group), meters);
        if (previous != null) {
            remove(previous, meters);
        }
        return nanos -> queueTime.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void unbindGroup(String subject, String group) {
        List<Meter> meters = byGroup.remove(key(subject, group));
        if (meters != null) {
            remove(meters, List.of());
        }
    }

    private void remove(List<Meter> meters, List<Meter> keep) {
        for (Meter m : meters) {
            if (!keep.contains(m)) {
                registry.remove(m);
            }
        }
    }

    private static String key(String subject, String group) {
        return subject + '\u0000' + group;
    }

    private void counter(List<Meter> meters, String name, String description, Tags tags, Supplier<GroupStats> stats,
            ToDoubleFunction<GroupStats> f) {
        meters.add(FunctionCounter.builder(name, stats, s -> f.applyAsDouble(s.get()))
                .description(description).tags(tags).register(registry));
    }

    private void gauge(List<Meter> meters, String name, String description, Tags tags, Supplier<GroupStats> stats,
            ToDoubleFunction<GroupStats> f) {
        meters.add(Gauge.builder(name, stats, s -> f.applyAsDouble(s.get()))
                .description(description).tags(tags).register(registry));
    }
}
