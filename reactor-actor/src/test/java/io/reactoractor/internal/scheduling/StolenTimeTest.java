package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * {@link StolenTime} against a fake thread CPU clock: a long turn is charged its CPU time, not the wall time
 * the carrier did not run (a busy machine's time slice charged a 100 µs task 8 ms, and its actor then waited
 * seconds for its next turn among 1,000 peers); short turns, idling and a missing clock keep wall-clock charges.
 */
class StolenTimeTest {

    private static final long US = 1_000L;
    private static final long MS = 1_000_000L;

    private final AtomicLong cpu = new AtomicLong(7 * MS);
    private final StolenTime stolen = new StolenTime(cpu::get);

    @Test
    void aLongTurnIsChargedWhatItsCarrierRanNotTheTimeTheSystemTookAway() {
        long start = 1_000 * MS;
        stolen.turnStarting(start);
        cpu.addAndGet(100 * US); // 100 µs of work in an 8 ms turn: descheduled for the rest
        assertEquals(100 * US, charge(stolen, start, start + 8 * MS));
    }

    @Test
    void aTurnThatRanAllAlongIsChargedInFull() {
        long start = 1_000 * MS;
        stolen.turnStarting(start);
        cpu.addAndGet(5 * MS);
        assertEquals(5 * MS, charge(stolen, start, start + 5 * MS));
        // the next turn starts where that one ended: the mark set at its end serves
        cpu.addAndGet(300 * US);
        stolen.turnStarting(start + 5 * MS);
        assertEquals(300 * US, charge(stolen, start + 5 * MS, start + 5 * MS + 300 * US));
    }

    @Test
    void aShortTurnKeepsItsWallClockCharge() {
        long start = 1_000 * MS;
        stolen.turnStarting(start);
        cpu.addAndGet(10 * US);
        long before = cpu.get();
        assertEquals(150 * US, charge(stolen, start, start + 150 * US), "shorter than the threshold: not checked");
        assertEquals(before, cpu.get());
    }

    @Test
    void timeStolenFromShortTurnsSinceTheMarkIsBoundedByTheMarkInterval() {
        long t = 1_000 * MS;
        stolen.turnStarting(t);
        // short turns for 0.9 ms, 100 µs of it stolen; then a long turn of 1 ms, all of it run
        for (int i = 0; i < 9; i++) {
            cpu.addAndGet(i == 0 ? 0 : 100 * US);
            stolen.turnStarting(t);
            assertEquals(100 * US, charge(stolen, t, t + 100 * US));
            t += 100 * US;
        }
        stolen.turnStarting(t); // the mark is 0.9 ms old: kept
        cpu.addAndGet(MS);
        long charged = charge(stolen, t, t + MS);
        assertEquals(MS - 100 * US, charged, "the short turns' stolen 100 µs is taken from this one");
        assertTrue(MS - charged <= StolenTime.MARK_INTERVAL_NANOS);
        // a mark older than the interval is renewed at the next turn's start
        t += MS;
        stolen.turnStarting(t + 2 * MS); // after 2 ms without a turn (spinning, not parked)
        cpu.addAndGet(400 * US);
        assertEquals(400 * US, charge(stolen, t + 2 * MS, t + 2 * MS + 400 * US));
    }

    @Test
    void idlingIsNotStolenTime() {
        long start = 1_000 * MS;
        stolen.turnStarting(start);
        cpu.addAndGet(50 * US);
        assertEquals(50 * US, charge(stolen, start, start + 50 * US));
        stolen.idling(); // parked 500 µs: wall time without CPU
        long later = start + 550 * US;
        stolen.turnStarting(later);
        cpu.addAndGet(300 * US);
        assertEquals(300 * US, charge(stolen, later, later + 300 * US), "the mark was renewed after idling");
    }

    @Test
    void withoutAThreadCpuClockTheChargeIsTheWallClockLength() {
        StolenTime none = new StolenTime(null);
        none.turnStarting(0);
        assertEquals(8 * MS, charge(none, 0, 8 * MS));
    }

    @Test
    void theChargeIsNeverNegativeAndNeverAboveTheTurnsLength() {
        long start = 1_000 * MS;
        stolen.turnStarting(start - 900 * US); // a mark 0.9 ms before the turn, all of that stolen
        stolen.turnStarting(start);
        cpu.addAndGet(200 * US);
        assertEquals(0L, charge(stolen, start, start + 300 * US) , "stolen time before it exceeds its length");
        stolen.turnStarting(start + 300 * US);
        cpu.addAndGet(5 * MS); // more CPU than wall (a clock's granularity): never above the length
        assertEquals(400 * US, charge(stolen, start + 300 * US, start + 700 * US));
    }

    @Test
    void theCarriersOwnThreadCpuClockIsFoundOnThisJvm() {
        StolenTime real = StolenTime.forCarrier();
        long t = System.nanoTime();
        real.turnStarting(t);
        long spinUntil = t + 2 * MS;
        long now;
        do {
            now = System.nanoTime();
        } while (now < spinUntil);
        long charged = charge(real, t, now);
        long length = now - t;
        assertTrue(charged > 0 && charged <= length, () -> "charged " + charged + " of " + length);
    }

