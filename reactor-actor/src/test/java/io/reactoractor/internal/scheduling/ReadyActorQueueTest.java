package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link ReadyActorQueue}'s guarantee: every poll returns an actor of the lowest virtual-time bucket
 * present (exact order while the group is small), ring buckets are first-in first-out, nothing is lost
 * or duplicated, across the window's edges and its sliding.
 */
class ReadyActorQueueTest {

    private static final long W = ReadyActorQueue.BUCKET_NANOS;

    private final SchedulerEngine engine = new SchedulerEngine(new SchedulerEngine.Config("calendar", 1, 5_000_000L,
            500_000L, true, 50_000_000L, 0, SchedulerMetrics.NONE));
    private final SchedulingGroup group = engine.group("g", 1);
    private long seq;

    private ActorCell cell(long vtime) {
        ActorCell c = new FairPolicySimulation.SimActor(engine, group, "a" + seq, 1, 1, 1, 0);
        c.vtime = vtime;
        c.seq = ++seq;
        return c;
    }

    private static long bucket(ActorCell c) {
        return c.vtime >> ReadyActorQueue.SHIFT;
    }

    @Test
    void aSmallGroupIsTakenInExactVirtualTimeOrder() {
        Comparator<ActorCell> order = Comparator.<ActorCell>comparingLong(c -> c.vtime).thenComparingLong(c -> c.seq);
        PriorityQueue<ActorCell> reference = new PriorityQueue<>(order);
        ReadyActorQueue q = new ReadyActorQueue();
        SplittableRandom random = new SplittableRandom(7);
        for (int step = 0; step < 50_000; step++) {
            if (reference.size() < ReadyActorQueue.RING_THRESHOLD - 1 && (reference.isEmpty() || random.nextBoolean())) {
                ActorCell c = cell(random.nextLong(10 * W)); // several actors per bucket: exact order still
                reference.add(c);
                q.add(c);
            } else {
                ActorCell expected = reference.poll();
                assertSame(expected, q.peek());
                assertEquals(expected.vtime, q.peekVtime());
                assertSame(expected, q.poll());
            }
        }
    }

    /**
     * Random adds and polls on a large set whose virtual times spread over three windows (so actors go
     * below, into and above the ring) and drift upwards, as a busy group's do.
     */
    @Test
    void aLargeGroupIsTakenLowestBucketFirstAndFifoWithinARingBucket() {
        SplittableRandom random = new SplittableRandom(42);
        ReadyActorQueue q = new ReadyActorQueue();
        Map<ActorCell, Boolean> present = new IdentityHashMap<>();
        TreeMap<Long, Integer> buckets = new TreeMap<>(); // how many present actors per bucket
        long floor = -3 * W; // negative virtual times occur (placement below a young floor)
        long window = ReadyActorQueue.BUCKETS * W;
        for (int step = 0; step < 300_000; step++) {
            boolean add = present.size() < 200 || (present.size() < 20_000 && random.nextInt(100) < 52);
            if (add) {
                long v = floor + random.nextLong(3 * window) - window; // below, inside and above
                ActorCell c = cell(v);
                present.put(c, Boolean.TRUE);
                buckets.merge(bucket(c), 1, Integer::sum);
                q.add(c);
            } else {
                long lowest = buckets.firstKey();
                ActorCell polled = q.poll();
                assertTrue(present.remove(polled) != null, "polled an actor that was not queued (or twice)");
                assertEquals(lowest, bucket(polled), "not from the lowest bucket present");
                buckets.merge(lowest, -1, (x, y) -> x + y == 0 ? null : x + y);
                floor = Math.max(floor, polled.vtime); // the floor follows what runs, as in the run queue
            }
            assertEquals(present.size(), q.size());
        }
        List<ActorCell> rest = new ArrayList<>();
        ActorCell c;
        while ((c = q.poll()) != null) {
            rest.add(c);
        }
        assertEquals(present.size(), rest.size());
        for (int i = 1; i < rest.size(); i++) {
            assertTrue(bucket(rest.get(i - 1)) <= bucket(rest.get(i)), "drained out of bucket order at " + i);
        }
        assertTrue(q.isEmpty());
        assertNull(q.peek());
    }

