package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * The group's stepped floor ({@link SchedulingGroup#floor()}): it follows the highest lane floor, lagging
 * by at most {@link SchedulingGroup#FLOOR_STEP}, and never goes down. (Concurrent raises:
 * {@code GroupFloorJCStress} in the jcstress module.)
 */
class SchedulingGroupFloorTest {

    private static final long STEP = SchedulingGroup.FLOOR_STEP;

    @Test
    void theFloorFollowsTheHighestLaneInStepsAndNeverGoesDown() {
        SchedulingGroup g = new SchedulingGroup("g", 1);
        GroupLane a = g.lane(0, 2);
        GroupLane b = g.lane(1, 2);
        assertEquals(0, g.floor());
        a.raiseFloor(STEP); // not more than a step above: not published yet
        assertEquals(0, g.floor());
        a.raiseFloor(STEP + 1);
        assertEquals(STEP + 1, g.floor());
        b.raiseFloor(2 * STEP); // within a step of the floor
        assertEquals(STEP + 1, g.floor());
        b.raiseFloor(5 * STEP);
        assertEquals(5 * STEP, g.floor());
        a.raiseFloor(3 * STEP); // a lane behind the floor does not lower it
        assertEquals(5 * STEP, g.floor());
        long max = 5 * STEP;
        for (long v = max; v < max + 100 * STEP; v += 7_000) { // small steps: the lag stays under a step
            a.raiseFloor(v);
            long f = g.floor();
            assertEquals(true, f <= v && f >= v - STEP, "floor " + f + " for lane floor " + v);
        }
    }
}
