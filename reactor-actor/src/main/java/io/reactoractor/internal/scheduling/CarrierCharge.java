package io.reactoractor.internal.scheduling;

/**
 * The group charges of a carrier's turns not yet added to their group: carrier-confined, so ending a
 * turn pays no atomic operation on its group's virtual time (a cache line every carrier running that
 * group would otherwise fight over at every turn: with one busy group and short turns that was the
 * hottest line of the engine).
 *
 * <p>Consecutive turns of one group add up here; the sum goes to the group ({@link SchedulingGroup#charge},
 * {@link SchedulingGroup#account}) when a turn of another group ends, when {@value #FLUSH_NANOS} ns of
 * run time have accumulated, and before the carrier takes an actor with an empty hand or idles
 * ({@link #flush}). So another carrier's view of a group's virtual time (the queues' ordering, the
 * lock-free preemption check) misses at most {@value #FLUSH_NANOS} ns of run time per carrier, a bounded
 * and self-correcting error below the granularity (0.5 ms by default); and the group's statistics lag by
 * as much. The carrier's own next pick may favour the group whose charge is still here by as much:
 * also bounded by {@value #FLUSH_NANOS} ns.
 */
final class CarrierCharge {

    /** Run time after which the sum goes to the group even while that group's turns go on. */
    static final long FLUSH_NANOS = 250_000L;

    private SchedulingGroup group;
    /** The run time to charge as virtual time, before the group's weight divides it (0 in FIFO order). */
    private long vtimeNanos;
    private long cpuNanos;
    private long turns;

    /**
     * Adds one turn's charge.
     *
     * @param g          the group of the actor whose turn ended
     * @param vtimeNanos its run time to charge as virtual time ({@code elapsed}; 0 in FIFO order): the group
     *                   divides the sum by its weight ({@link SchedulingGroup#charge}), carrying the rest
     * @param elapsed    its run time
     */
    void add(SchedulingGroup g, long vtimeNanos, long elapsed) {
        if (g != group) {
            flush();
            group = g;
        }
        this.vtimeNanos += vtimeNanos;
        cpuNanos += elapsed;
        turns++;
        if (cpuNanos >= FLUSH_NANOS) {
            flush();
        }
    }

    /**
     * @param g a group
     * @return the run time of {@code g}'s turns summed here and not yet charged to it as virtual time (before its
     *         weight divides it), {@code 0} when the sum is another group's
     */
    long pendingVtimeNanos(SchedulingGroup g) {
        return g == group ? vtimeNanos : 0L;
    }

    /** Hands the sum to its group (two atomic additions and a striped one). */
    void flush() {
        SchedulingGroup g = group;
        if (g == null) {
            return;
        }
        if (vtimeNanos != 0) {
            g.charge(vtimeNanos);
        }
        g.account(cpuNanos, turns);
        group = null;
        vtimeNanos = 0;
        cpuNanos = 0;
        turns = 0;
    }
}