    /**
     * Arrivals a little below the window (waking actors placed just under the ones queued) slide the
     * window down instead of going to the heap, as long as the ring's span allows; they come out first.
     */
    @Test
    void arrivalsBelowTheWindowSlideItDownWhenTheRingStillFits() {
        ReadyActorQueue q = new ReadyActorQueue();
        for (int i = 0; i < ReadyActorQueue.RING_THRESHOLD; i++) {
            q.add(cell(500 * W)); // the small-group heap
        }
        q.add(cell(400 * W)); // the ring starts its window here
        ActorCell[] lower = new ActorCell[100];
        for (int i = 0; i < lower.length; i++) {
            lower[i] = cell((399 - i) * W); // each one bucket below the last
            q.add(lower[i]);
        }
        assertEquals(ReadyActorQueue.RING_THRESHOLD, q.heapSize(), "slid down into the ring, not into the heap");
        ActorCell far = cell(400 * W - ReadyActorQueue.BUCKETS * W); // the span would exceed the window
        q.add(far);
        assertEquals(ReadyActorQueue.RING_THRESHOLD + 1, q.heapSize(), "too far below: the heap");
        assertEquals(far, q.poll());
        for (int i = lower.length - 1; i >= 0; i--) {
            assertEquals(lower[i], q.poll(), "lowest bucket first");
        }
        assertEquals(400 * W, q.poll().vtime);
        assertEquals(500 * W, q.poll().vtime);
    }

    @Test
    void actorsOfOneRingBucketLeaveInArrivalOrder() {
        ReadyActorQueue q = new ReadyActorQueue();
        List<ActorCell> added = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            // same bucket, descending virtual times: the ring keeps arrival order, not vtime order
            ActorCell a = cell(100 * W + W - 1 - (i % (int) W));
            added.add(a);
            q.add(a);
        }
        // the first RING_THRESHOLD went to the exact heap (the group was small then): highest vtimes
        List<ActorCell> polled = new ArrayList<>();
        for (int i = 0; i < added.size(); i++) {
            polled.add(q.poll());
        }
        List<ActorCell> ring = added.subList(ReadyActorQueue.RING_THRESHOLD, added.size());
        List<ActorCell> ringPolled = new ArrayList<>(polled);
        ringPolled.retainAll(ring);
        assertEquals(ring, ringPolled, "FIFO within the bucket");
        assertTrue(q.isEmpty());
    }

    @Test
    void theRingIsReleasedWhenTheGroupShrinksAndRebuiltWhenItGrows() {
        ReadyActorQueue q = new ReadyActorQueue();
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 5 * ReadyActorQueue.RING_THRESHOLD; i++) {
                q.add(cell(round * 1_000 * W + i * (W / 2)));
            }
            assertTrue(q.hasRing(), "a group past the threshold uses the ring (round " + round + ")");
            long last = Long.MIN_VALUE;
            ActorCell c;
            while ((c = q.poll()) != null) {
                assertTrue(bucket(c) >= last, "bucket order");
                last = bucket(c);
            }
            assertTrue(q.isEmpty());
            assertFalse(q.hasRing(), "an emptied group gives the ring's arrays back (round " + round + ")");
        }
    }

    /**
     * A bucket is a circular array: it wraps, grows while wrapped and keeps arrival order through both;
     * emptied after a burst it gives the grown array back (a small one is kept for reuse).
     */
    @Test
    void aRingBucketWrapsGrowsAndShrinksInArrivalOrder() {
        ReadyActorQueue q = new ReadyActorQueue();
        java.util.ArrayDeque<ActorCell> reference = new java.util.ArrayDeque<>();
        long v = 500 * W + 1; // one bucket for all
        for (int i = 0; i < ReadyActorQueue.RING_THRESHOLD; i++) {
            q.add(cell(v + W)); // the small group's heap, one bucket above: after everything below
        }
        SplittableRandom random = new SplittableRandom(3);
        for (int step = 0; step < 20_000; step++) {
            // mostly balanced, so the bucket's head travels around its array; bursts make it grow while wrapped
            int adds = step % 2_000 == 0 ? 700 : random.nextInt(3);
            for (int k = 0; k < adds; k++) {
                ActorCell c = cell(v);
                reference.add(c);
                q.add(c);
            }
            int polls = Math.min(reference.size(), random.nextInt(3));
            for (int k = 0; k < polls; k++) {
                assertSame(reference.poll(), q.poll(), "arrival order within the bucket, step " + step);
            }
        }
        while (!reference.isEmpty()) {
            assertSame(reference.poll(), q.poll());
        }
        assertTrue(q.hasRing());
        assertTrue(q.ringCapacity() <= ReadyActorQueue.KEPT_BUCKET_CAPACITY,
                "an emptied bucket keeps no grown array: " + q.ringCapacity() + " slots");
        for (int i = 0; i < ReadyActorQueue.RING_THRESHOLD; i++) {
            assertEquals(v + W, q.poll().vtime);
        }
        assertTrue(q.isEmpty());
    }
}
