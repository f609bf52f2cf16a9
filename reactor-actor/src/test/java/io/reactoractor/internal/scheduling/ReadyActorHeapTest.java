package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ReadyActorHeapTest {

    private final SchedulerEngine engine = new SchedulerEngine(new SchedulerEngine.Config("heap", 1, 5_000_000L,
            500_000L, true, 50_000_000L, 0, SchedulerMetrics.NONE));
    private final SchedulingGroup group = engine.group("g", 1);

    private ActorCell cell(long vtime, long seq) {
        ActorCell c = new FairPolicySimulation.SimActor(engine, group, "a" + seq, 1, 1, 1, 0);
        c.vtime = vtime;
        c.seq = seq;
        return c;
    }

    @Test
    void pollsInVtimeThenSeqOrderUnderRandomInterleavingsOfAddAndPoll() {
        SplittableRandom random = new SplittableRandom(42);
        Comparator<ActorCell> order = Comparator.<ActorCell>comparingLong(c -> c.vtime).thenComparingLong(c -> c.seq);
        PriorityQueue<ActorCell> reference = new PriorityQueue<>(order);
        ReadyActorHeap heap = new ReadyActorHeap();
        long seq = 0;
        for (int step = 0; step < 200_000; step++) {
            if (reference.isEmpty() || random.nextInt(100) < 55) {
                // few distinct vtimes: ties (broken by seq) are the common case, as for new actors
                ActorCell c = cell(random.nextInt(64), ++seq);
                reference.add(c);
                heap.add(c);
            } else {
                ActorCell expected = reference.poll();
                assertSame(expected, heap.peek());
                assertEquals(expected.vtime, heap.peekVtime());
                assertSame(expected, heap.poll());
            }
            assertEquals(reference.size(), heap.size());
        }
        while (!reference.isEmpty()) {
            assertSame(reference.poll(), heap.poll());
        }
        assertTrue(heap.isEmpty());
        assertNull(heap.poll());
        assertNull(heap.peek());
    }
}
