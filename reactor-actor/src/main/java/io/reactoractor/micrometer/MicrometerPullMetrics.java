package io.reactoractor.micrometer;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.reactoractor.pull.GroupStats;
import io.reactoractor.internal.metrics.PullMetrics;

/**
 * Exports one {@code PullConsumer}'s figures, per {@code (subject, group)} pair (the table is in
 * {@link MicrometerActorMetrics}). Everything but the queue time is read from the pair's stats on
 * scrape.
 */
final class MicrometerPullMetrics implements PullMetrics {

    /** Micrometer has no base unit for these; plural nouns, as its conventions ask. */
    static final String REQUESTS = "requests";

    private final MeterRegistry registry;
    private final String scheduler;
    /**
     * Guarded by {@code this} with {@link #closed}: a bind racing {@link #close()} must not leave meters behind.
     * Meters are registered and removed under the lock too, so whichever of a pair's retirement
     * ({@link #unbindGroup}) and the consumer's or scheduler's end ({@link #close()}) comes second returns only once
     * the first has removed them: both promise their callers the meters are gone.
     */
    private final Map<String, MeterSet> byPair = new HashMap<>();
    private boolean closed;

    MicrometerPullMetrics(MeterRegistry registry, String scheduler) {
        this.registry = registry;
        this.scheduler = scheduler;
    }

    @Override
    public synchronized GroupRecorder bindGroup(String subject, String group, Supplier<GroupStats> stats) {
        if (closed) {
            return GroupRecorder.NONE; // a pair created as its consumer or scheduler went away: nothing would remove them
        }
        // a predecessor's meters would be handed back by the registry (same name and tags) still
        // reading the predecessor's stats: drop them before registering (the consumer unbinds a
        // retiring pair before its successor binds, so this only guards a misuse)
        unbindGroup(subject, group);
        MeterSet meters = new MeterSet(registry, Tags.of("scheduler", scheduler, "subject", subject, "group", group))
                .counter("reactor.actor.pull.requests", REQUESTS, "Pulls received", stats, of(GroupStats::pulls))
                .counter("reactor.actor.pull.timeouts", REQUESTS, "Pulls answered empty at their timeout",
                        stats, of(GroupStats::pullsTimedOut))
                .counter("reactor.actor.pull.expired", REQUESTS, "Pulls that had expired before their turn",
                        stats, of(GroupStats::pullsExpired))
                .counter("reactor.actor.pull.suspends", BaseUnits.EVENTS, "Suspensions for lack of data",
                        stats, of(GroupStats::suspends))
                .counter("reactor.actor.pull.resumes", BaseUnits.EVENTS, "Resumptions by an append, the timer or a command",
                        stats, of(GroupStats::resumes))
                .counter("reactor.actor.pull.delivered", BaseUnits.MESSAGES, "Messages delivered, redeliveries included",
                        stats, of(GroupStats::delivered))
                .counter("reactor.actor.pull.committed", BaseUnits.MESSAGES,
                        "Messages settled (acknowledged, skipped, dead-lettered)", stats, of(GroupStats::acknowledged))
                .counter("reactor.actor.pull.redelivered", BaseUnits.MESSAGES, "Redeliveries",
                        stats, of(GroupStats::redelivered))
                .counter("reactor.actor.pull.dead.lettered", BaseUnits.MESSAGES,
                        "Messages moved to the dead-letter subject", stats, of(GroupStats::deadLettered))
                .gauge("reactor.actor.pull.lag", BaseUnits.MESSAGES, "End offset minus committed offset",
                        stats, of(GroupStats::lag))
                .gauge("reactor.actor.pull.waiting", REQUESTS, "Long polls waiting", stats, of(GroupStats::waitingPulls))
                .gauge("reactor.actor.pull.in.flight", BaseUnits.MESSAGES, "Delivered, not yet acknowledged",
                        stats, of(GroupStats::inFlight));
        Timer queueTime = meters.timer("reactor.actor.pull.queue.time",
                "Time from a pull's submission to its group's actor handling it");
        byPair.put(key(subject, group), meters);
        return nanos -> MeterSet.record(queueTime, nanos);
    }

    @Override
    public synchronized void unbindGroup(String subject, String group) {
        // removed under the lock: a close() racing this returns only once these meters are gone too
        MeterSet meters = byPair.remove(key(subject, group));
        if (meters != null) {
            meters.removeAll();
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (MeterSet meters : byPair.values()) {
            meters.removeAll();
        }
        byPair.clear();
    }

    /** Reads a figure from the pair's current stats (the supplier is what Micrometer holds, weakly). */
    private static ToDoubleFunction<Supplier<GroupStats>> of(ToDoubleFunction<GroupStats> figure) {
        return s -> figure.applyAsDouble(s.get());
    }

    private static String key(String subject, String group) {
        return subject + '\u0000' + group;
    }

    @Override
    public String toString() {
        return "MicrometerPullMetrics[" + scheduler + "]";
    }
}
