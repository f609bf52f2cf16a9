package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** {@link CarrierCharge}: a carrier's turns reach their group in sums, with a bounded lag. */
class CarrierChargeTest {

    private final SchedulingGroup a = new SchedulingGroup("a", 1);
    private final SchedulingGroup b = new SchedulingGroup("b", 2);
    private final CarrierCharge charge = new CarrierCharge();

    CarrierChargeTest() {
        a.place(0L, 0L);
        b.place(0L, 0L);
    }

    @Test
    void turnsOfOneGroupAreSummedUntilTheBoundThenHandedOver() {
        long turn = CarrierCharge.FLUSH_NANOS / 5;
        for (int i = 0; i < 4; i++) {
            charge.add(a, turn, turn);
        }
        assertEquals(0, a.cpuTimeNanos(), "below the bound: still on the carrier");
        assertEquals(0, a.vtimeNow());
        charge.add(a, turn, turn);
        assertEquals(5 * turn, a.cpuTimeNanos(), "the bound reached: handed over");
        assertEquals(5, a.turns());
        assertEquals(5 * turn, a.vtimeNow());
    }

    @Test
    void aTurnOfAnotherGroupOrAFlushHandsTheSumOver() {
        charge.add(a, 100, 100);
        charge.add(b, 50, 100);
        assertEquals(100, a.cpuTimeNanos(), "another group chained: a's sum went to a");
        assertEquals(100, a.vtimeNow());
        assertEquals(0, b.cpuTimeNanos());
        charge.flush();
        assertEquals(100, b.cpuTimeNanos());
        assertEquals(50, b.vtimeNow());
        assertEquals(1, b.turns());
        charge.flush();
        assertEquals(100, b.cpuTimeNanos(), "a second flush adds nothing");
    }
}
