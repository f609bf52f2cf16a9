package io.reactoractor.mailbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The mailbox queue under many producers: every element is delivered exactly once, in per-producer
 * FIFO order, and {@code isEmpty()} never claims "empty" while a linked element waits.
 */
class MpscLinkedQueueStressTest {

    private static final int PRODUCERS = 6;
    private static final int PER_PRODUCER = 250_000;

    @Test
    void singleThreadedBasics() {
        MpscLinkedQueue<String> q = new MpscLinkedQueue<>();
        assertTrue(q.isEmpty());
        assertNull(q.poll());
        assertNull(q.peek());
        q.offer("a");
        q.offer("b");
        assertFalse(q.isEmpty());
        assertEquals(2, q.size());
        assertEquals("a", q.peek());
        assertEquals("a", q.poll());
        assertEquals("b", q.poll());
        assertNull(q.poll());
        assertTrue(q.isEmpty());
        assertEquals(0, q.size());
        assertThrows(NullPointerException.class, () -> q.offer(null));
    }

    @RepeatedTest(3)
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void manyProducersOneConsumer() throws Exception {
        MpscLinkedQueue<long[]> q = new MpscLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> producers = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            final int id = p;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < PER_PRODUCER; i++) {
                    q.offer(new long[] {id, i});
                }
            }, "producer-" + p);
            t.start();
            producers.add(t);
        }
        int[] next = new int[PRODUCERS];
        long received = 0;
        long total = (long) PRODUCERS * PER_PRODUCER;
        start.countDown();
        while (received < total) {
            long[] e = q.poll();
            if (e == null) {
                Thread.onSpinWait();
                continue;
            }
            int id = (int) e[0];
            assertEquals(next[id], (int) e[1], "per-producer FIFO order, no loss, no duplicate");
            next[id]++;
            received++;
        }
        for (Thread t : producers) {
            t.join();
        }
        assertNull(q.poll(), "nothing beyond what was offered");
        assertTrue(q.isEmpty());
        assertEquals(0, q.size());
        for (int n : next) {
            assertEquals(PER_PRODUCER, n);
        }
    }

    /**
     * The property the actor status protocol relies on: once {@code offer} returned, any thread that
     * asks {@code isEmpty()} sees the element (or a spurious "not empty"), never "empty".
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void isEmptyNeverHidesACompletedOffer() throws Exception {
        for (int round = 0; round < 2_000; round++) {
            MpscLinkedQueue<Integer> q = new MpscLinkedQueue<>();
            Thread producer = new Thread(() -> q.offer(1));
            producer.start();
            producer.join();
            assertFalse(q.isEmpty(), "round " + round);
            assertEquals(1, q.poll());
        }
    }
}
