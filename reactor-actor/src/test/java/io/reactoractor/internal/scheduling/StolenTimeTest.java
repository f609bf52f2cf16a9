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

    /** @return what a turn is charged: its length less the part {@link StolenTime#stolen} takes out */
    private static long charge(StolenTime clock, long start, long end) {
        long taken = clock.stolen(start, end);
        assertTrue(taken >= 0 && taken <= end - start, "the stolen part lies within the turn: " + taken);
        return (end - start) - taken;
    }
}
