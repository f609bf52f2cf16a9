package io.reactoractor.benchmarks.fairness;

import java.util.Locale;

/** The scenarios of {@link FairnessRunner}; each runs once per peer. */
public enum Scenario {
    /** K saturating heavy actors and one light actor fed open loop. */
    LIGHT("light", "Light actor next to saturating heavy actors"),
    /** Equal-weight groups of 2 and 8 saturating workers. */
    GROUPS_2_8("groups-2-8", "Equal-weight groups of 2 and 8 workers"),
    /** Equal-weight groups of 1, 2, 4 and 8 saturating workers. */
    GROUPS_1_2_4_8("groups-1-2-4-8", "Equal-weight groups of 1, 2, 4 and 8 workers"),
    /** Three groups of saturating workers with weights 1, 2 and 4. */
    WEIGHTED("weighted-1-2-4", "Weighted groups 1:2:4"),
    /** A group of many saturating actors against a group of one. */
    MANY_VS_ONE("many-vs-one", "A group of many actors vs a group of one"),
    /** An actor that runs a burst and sleeps briefly, next to steady heavy actors. */
    GAMER("gamer", "Burst-and-sleep actor gaming the placement rules"),
    /** Short-lived actors created continuously next to long-lived heavy ones, plus the light actor. */
    CHURN("churn", "Churn: short-lived actors next to long-lived heavy ones"),
    /** Tasks submitted to the scheduler from a non-pool thread, next to self-re-scheduling actors. */
    OUTSIDE("outside", "Outside submitter vs self-re-scheduling actors"),
    /** Hot never-ending streams and a light stream, behind Reactor's publishOn or the actor operator. */
    PUBLISH_ON("publish-on", "Hot publishOn streams vs the fair actor operator"),
    /** Issue 9's tenant-scale scenario. */
    TENANT("tenant-scale", "A tenant of 4,096 busy actors next to a tenant holding one light actor");

    // Parameters of the scenarios that are not run options (those are in FairnessRunner.Options).
    static final int[] WEIGHTS = {1, 2, 4};
    static final int WORKERS_PER_WEIGHTED_GROUP = 2;
    static final int GAMER_BURST_TASKS = 4;
    static final long GAMER_SLEEP_NANOS = 1_000_000;
    static final long CHURN_PERIOD_NANOS = 1_000_000;
    static final int CHURN_TASKS_PER_ACTOR = 2;
    static final long CHURN_TASK_NANOS = 500_000;
    static final long OUTSIDE_PERIOD_NANOS = 1_000_000;
    static final int OUTSIDE_BATCH = 10;
    static final long OUTSIDE_WORK_NANOS = 20_000;
    static final int HOT_STREAMS = 2;
    static final long HOT_ITEM_NANOS = 50_000;
    static final int TENANT_BUSY_ACTORS = 4_096;
    static final long TENANT_BUSY_TASK_NANOS = 5_000;

    private final String id;
    private final String title;

    Scenario(String id, String title) {
        this.id = id;
        this.title = title;
    }

    /** @return the name used on the command line and in file names */
    public String id() {
        return id;
    }

    public String title() {
        return title;
    }

    /** @return the equal-weight group sizes of a group scenario, or {@code null} */
    int[] equalGroups() {
        switch (this) {
            case GROUPS_2_8:
                return new int[] {2, 8};
            case GROUPS_1_2_4_8:
                return new int[] {1, 2, 4, 8};
            default:
                return null;
        }
    }

