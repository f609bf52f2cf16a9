package io.reactoractor.internal.scheduling;

import java.io.IOException;
import java.io.RandomAccessFile;
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
 * <h2>The host's part: the group's charge</h2>
 * Stolen time is what the thread did not run; it is either the host's doing (the thread was runnable and
 * waited for a core) or the task's (it blocked). A group is made good for the host's part only ({@link
 * FairRunQueue#groupCharge}): made good for blocking too, a tenant whose tasks sleep 1 ms on the carriers took
 * 80 % of them and cut a busy tenant's throughput tenfold. On Linux the host's part is the thread's run delay
 * ({@code /proc/thread-self/schedstat}, second field: time spent runnable on a run queue, waiting), read only
 * at the end of a turn found robbed. A robbed turn's host part ({@link #hostStolen}) is its stolen time times
 * the carrier's recent ratio of run delay to stolen time (sums over its robbed turns, each older turn weighing
 * 15/16 of the next; at most 1). A ratio, not the run delay since the previous read turn by turn: measured on
 * a host with two spinning threads, that difference found 87 % of a heavy group's stolen time and 69 % of a
 * light group's to be the host's (run delay accrues between reads, in short turns and between turns, and
 * landed on whichever turn read next), which starved the light group instead of making it good. The ratio
 * treats every group's turns on a carrier alike; over time a carrier's turns are made good for about the run
 * delay the host really imposed on it, so blocking is excused only as far as the host was busy as well.
 * Stolen time that is neither CPU time nor run delay (a hypervisor's steal, blocking) is charged. Without the
 * file (another operating system, a kernel without scheduler statistics) nothing is the host's part and
 * groups are charged whole turns.
 *
 * <p>Carrier-confined. Without a thread CPU clock (the JVM has none, or the {@code java.management} module
 * is absent) the charge stays the wall-clock length.
 */
final class StolenTime implements AutoCloseable {

    /** A turn at least this long (wall clock) is checked for stolen time. */
    static final long LONG_TURN_NANOS = 200_000L;
    /** The oldest a mark may be at a turn's start (wall clock); older ones are renewed. */
    static final long MARK_INTERVAL_NANOS = 1_000_000L;

    /** The carrier thread's CPU time in ns; {@code null} when there is none. */
    private final LongSupplier cpuClock;
    private boolean marked;
    private long wallMark;
    private long cpuMark;

    /** The carrier thread's run delay in ns, negative when it cannot be read; {@code null} when there is none. */
    private final LongSupplier runDelayClock;
    /** The run delay at the last robbed turn's end (or at construction); negative when unknown. */
    private long runDelaySeen;
    /** Of the last {@link #stolen} result, the host's part. */
    private long hostStolen;
    /** Stolen time of the recent robbed turns, each older one weighing 15/16 of the next. */
    private long stolenSum;
    /** Run delay over the same turns (read at their ends), in the same decaying sum. */
    private long runDelaySum;

    /** @param cpuClock the current thread's CPU time in ns, or {@code null} to charge wall-clock lengths */
    StolenTime(LongSupplier cpuClock) {
        this(cpuClock, null);
    }

    /**
     * @param cpuClock      the current thread's CPU time in ns, or {@code null} to charge wall-clock lengths
     * @param runDelayClock the current thread's run delay in ns (negative when a read fails), or {@code null}
     *                      when there is none (no stolen time is then the host's part)
     *                      (closed by {@link #close} if it is {@link AutoCloseable}: the open file)
     */
    StolenTime(LongSupplier cpuClock, LongSupplier runDelayClock) {
        this.cpuClock = cpuClock;
        this.runDelayClock = cpuClock == null ? null : runDelayClock;
        this.runDelaySeen = this.runDelayClock == null ? -1L : this.runDelayClock.getAsLong();
    }

    /**
     * On the carrier thread (its run delay is read from a file of the thread that opens it).
     *
     * @return one for a carrier thread: its CPU clock if the JVM offers one, its run delay if the operating
     *         system tells it; {@link #close} when the carrier exits
     */
    static StolenTime forCarrier() {
        LongSupplier cpu = ThreadCpu.CLOCK;
        SchedStat runDelay = cpu == null ? null : SchedStat.openForCurrentThread();
        return new StolenTime(cpu, runDelay);
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
        hostStolen = 0L;
        long elapsed = end - start;
        if (elapsed < LONG_TURN_NANOS || !marked) {
            return 0L;
        }
        long cpu = cpuClock.getAsLong();
        long stolen = (end - wallMark) - (cpu - cpuMark);
        wallMark = end;
        cpuMark = cpu;
        if (stolen <= 0) {
            return 0L;
        }
        stolen = Math.min(elapsed, stolen);
        if (runDelayClock != null) {
            long delay = runDelayClock.getAsLong();
            if (delay >= 0) {
                if (runDelaySeen >= 0) {
                    // the carrier's recent run delay per stolen nanosecond, in sums that decay by 1/16 per robbed
                    // turn (the class doc: a share, not a per-turn difference, so no group's turns are favoured)
                    stolenSum += stolen - (stolenSum >> 4);
                    runDelaySum += Math.max(0L, delay - runDelaySeen) - (runDelaySum >> 4);
                    hostStolen = runDelaySum >= stolenSum ? stolen
                            : (long) (stolen * ((double) runDelaySum / stolenSum));
                }
                runDelaySeen = delay;
            }
        }
        return stolen;
    }

    /**
     * @return of the last {@link #stolen} result, the part the host took (the thread was runnable and waited
     *         for a core), between {@code 0} and that result; {@code 0} without a run delay clock
     */
    long hostStolen() {
        return hostStolen;
    }

    /** The carrier exits: releases the run delay's file. */
    @Override
    public void close() {
        if (runDelayClock instanceof AutoCloseable resource) {
            try {
                resource.close();
            } catch (Exception ignored) {
                // a read-only procfs file: nothing to lose
            }
        }
    }

    /** The carrier idles (parks): its wall clock runs on without CPU time, which is not stolen time. */
    void idling() {
        marked = false;
    }

    /**
     * The current thread's run delay on Linux: the second field of {@code /proc/thread-self/schedstat} (ns spent
     * runnable, waiting for a core), re-read from the start of the file opened by the thread itself. A
     * {@link RandomAccessFile}, not a {@code FileChannel}: an interrupted carrier must not close it (a
     * {@code FileChannel} is interruptible). Carrier-confined; about as dear as the CPU clock (a seek and a read).
     */
    static final class SchedStat implements LongSupplier, AutoCloseable {
        private final RandomAccessFile file;
        private final byte[] buffer = new byte[96];

        private SchedStat(RandomAccessFile file) {
            this.file = file;
        }

        /** @return the current thread's, or {@code null} when the file is not there or not readable */
        static SchedStat openForCurrentThread() {
            try {
                SchedStat s = new SchedStat(new RandomAccessFile("/proc/thread-self/schedstat", "r"));
                if (s.getAsLong() < 0) {
                    s.close();
                    return null;
                }
                return s;
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) { // not Linux, no statistics, a SecurityException, a blocking-call detector's Error
                return null;
            }
        }

        /** @return the run delay in ns, or {@code -1} when the read or the parse fails */
        @Override
        public long getAsLong() {
            try {
                file.seek(0L);
                int n = file.read(buffer, 0, buffer.length);
                return parseSecondField(buffer, n);
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) { // an I/O error, a blocking-call detector's Error: no value, never a dead carrier
                return -1L;
            }
        }

        /** @return the second space-separated decimal field of {@code bytes[0, n)}, or {@code -1} */
        static long parseSecondField(byte[] bytes, int n) {
            int i = 0;
            while (i < n && bytes[i] != ' ') {
                i++;
            }
            i++;
            long v = 0L;
            int digits = 0;
            while (i < n && bytes[i] >= '0' && bytes[i] <= '9' && digits < 18) {
                v = v * 10 + (bytes[i] - '0');
                i++;
                digits++;
            }
            return digits == 0 ? -1L : v;
        }

        @Override
        public void close() throws IOException {
            file.close();
        }
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
