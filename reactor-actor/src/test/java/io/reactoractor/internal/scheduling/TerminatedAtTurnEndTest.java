package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * An actor terminated while a carrier holds it at the end of its turn, between the carrier's last look at
 * its status ({@code keepScheduledAfterTurn}) and the release of {@code SCHEDULED}: {@code terminate()}
 * leaves the drain to the holder, so the release must drain it, also when it has no work left. Found under
 * load: a ring consumer gated by another (nothing to do) lost its terminal signal when the scheduler was
 * disposed in that window. The test thread plays the carrier of an engine that is never started, and the
 * termination lands in the window deterministically: from inside the status look itself.
 */
class TerminatedAtTurnEndTest {

    private final SchedulerEngine engine = new SchedulerEngine(new SchedulerEngine.Config("turn-end", 1, 5_000_000L,
            500_000L, true, 50_000_000L, 0, SchedulerMetrics.NONE));
    private final SchedulingGroup group = engine.group("g", 1);

    /** No work; terminated (by "another thread") the first time the carrier asks whether it has work. */
    private final class Cell extends ActorCell {
        boolean terminateOnLook;
        int drains;

        Cell() {
            super(engine, group, "cell", 1);
            joinGroup();
        }

        @Override
        protected boolean hasWork() {
            if (terminateOnLook) {
                terminateOnLook = false;
                assertTrue(terminate(), "terminated here");
            }
            return false;
        }

        @Override
        protected void runTurn(Turn turn) {
        }

        @Override
        protected void drainTerminated() {
            drains++;
        }
    }

    @Test
    void aTerminationBetweenTheLastLookAndTheReleaseIsDrainedByTheRelease() {
        Cell cell = new Cell();
        assertTrue(cell.signal(), "scheduled: held as a carrier holds it during a turn");
        cell.terminateOnLook = true;
        assertFalse(cell.keepScheduledAfterTurn(), "no work: not re-queued");
        assertTrue(cell.isTerminated());
        assertEquals(0, cell.drains, "terminate() left the drain to the holder");
        cell.releaseAfterTurn();
        assertEquals(1, cell.drains, "the release drained it");
        assertFalse(cell.isScheduled());
    }
}
