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
        charge.add(b, 100, 100); // weight 2: 50 of virtual time
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

    /**
     * A group's charge is its run time divided by its weight, the rest carried: truncating each charge made
     * every charge shorter than the weight free (a heavy group of short turns never advanced).
     */
    @Test
    void chargesShorterThanTheWeightAddUp() {
        SchedulingGroup heavy = new SchedulingGroup("heavy", 1000);
        heavy.place(0L, 0L);
        for (int i = 0; i < 10; i++) {
            charge.add(heavy, 300, 300);
            charge.flush();
        }
        assertEquals(3, heavy.vtimeNow(), "3,000 ns at weight 1,000");
        SchedulingGroup three = new SchedulingGroup("three", 3);
        three.place(0L, 0L);
        for (int i = 0; i < 10; i++) {
            three.charge(10);
        }
        assertEquals(33, three.vtimeNow(), "100 ns at weight 3");
    }

    /** Carriers charging a group at once: every charged nanosecond counts once (the remainder's CAS). */
    @Test
    void concurrentChargesLoseNoRemainder() throws Exception {
        SchedulingGroup g = new SchedulingGroup("g", 1000);
        g.place(0L, 0L);
        int perThread = 500_000;
        Thread[] ts = new Thread[2];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    g.charge(7);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        assertEquals(2L * perThread * 7 / 1000, g.vtimeNow());
    }
}