    /** @return the Markdown paragraph that says what the scenario does and what its rows mean */
    String describe(FairnessRunner.Options o) {
        long heavyMs = o.heavyTaskNanos() / 1_000_000;
        String light = String.format(Locale.ROOT, "an outside thread submits a %d µs task to a dedicated light "
                + "worker every %d ms, open loop (it never waits for the previous one); delay = submission to "
                + "task start (HdrHistogram)", o.lightWorkNanos() / 1000, o.lightPeriodNanos() / 1_000_000);
        String heavy = String.format(Locale.ROOT, "%d heavy workers each run %d ms busy tasks that re-schedule "
                + "themselves on their own worker", o.heavyWorkers(), heavyMs);
        switch (this) {
            case LIGHT:
                return "The light actor: " + light + ". Next to it, " + heavy + ", so both threads are "
                        + "saturated (all actors in the default group).";
            case GROUPS_2_8:
            case GROUPS_1_2_4_8:
                return String.format(Locale.ROOT, "Equal-weight groups of saturating workers (%d ms "
                        + "self-re-scheduling tasks); share = the busy time measured by the tasks, summed per "
                        + "group. ActorScheduler: `scheduler.group(name, 1)`; the other peers have no groups, "
                        + "so a group is just the set of workers created for it. Fair: equal shares.", heavyMs);
            case WEIGHTED:
                return String.format(Locale.ROOT, "Three groups of %d saturating workers each, weights 1, 2 "
                        + "and 4 (`scheduler.group(name, weight)`; peers without groups ignore the weights, "
                        + "a group is its set of workers). Fair: shares 1/7, 2/7, 4/7. Jain's index is taken "
                        + "over x_i = share_i / weight_i (1.0 = shares exactly proportional to weights).",
                        WORKERS_PER_WEIGHTED_GROUP);
            case MANY_VS_ONE:
                return String.format(Locale.ROOT, "Two equal-weight groups: one of %,d saturating workers, "
                        + "one of a single saturating worker (%d ms tasks). Fair: 50%% each. Peers without "
                        + "groups share per worker, so the single worker gets about 1/%,d.",
                        o.manyActors(), heavyMs, o.manyActors() + 1);
            case GAMER:
                return String.format(Locale.ROOT, "One actor runs %d busy tasks of %d ms in a row (chained on "
                        + "its worker, so one turn can take them all), then sleeps %d ms (a timer outside the "
                        + "scheduler re-submits it), and again: it asks for %.0f%% of one thread. Next to it %d "
                        + "steady heavy workers (%d ms tasks). Fair share of every actor, the gamer included: "
                        + "1/%d of the busy time (its demand exceeds that). Reported: its share, and its "
                        + "share divided by the fair share (1.00 = fair, above = it gained by sleeping).",
                        GAMER_BURST_TASKS, heavyMs, GAMER_SLEEP_NANOS / 1_000_000,
                        100.0 * GAMER_BURST_TASKS * o.heavyTaskNanos()
                                / (GAMER_BURST_TASKS * o.heavyTaskNanos() + GAMER_SLEEP_NANOS),
                        o.heavyWorkers(), heavyMs, o.heavyWorkers() + 1);
            case CHURN:
                return String.format(Locale.ROOT, "An outside thread creates a new worker every %d ms (open "
                        + "loop); each runs %d busy tasks of %.1f ms one after the other, then disposes "
                        + "itself (together they ask for %.0f%% of one thread). Next to them %s (long-lived), "
                        + "and the light actor: %s. Reported: the long-lived and churn shares of the busy "
                        + "time, the light delay, and the short-lived actors started and finished per second.",
                        CHURN_PERIOD_NANOS / 1_000_000, CHURN_TASKS_PER_ACTOR, CHURN_TASK_NANOS / 1e6,
                        100.0 * CHURN_TASKS_PER_ACTOR * CHURN_TASK_NANOS / CHURN_PERIOD_NANOS, heavy, light);
            case OUTSIDE:
                return String.format(Locale.ROOT, "An outside (non-pool) thread calls `scheduler.schedule(task)` "
                        + "%d times every %d ms (open loop), %d µs tasks (%.0f%% of one thread); next to it %s. "
                        + "Delay = submission to task start. The ActorScheduler and qmq-pq hand such tasks to "
                        + "per-thread lane actors; parallel to a worker chosen round-robin; tpe to its queue.",
                        OUTSIDE_BATCH, OUTSIDE_PERIOD_NANOS / 1_000_000, OUTSIDE_WORK_NANOS / 1000,
                        100.0 * OUTSIDE_BATCH * OUTSIDE_WORK_NANOS / OUTSIDE_PERIOD_NANOS, heavy);
            case PUBLISH_ON:
                return String.format(Locale.ROOT, "%d never-ending hot streams (`Flux.generate`, the "
                        + "subscriber burns %d µs per item) and one light stream (an item every %d ms, pushed "
                        + "by an outside thread into a unicast sink; %d µs per item), each moved onto the "
                        + "scheduler with Reactor's `publishOn(scheduler)` or with "
                        + "`transform(ActorOperators.publishOn(scheduler))` (\"actor-op\", ActorScheduler only). "
                        + "Delay = emission to the light subscriber's start. Reactor's publishOn drain loop is "
                        + "one task that never returns while items keep coming: no scheduler can cut it, so the "
                        + "light stream waits until a thread frees up (\"starved\": none of its items ran). The "
                        + "ActorScheduler's hog detector starts compensating threads instead, so its publishOn "
                        + "series runs on more than the 2 threads the others have.",
                        HOT_STREAMS, HOT_ITEM_NANOS / 1000, o.lightPeriodNanos() / 1_000_000,
                        o.lightWorkNanos() / 1000);
            case TENANT:
                return String.format(Locale.ROOT, "Two equal-weight groups (tenants): one of %,d busy workers, "
                        + "each running %d µs tasks that re-schedule themselves on their own worker, and one "
                        + "holding only the light actor: %s. Reported: the light delay, and the busy tenant's "
                        + "useful CPU (busy time measured by its tasks) as a share of the %d threads, i.e. what "
                        + "per-turn overhead leaves. Peers without groups put the light worker among the %,d "
                        + "others.", TENANT_BUSY_ACTORS, TENANT_BUSY_TASK_NANOS / 1000, light, o.threads(),
                        TENANT_BUSY_ACTORS);
            default:
                throw new AssertionError(this);
        }
    }

    public static Scenario fromId(String id) {
        for (Scenario s : values()) {
            if (s.id.equals(id)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown scenario '" + id + "'");
    }
}
