package io.reactoractor.internal.scheduling;

import java.util.function.LongSupplier;

/**
 * Tells how much of a long turn its carrier did not run: the operating system gave the core to another
 * thread, the hypervisor to another machine, or the JVM stopped the thread (a safepoint). The actor is not
 * charged that time, but made good for it at most down to its group's floor ({@link FairRunQueue},
 * "charging"): a robbed actor goes to the front of its group's queue, never past it. Its group likewise: charged
 * the turn's CPU time, made good at most up to the floor of the groups.
 *
 * <h2>Why</h2>
 * A turn is charged its wall-clock length (two {@code System.nanoTime()} reads; a thread's CPU clock costs a
 * system call). When the thread is descheduled in the middle of a 100 µs task for 4-8 ms (a busy machine's
 * time slice), the actor is charged 40-80 times its work, and fairness then holds it back until every peer
 * has used as much: with {@code n} equal actors on {@code t} carriers, about {@code n × overcharge / t} of
 * wall time without a turn (1,000 actors, 2 carriers, 8 ms: 4 s), where its fair wait is a few rounds.
 * Long-run shares average out, but the stall is what a user sees.
 *
 * <h2>How</h2>
 * The carrier's thread CPU clock is read rarely: at a mark, which a turn's start sets when the last mark is
 * older than {@value #MARK_INTERVAL_NANOS} ns (or there is none since the carrier idled), and at the end of a
 * turn whose wall-clock length is at least {@value #LONG_TURN_NANOS} ns. Only such a turn can hold much
 * stolen time: a shorter one holds less than its length. For it, the wall time since the mark that was not
 * the thread's CPU time is taken out of its charge, and a new mark is set. So the reads cost one system call
 * per long turn and at most one per {@value #MARK_INTERVAL_NANOS} ns of short ones (under 0.1 % of a carrier).
 *
 * <p>Why the floor bounds the credit (measured, {@code benchmarks/RESULTS.md}): charged only its CPU time,
 * an actor robbed of several milliseconds could fall further behind than a waking light actor is placed
 * (the floor less the sleeper credit), and then ran whole quotas while the light actor, not poorer than it,
 * could not preempt (the light p99 next to hot actor-operator streams went from 0.10 to 2-4 ms). At the
 * floor it is the next to run but no poorer than the group's other ready actors.
 *
 * <p>Time a task spends <em>blocked</em> on a carrier is not CPU time either, so it is made good the same
 * way, down to the floor: blocking on a carrier is a bug (the BlockHound integration reports it, the hog
 * monitor adds a thread for long ones), and a task that blocks gets up to its group's floor of carrier time.
 *
 * <p>Error bounds. Stolen time between the mark and the turn's start (in the short turns before it, at most
 * {@value #MARK_INTERVAL_NANOS} ns of wall time) is taken out of this turn instead of theirs, so a long turn
 * may be undercharged by at most that; a turn shorter than {@value #LONG_TURN_NANOS} ns keeps its stolen
 * time (overcharged by less than its length). An idle carrier (parked: no CPU, wall time goes on) drops its
 * mark, so idling is never taken for stolen time. The charge never goes below zero.
 *
 * <p>Carrier-confined. Without a thread CPU clock (the JVM has none, or the {@code java.management} module
 * is absent) the charge stays the wall-clock length.
 */
final class StolenTime {

    /** A turn at least this long (wall clock) is checked for stolen time. */
    static final long LONG_TURN_NANOS = 200_000L;
    /** The oldest a mark may be at a turn's start (wall clock); older ones are renewed. */
    static final long MARK_INTERVAL_NANOS = 1_000_000L;

    /** The carrier thread's CPU time in ns; {@code null} when there is none. */
    private final LongSupplier cpuClock;
    private boolean marked;
    private long wallMark;
    private long cpuMark;

    /** @param cpuClock the current thread's CPU time in ns, or {@code null} to charge wall-clock lengths */
    StolenTime(LongSupplier cpuClock) {
        this.cpuClock = cpuClock;
    }

    /** @return one for a carrier thread: its CPU clock if the JVM offers one */
    static StolenTime forCarrier() {
        return new StolenTime(ThreadCpu.CLOCK);
    }

    /**
     * A turn starts at {@code start} (wall clock).
     *
     * @param start the turn's start as charged
     */
    void turnStarting(long start) {
        if (cpuClock != null && (!marked || start - wallMark > MARK_INTERVAL_NANOS)) {
            wallMark = start;
            cpuMark = cpuClock.getAsLong();
            marked = true;
        }
    }

    /**
     * The part of a turn not to charge: the time its carrier did not run, for a long turn.
     *
     * @param start the turn's start as charged
     * @param end   its end
     * @return the time taken out of the turn's charge, between {@code 0} and the turn's length ({@code 0} for a
     *         short turn, or without a mark)
     */
    long stolen(long start, long end) {
        long elapsed = end - start;
        if (elapsed < LONG_TURN_NANOS || !marked) {
            return 0L;
        }
        long cpu = cpuClock.getAsLong();
        long stolen = (end - wallMark) - (cpu - cpuMark);
        wallMark = end;
        cpuMark = cpu;
        return stolen <= 0 ? 0L : Math.min(elapsed, stolen);
    }

    /** The carrier idles (parks): its wall clock runs on without CPU time, which is not stolen time. */
    void idling() {
        marked = false;
    }

    /**
     * The JVM's thread CPU clock, looked up in a class of its own so that a missing {@code java.management}
     * module (a jlink image without it) costs the correction only, never the scheduler.
     */
    private static final class ThreadCpu {
        static final LongSupplier CLOCK = lookUp();

        private static LongSupplier lookUp() {
            try {
                java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
                if (!threads.isCurrentThreadCpuTimeSupported()) {
                    return null;
                }
                if (!threads.isThreadCpuTimeEnabled()) {
                    threads.setThreadCpuTimeEnabled(true);
                }
                if (!threads.isThreadCpuTimeEnabled() || threads.getCurrentThreadCpuTime() < 0) {
                    return null;
                }
                return threads::getCurrentThreadCpuTime;
            } catch (LinkageError | RuntimeException e) { // no java.management; SecurityException, Unsupported..
                return null;
            }
        }
    }
}
