package io.reactoractor.internal.scheduling;

/**
 * The charges of a carrier's chained turns (run-next hand-offs, {@link RunNext}) not yet added to their
 * group: carrier-confined, so a message exchange that stays on one carrier pays no atomic operation per
 * turn for its group's virtual time and statistics.
 *
 * <p>Consecutive chained turns of one group add up here; the sum goes to the group
 * ({@link SchedulingGroup#charge}, {@link SchedulingGroup#account}) when a turn of another group
 * chains, when {@value #FLUSH_NANOS} ns of run time have accumulated, and before the carrier takes the
 * run queue's lock or idles ({@link #flush}). So another carrier's view of a group's virtual time (its
 * queue's ordering, the lock-free preemption check) misses at most {@value #FLUSH_NANOS} ns of run time
 * per carrier, a bounded and self-correcting error next to the quota (5 ms by default); and the group's
 * statistics lag by as much.
 */
final class ChainCharge {

    /** Run time after which the sum goes to the group even while the chain continues. */
    static final long FLUSH_NANOS = 250_000L;

    private SchedulingGroup group;
    private long weightedVtime;
    private long cpuNanos;
    private long turns;

    /**
     * Adds one chained turn's charge.
     *
     * @param g             the group of the actor whose turn ended
     * @param weightedVtime its virtual-time charge ({@code elapsed / weight}; 0 in FIFO order)
     * @param elapsed       its run time
     */
    void add(SchedulingGroup g, long weightedVtime, long elapsed) {
        if (g != group) {
            flush();
            group = g;
        }
        this.weightedVtime += weightedVtime;
        cpuNanos += elapsed;
        turns++;
        if (cpuNanos >= FLUSH_NANOS) {
            flush();
        }
    }

    /** Hands the sum to its group (two atomic additions and a striped one). */
    void flush() {
        SchedulingGroup g = group;
        if (g == null) {
            return;
        }
        if (weightedVtime != 0) {
            g.charge(weightedVtime);
        }
        g.account(cpuNanos, turns);
        group = null;
        weightedVtime = 0;
        cpuNanos = 0;
        turns = 0;
    }
}