    /**
     * The host's part of stolen time (the group's charge): the stolen time times the carrier's recent ratio of run
     * delay to stolen time, at most all of it; time the thread blocked (stolen, but no run delay) is not the host's.
     */
    @Test
    void theHostsPartIsTheStolenTimeAtTheCarriersRecentRatioOfRunDelay() {
        AtomicLong delay = new AtomicLong(3 * MS);
        StolenTime s = new StolenTime(cpu::get, delay::get);
        long[] start = {1_000 * MS};

        // robbed: 100 µs of work in an 8 ms turn, 7.9 ms of it waiting for a core
        assertEquals(7_900 * US, turn(s, start, 100 * US, 7_900 * US, delay));
        assertEquals(7_900 * US, s.hostStolen(), "all of it the host's");
        // run delay beyond the stolen time (accrued between turns): still at most the stolen time
        assertEquals(7_900 * US, turn(s, start, 100 * US, 20 * MS, delay));
        assertEquals(7_900 * US, s.hostStolen());

        // a task that blocks on a quiet host: stolen, none of it the host's
        StolenTime quiet = new StolenTime(cpu::get, delay::get);
        for (int i = 0; i < 5; i++) {
            assertEquals(7_900 * US, turn(quiet, start, 100 * US, 0L, delay));
            assertEquals(0L, quiet.hostStolen(), "blocking is the task's doing");
        }

        // robbed and blocked turns in turn, equal lengths: half of the stolen time is the host's, for either kind
        // (whichever turn reads the run delay next, every turn gets the same share)
        StolenTime mixed = new StolenTime(cpu::get, delay::get);
        for (int i = 0; i < 200; i++) {
            turn(mixed, start, 100 * US, i % 2 == 0 ? 7_900 * US : 0L, delay);
            if (i >= 100) {
                double share = mixed.hostStolen() / (double) (7_900 * US);
                assertTrue(share > 0.4 && share < 0.6, "host's share " + share + " at turn " + i);
            }
        }

        // a failed read: no host part; the value seen before stays the reference
        long before = delay.getAndSet(-1L);
        assertEquals(7_900 * US, turn(s, start, 100 * US, 0L, delay));
        assertEquals(0L, s.hostStolen());
        delay.set(before);
        assertEquals(7_900 * US, turn(s, start, 100 * US, 7_900 * US, delay));
        assertTrue(s.hostStolen() > 7_000 * US, "recent turns robbed: mostly the host's, " + s.hostStolen());
    }

    /**
     * An 8 ms turn at {@code start[0]} with {@code cpuTime} of CPU and {@code runDelay} of run delay; moves
     * {@code start[0]} on by 10 ms.
     *
     * @return its stolen time
     */
    private long turn(StolenTime s, long[] start, long cpuTime, long runDelay, AtomicLong delay) {
        long t = start[0];
        start[0] += 10 * MS;
        s.turnStarting(t);
        cpu.addAndGet(cpuTime);
        if (delay.get() >= 0) {
            delay.addAndGet(runDelay);
        }
        return s.stolen(t, t + 8 * MS);
    }

    @Test
    void withoutARunDelayClockNothingIsTheHostsPart() {
        long start = 1_000 * MS;
        stolen.turnStarting(start);
        cpu.addAndGet(100 * US);
        assertEquals(7_900 * US, stolen.stolen(start, start + 8 * MS));
        assertEquals(0L, stolen.hostStolen());
    }

    @Test
    void theSchedulerStatisticsLineIsParsed() {
        byte[] line = "123456789 987654321 42\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertEquals(987654321L, StolenTime.SchedStat.parseSecondField(line, line.length));
        byte[] one = "123".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertEquals(-1L, StolenTime.SchedStat.parseSecondField(one, one.length));
        assertEquals(-1L, StolenTime.SchedStat.parseSecondField(new byte[8], -1), "a failed read (-1 bytes)");
    }

    /** On Linux the carrier's run delay is read from its own schedstat file, and grows while it waits for a core. */
    @Test
    void theCarriersOwnRunDelayIsReadOnLinux() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/thread-self/schedstat")), "Linux only");
        StolenTime.SchedStat s = StolenTime.SchedStat.openForCurrentThread();
        assertTrue(s != null, "opened");
        try {
            long first = s.getAsLong();
            assertTrue(first >= 0, "read: " + first);
            Thread.currentThread().interrupt(); // an interrupted carrier still reads it (not an interruptible channel)
            try {
                assertTrue(s.getAsLong() >= first, "monotonic");
            } finally {
                Thread.interrupted();
            }
        } finally {
            s.close();
        }
        StolenTime.forCarrier().close();
    }

    /** @return what a turn is charged: its length less the part {@link StolenTime#stolen} takes out */
    private static long charge(StolenTime clock, long start, long end) {
        long taken = clock.stolen(start, end);
        assertTrue(taken >= 0 && taken <= end - start, "the stolen part lies within the turn: " + taken);
        return (end - start) - taken;
    }
}
