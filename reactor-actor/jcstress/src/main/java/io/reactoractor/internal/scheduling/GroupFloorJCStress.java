package io.reactoractor.internal.scheduling;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.J_Result;

/**
 * jcstress test of {@link SchedulingGroup#laneFloorRose}: the invariant of the group's stepped floor
 * ({@code max(lane floors) - FLOOR_STEP <= floor <= max(lane floors)}) holds when two carriers' lanes
 * rise at once. A plain store instead of the CAS could leave the lower of two concurrent raises.
 */
public final class GroupFloorJCStress {

    private GroupFloorJCStress() {
    }

    private static final long LOW = 10 * SchedulingGroup.FLOOR_STEP;
    private static final long HIGH = 20 * SchedulingGroup.FLOOR_STEP;

    @JCStressTest
    @Description("two lanes of one group raise their floors at once, both by more than the step: the group's "
            + "floor ends at the higher one")
    @Outcome(id = "" + HIGH, expect = ACCEPTABLE, desc = "the higher raise is the floor")
    @Outcome(id = "" + LOW, expect = FORBIDDEN, desc = "lost update: the lower raise overwrote the higher one")
    @Outcome(expect = FORBIDDEN, desc = "any other value")
    @State
    public static class ConcurrentRaises {
        final SchedulingGroup group = new SchedulingGroup("floor", 1);

        @Actor
        public void low() {
            group.laneFloorRose(LOW);
        }

        @Actor
        public void high() {
            group.laneFloorRose(HIGH);
        }

        @Arbiter
        public void arbiter(J_Result r) {
            r.r1 = group.floor();
        }
    }
}
