package io.reactoractor;

import java.util.List;

/**
 * A snapshot of an {@link ActorScheduler}'s counters, for tests, status pages and logs (the same
 * figures are exported when the builder was given {@link ActorScheduler.Builder#metrics metrics}).
 *
 * @param name                the scheduler's name
 * @param threads             permanent carrier threads
 * @param compensatingThreads compensating threads running now (started while hogs run)
 * @param readyActors         actors waiting in the run queue
 * @param actors              live actors (workers, lanes, library actors) of the registered groups
 * @param suspendedActors     live actors currently suspended
 * @param tasksRun            tasks run so far
 * @param failedTasks         tasks that threw
 * @param rejectedTasks       tasks rejected because their scheduler, group or worker was disposed
 * @param quotaOverruns       tasks that alone ran longer than the quota
 * @param hogsDetected        tasks detected running far longer than the quota
 * @param internalErrors      errors caught by the scheduler's own threads (carrier loop, timer, hog
 *                            monitor, or a failed report of a task's error): each thread went on; the
 *                            first one is logged, all are counted
 * @param groups              per-group figures of the registered groups (retired ones are not; a disposed
 *                            scheduler's stats keep its groups' last figures, though
 *                            {@link ActorScheduler#groups()} lists none of them any more)
 */
public record SchedulerStats(String name, int threads, int compensatingThreads, int readyActors, int actors,
        int suspendedActors, long tasksRun, long failedTasks, long rejectedTasks, long quotaOverruns,
        long hogsDetected, long internalErrors, List<GroupStats> groups) {

    /**
     * Figures of one group.
     *
     * @param name         the group's name
     * @param weight       its weight
     * @param actors       its live actors
     * @param cpuTimeNanos measured run time of its turns (wall-clock time on the carriers, as
     *                     {@code ActorGroup.cpuTimeNanos()}: more than thread CPU time on a loaded machine)
     * @param turns        turns run
     */
    public record GroupStats(String name, int weight, int actors, long cpuTimeNanos, long turns) {
    }

    /**
     * Creates a snapshot; the group list is copied.
     *
     * @param name                the scheduler's name
     * @param threads             permanent carrier threads
     * @param compensatingThreads compensating threads running now
     * @param readyActors         actors waiting in the run queue
     * @param actors              live actors
     * @param suspendedActors     live actors currently suspended
     * @param tasksRun            tasks run so far
     * @param failedTasks         tasks that threw
     * @param rejectedTasks       tasks rejected after a dispose
     * @param quotaOverruns       tasks that alone ran longer than the quota
     * @param hogsDetected        tasks detected running far longer than the quota
     * @param internalErrors      errors caught by the scheduler's own threads
     * @param groups              per-group figures
     */
    public SchedulerStats {
        groups = List.copyOf(groups);
    }

    /**
     * @param group a group name
     * @return the figures of that group, or {@code null}
     */
    public GroupStats group(String group) {
        for (GroupStats g : groups) {
            if (g.name().equals(group)) {
                return g;
            }
        }
        return null;
    }
}
