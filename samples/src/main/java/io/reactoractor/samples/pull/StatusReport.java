package io.reactoractor.samples.pull;

import java.util.ArrayList;
import java.util.List;

import io.reactoractor.SchedulerStats;
import io.reactoractor.pull.GroupStats;
import io.reactoractor.pull.PullConsumer;

/**
 * The body of {@code GET /status}: one snapshot of the consumer (per subject and group) and of the
 * scheduler (per consumer group CPU time).
 *
 * @param scheduler      the scheduler's figures
 * @param liveGroups     (subject, group) pairs with a live actor now (idle ones retire)
 * @param groups         the live pairs with the largest lag, largest first, at most the request's limit
 * @param consumerGroups one entry per consumer group (scheduler group {@code cg.<group>}), at most the
 *                       request's limit (those that used the most CPU), sorted by name: CPU time and
 *                       its share of the CPU time used by all consumer groups since start
 */
public record StatusReport(SchedulerView scheduler, int liveGroups, List<GroupView> groups,
        List<ConsumerGroupCpu> consumerGroups) {

    /**
     * @param name            the scheduler's name
     * @param threads         carrier threads
     * @param actors          live actors
     * @param suspendedActors of those, suspended (e.g. group actors waiting for data)
     * @param readyActors     actors waiting for a thread now
     * @param tasksRun        tasks run so far
     * @param failedTasks     tasks that threw
     */
    public record SchedulerView(String name, int threads, int actors, int suspendedActors, int readyActors,
            long tasksRun, long failedTasks) {
    }

    /**
     * One consumer group on one subject.
     *
     * @param subject                the subject
     * @param group                  the consumer group
     * @param endOffset              the subject's next offset
     * @param committedOffset        everything before it is acknowledged by the group
     * @param lag                    messages not yet acknowledged by the group
     * @param waitingPulls           long polls waiting now
     * @param inFlight               messages delivered and not acknowledged
     * @param suspended              whether the group's actor is suspended (waiting for data)
     * @param meanPullQueueTimeMicros mean time a pull waited in the actor's mailbox
     * @param counters               the group's counters since start
     */
    public record GroupView(String subject, String group, long endOffset, long committedOffset, long lag,
            int waitingPulls, int inFlight, boolean suspended, double meanPullQueueTimeMicros, Counters counters) {
    }

    /**
     * Counters of one (subject, group), see {@link GroupStats}.
     *
     * @param pulls         pulls received
     * @param pullsTimedOut answered empty at their timeout
     * @param pullsExpired  of those, expired before the actor saw them
     * @param suspends      times the actor suspended for lack of data
     * @param resumes       times it was resumed
     * @param delivered     messages delivered (redeliveries included)
     * @param acknowledged  messages settled
     * @param redelivered   redeliveries
     * @param skipped       skipped by the failure policy
     * @param deadLettered  moved to the dead-letter subject
     * @param evicted       dropped by retention before the group read them
     */
    public record Counters(long pulls, long pullsTimedOut, long pullsExpired, long suspends, long resumes,
            long delivered, long acknowledged, long redelivered, long skipped, long deadLettered, long evicted) {
    }

    /**
     * CPU time of one consumer group's actors.
     *
     * @param group           the consumer group
     * @param schedulingGroup its scheduler group ({@code cg.<group>})
     * @param actors          its live actors (one per subject it consumes)
     * @param turns           turns its actors ran
     * @param cpuTimeNanos    measured run time of those turns
     * @param cpuShare        {@code cpuTimeNanos} / the sum over all consumer groups, 0..1 (0 while none ran)
     */
    public record ConsumerGroupCpu(String group, String schedulingGroup, int actors, long turns, long cpuTimeNanos,
            double cpuShare) {
    }

    /**
     * @param consumer the consumer (its scheduler gives the CPU figures)
     * @param limit    how many (subject, group) pairs at most: those with the largest lag
     * @return a snapshot
     */
    public static StatusReport of(PullConsumer consumer, int limit) {
        SchedulerStats s = consumer.scheduler().stats();
        SchedulerView scheduler = new SchedulerView(s.name(), s.threads(), s.actors(), s.suspendedActors(),
                s.readyActors(), s.tasksRun(), s.failedTasks());
        List<GroupView> groups = new ArrayList<>();
        for (GroupStats g : consumer.stats(limit)) {
            groups.add(new GroupView(g.subject(), g.group(), g.endOffset(), g.committedOffset(), g.lag(),
                    g.waitingPulls(), g.inFlight(), g.suspended(), g.meanPullQueueTimeNanos() / 1000.0,
                    new Counters(g.pulls(), g.pullsTimedOut(), g.pullsExpired(), g.suspends(), g.resumes(),
                            g.delivered(), g.acknowledged(), g.redelivered(), g.skipped(), g.deadLettered(),
                            g.evicted())));
        }
        List<ConsumerGroupCpu> cpu = cpuShares(s);
        if (cpu.size() > limit) {
            // bounded like the pairs: the consumer groups that used the most CPU, still by name
            cpu = new ArrayList<>(cpu);
            cpu.sort((a, b) -> Long.compare(b.cpuTimeNanos(), a.cpuTimeNanos()));
            cpu = new ArrayList<>(cpu.subList(0, limit));
            cpu.sort((a, b) -> a.group().compareTo(b.group()));
        }
        return new StatusReport(scheduler, consumer.liveGroups(), groups, cpu);
    }

    /**
     * Per consumer group CPU share: each {@code cg.*} scheduler group's CPU time over the sum of all of
     * them. Other scheduler groups (the default group) are left out: they run no consumer group.
     *
     * @param stats a scheduler snapshot
     * @return one entry per consumer group, sorted by group name
     */
    public static List<ConsumerGroupCpu> cpuShares(SchedulerStats stats) {
        String prefix = PullConsumer.SCHEDULING_GROUP_PREFIX;
        long total = 0;
        for (SchedulerStats.GroupStats g : stats.groups()) {
            if (g.name().startsWith(prefix)) {
                total += g.cpuTimeNanos();
            }
        }
        List<ConsumerGroupCpu> out = new ArrayList<>();
        for (SchedulerStats.GroupStats g : stats.groups()) {
            if (g.name().startsWith(prefix)) {
                double share = total == 0 ? 0.0 : (double) g.cpuTimeNanos() / total;
                out.add(new ConsumerGroupCpu(g.name().substring(prefix.length()), g.name(), g.actors(), g.turns(),
                        g.cpuTimeNanos(), share));
            }
        }
        out.sort((a, b) -> a.group().compareTo(b.group()));
        return out;
    }
}
