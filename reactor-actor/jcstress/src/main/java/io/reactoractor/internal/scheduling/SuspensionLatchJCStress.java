package io.reactoractor.internal.scheduling;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * jcstress tests of {@link SuspensionLatch}: the claims of its "Why the order is suspend, publish,
 * re-check" Javadoc. The cell has no work, so a lifted suspension schedules nothing; the arbiter reads
 * the cell's suspend count and terminates the cell (so the many states do not pile up in its group).
 */
public final class SuspensionLatchJCStress {

    private SuspensionLatchJCStress() {
    }

    /** An engine that is never started: the cells only need its counters. */
    private static final SchedulerEngine ENGINE = new SchedulerEngine(new SchedulerEngine.Config("jcstress", 1,
            5_000_000L, 500_000L, true, 50_000_000L, 0, SchedulerMetrics.NONE));
    private static final SchedulingGroup GROUP = ENGINE.group("latch", 1);

    /** A cell without work: its status word is all these tests look at. */
    static final class IdleCell extends ActorCell {
        IdleCell() {
            super(ENGINE, GROUP, "latch/cell", 1);
            joinGroup();
        }

        @Override
        protected boolean hasWork() {
            return false;
        }

        @Override
        protected void runTurn(Turn turn) {
            throw new UnsupportedOperationException("never scheduled");
        }

        @Override
        protected void drainTerminated() {
        }
    }

    @JCStressTest
    @Description("the actor's turn suspends (re-checking a condition) while a waker makes the condition true "
            + "and wakes: the actor must never stay suspended with the condition true")
    @Outcome(id = "1, 1, 0", expect = ACCEPTABLE, desc = "the turn suspended; the waker lifted the unit")
    @Outcome(id = "0, 0, 0", expect = ACCEPTABLE, desc = "the turn's re-check saw the condition and lifted the unit")
    @Outcome(id = "1, 0, 1", expect = FORBIDDEN, desc = "lost wake-up: suspended for good with the condition true")
    @Outcome(id = "0, 1, 0", expect = FORBIDDEN, desc = "the unit lifted twice")
    @State
    public static class SuspendVersusWake {
        final IdleCell cell = new IdleCell();
        final SuspensionLatch latch = new SuspensionLatch(cell);
        volatile boolean condition;

        @Actor
        public void turn(III_Result r) {
            r.r1 = latch.suspend(() -> condition) ? 1 : 0;
        }

        @Actor
        public void waker(III_Result r) {
            condition = true;
            r.r2 = latch.wake() ? 1 : 0;
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r3 = cell.suspendCount();
            cell.terminate();
        }
    }
}
