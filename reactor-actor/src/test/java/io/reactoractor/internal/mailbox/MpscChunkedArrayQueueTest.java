package io.reactoractor.internal.mailbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The chunked mailbox queue: single-threaded semantics across chunk boundaries, and under several
 * producers every element delivered exactly once in per-producer FIFO order, {@code isEmpty()}
 * correct from a third thread, and no lost wake-up in the actor's signal protocol. Small chunks
 * (2 slots) make every other offer cross a boundary, so the append race and the walk past a chunk
 * the consumer has cut are exercised constantly. No timing assertions: the {@code @Timeout}s only
 * turn a lost wake-up (a hang) into a failure.
 */
class MpscChunkedArrayQueueTest {

    private static final int PRODUCERS = 4;
    private static final int PER_PRODUCER = 100_000;

    /**
     * The owner's credit counter: its own value, untouched by offers and polls (it shares their
     * cache line, not their meaning), and exact under concurrent take-by-CAS and give-back.
     */
    @Test
    void theCreditCounterIsIndependentOfTheQueueAndExactUnderContention() throws Exception {
        MpscChunkedArrayQueue<Integer> q = new MpscChunkedArrayQueue<>(2);
        assertEquals(0, q.credits());
        q.setCredits(3);
        for (int i = 0; i < 5; i++) {
            q.offer(i);
        }
        assertEquals(0, q.poll());
        assertEquals(3, q.credits(), "offers and polls must not move the counter");
        assertFalse(q.compareAndSetCredits(2, 1));
        assertTrue(q.compareAndSetCredits(3, 1));
        assertEquals(4, q.addCredits(3));
        assertEquals(4, q.credits());
        assertEquals(4, q.size(), "the counter must not move the queue's indices");

        // two threads take a credit by CAS and give it back 100,000 times each: nothing is lost
        q.setCredits(1);
        AtomicLong taken = new AtomicLong();
        Runnable worker = () -> {
            for (int n = 0; n < 100_000; ) {
                long f = q.credits();
                if (f > 0 && q.compareAndSetCredits(f, f - 1)) {
                    taken.incrementAndGet();
                    q.addCredits(1);
                    n++;
                }
            }
        };
        Thread a = new Thread(worker);
        Thread b = new Thread(worker);
        a.start();
        b.start();
        a.join();
        b.join();
        assertEquals(200_000, taken.get());
        assertEquals(1, q.credits());
    }

    @Test
    void singleThreadedAcrossChunks() {
        MpscChunkedArrayQueue<Integer> q = new MpscChunkedArrayQueue<>(2);
        assertTrue(q.isEmpty());
        assertNull(q.poll());
        assertNull(q.peek());
        assertEquals(0, q.size());
        // interleave offers and polls so the consumer meets every boundary state: at the end of a
        // chunk with the next one linked, and at the end with no next chunk yet
        int next = 0;
        int expected = 0;
        for (int round = 0; round < 20; round++) {
            for (int k = 0; k <= round % 5; k++) {
                q.offer(next++);
            }
            assertFalse(q.isEmpty());
            assertEquals(next - expected, q.size());
            for (int k = 0; k <= round % 3 && expected < next; k++) {
                assertEquals(expected, q.peek());
                assertEquals(expected++, q.poll());
            }
        }
        while (expected < next) {
            assertFalse(q.isEmpty());
            assertEquals(expected++, q.poll());
        }
        assertNull(q.poll());
        assertNull(q.peek());
        assertTrue(q.isEmpty());
        assertEquals(0, q.size());
        assertThrows(NullPointerException.class, () -> q.offer(null));
        assertThrows(NullPointerException.class, () -> q.offerRelease(null));
        assertTrue(q.isEmpty());
        // size() counts claimed positions (isEmpty() alone would also answer "empty" for a claimed, unwritten one)
        assertEquals(0, q.size(), "a rejected null claims no position");
    }

    /** Both offers fill one sequence of positions: mixed, they keep FIFO order across chunks. */
    @Test
    void offerAndOfferReleaseShareOneOrder() {
        MpscChunkedArrayQueue<Integer> q = new MpscChunkedArrayQueue<>(2);
        for (int i = 0; i < 11; i++) {
            if (i % 3 == 0) {
                q.offerRelease(i);
            } else {
                q.offer(i);
            }
        }
        assertEquals(11, q.size());
        for (int i = 0; i < 11; i++) {
            assertEquals(i, q.poll());
        }
        assertTrue(q.isEmpty());
    }

    @Test
    void emptyAtAChunkBoundaryThenRefilled() {
        MpscChunkedArrayQueue<String> q = new MpscChunkedArrayQueue<>(4);
        for (int i = 0; i < 4; i++) {
            q.offer("x" + i);
        }
        for (int i = 0; i < 4; i++) {
            assertEquals("x" + i, q.poll());
        }
        // the consumer index is at the next chunk, which does not exist yet
        assertTrue(q.isEmpty());
        assertNull(q.poll());
        q.offer("y");
        assertFalse(q.isEmpty());
        assertEquals(1, q.size());
        assertEquals("y", q.poll());
        assertTrue(q.isEmpty());
    }

    @Test
    void rejectsChunkSizesThatAreNotPowersOfTwo() {
        assertThrows(IllegalArgumentException.class, () -> new MpscChunkedArrayQueue<>(0));
        assertThrows(IllegalArgumentException.class, () -> new MpscChunkedArrayQueue<>(1));
        assertThrows(IllegalArgumentException.class, () -> new MpscChunkedArrayQueue<>(48));
        assertThrows(IllegalArgumentException.class, () -> new MpscChunkedArrayQueue<>(-64));
    }

    /**
     * Several producers, one consumer, a third thread asking {@code isEmpty()}: exactly-once, per
     * producer FIFO. Once every producer's offers have returned (no claimed-but-unwritten position
     * can remain), an "empty" answer means the consumer has polled everything; its counter lags its
     * polls by at most the one element between {@code poll} and the increment.
     */
    @ParameterizedTest(name = "chunk size {0}, offerRelease {1}")
    @CsvSource({"2, false", "2, true", "64, false", "64, true"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void producersConsumerAndAnObserver(int chunkSize, boolean release) throws Exception {
        MpscChunkedArrayQueue<long[]> q = new MpscChunkedArrayQueue<>(chunkSize);
        long total = (long) PRODUCERS * PER_PRODUCER;
        CountDownLatch start = new CountDownLatch(1);
        AtomicLong consumed = new AtomicLong();
        AtomicInteger producersDone = new AtomicInteger();
        AtomicReference<String> observerFailure = new AtomicReference<>();
        // with offerRelease too, the observer's "every offer returned" is a happens-before edge: each
        // producer's last offer, then its incrementAndGet, which the observer's volatile read sees
        List<Thread> producers = producers(q, start, release, () -> { }, producersDone::incrementAndGet);
        Thread observer = new Thread(() -> {
            long emptyAnswersAfterDone = 0;
            while (consumed.get() < total || emptyAnswersAfterDone == 0) {
                boolean allOffered = producersDone.get() == PRODUCERS; // read before isEmpty()
                boolean empty = q.isEmpty();
                if (allOffered && empty) {
                    emptyAnswersAfterDone++;
                    long seen = consumed.get();
                    if (seen < total - 1) {
                        observerFailure.compareAndSet(null, "isEmpty() with " + (total - seen) + " waiting");
                        return;
                    }
                }
                Thread.yield();
            }
        }, "observer");
        producers.forEach(Thread::start);
        observer.start();
        start.countDown();

        int[] next = new int[PRODUCERS];
        long received = 0;
        while (received < total) {
            long[] e = q.poll();
            if (e == null) {
                Thread.yield(); // 2 cores, 6 threads: let a producer run
                continue;
            }
            int id = (int) e[0];
            assertEquals(next[id], (int) e[1], "per-producer FIFO order, no loss, no duplicate");
            next[id]++;
            received++;
            consumed.set(received);
        }
        for (Thread t : producers) {
            t.join();
        }
        observer.join();
        assertNull(observerFailure.get());
        assertNull(q.poll(), "nothing beyond what was offered");
        assertTrue(q.isEmpty());
        assertEquals(0, q.size());
        for (int n : next) {
            assertEquals(PER_PRODUCER, n);
        }
    }

    /**
     * The protocol the queue exists for, in miniature: producers offer, then read a status word and
     * wake the consumer if it is idle; the consumer drains, clears the status, then asks
     * {@code isEmpty()} and parks only if it answers "empty". A wrong "empty" (or a store-load
     * reordering in the handshake) leaves the consumer parked with work waiting: a hang, which the
     * timeout reports. With {@code offerRelease}, the producer's half takes a full fence between the
     * offer and the status read, as {@code ActorCell.signal()} does.
     */
    @ParameterizedTest(name = "chunk size {0}, offerRelease {1}")
    @CsvSource({"2, false", "2, true", "64, false", "64, true"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void noLostWakeUp(int chunkSize, boolean release) throws Exception {
        final int idle = 0;
        final int scheduled = 1;
        MpscChunkedArrayQueue<long[]> q = new MpscChunkedArrayQueue<>(chunkSize);
        AtomicInteger status = new AtomicInteger(scheduled);
        long total = (long) PRODUCERS * PER_PRODUCER;
        int[] next = new int[PRODUCERS];
        long[] received = {0};
        Thread consumer = new Thread(() -> {
            while (received[0] < total) {
                long[] e;
                while ((e = q.poll()) != null) {
                    int id = (int) e[0];
                    if (next[id] != (int) e[1]) {
                        return; // detected by the assertions after join
                    }
                    next[id]++;
                    received[0]++;
                }
                status.set(idle); // volatile, then isEmpty(): the consumer's half of the handshake
                if (!q.isEmpty()) {
                    status.compareAndSet(idle, scheduled); // else a producer already took it
                    continue;
                }
                while (status.get() != scheduled && received[0] < total) {
                    LockSupport.park(this);
                }
            }
        }, "consumer");
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> producers = producers(q, start, release, () -> {
            // the producer's half: offer returned, then read the status (after a fence if the store was release)
            if (release) {
                VarHandle.fullFence();
            }
            if (status.get() == idle && status.compareAndSet(idle, scheduled)) {
                LockSupport.unpark(consumer);
            }
        }, () -> { });
        consumer.start();
        producers.forEach(Thread::start);
        start.countDown();
        for (Thread t : producers) {
            t.join();
        }
        consumer.join();
        assertEquals(total, received[0], "every element delivered, in per-producer order");
        for (int n : next) {
            assertEquals(PER_PRODUCER, n);
        }
        assertTrue(q.isEmpty());
    }

    /** Once {@code offer} (or {@code offerRelease}) returned on another thread (join: happens-before), "empty" is wrong. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void isEmptyNeverHidesACompletedOffer() throws Exception {
        for (int round = 0; round < 1000; round++) {
            MpscChunkedArrayQueue<Integer> q = new MpscChunkedArrayQueue<>(2);
            // round % 3 consumed elements put the head at every offset of a 2-slot chunk
            for (int k = 0; k < round % 3; k++) {
                q.offer(k);
                q.poll();
            }
            Thread producer = new Thread(round % 2 == 0 ? () -> q.offer(7) : () -> q.offerRelease(7));
            producer.start();
            producer.join();
            assertFalse(q.isEmpty(), "round " + round);
            assertEquals(7, q.poll());
            assertTrue(q.isEmpty());
        }
    }

    /**
     * {@link #PRODUCERS} unstarted threads, each offering {@code {id, i}} for i = 0 ..
     * {@link #PER_PRODUCER} - 1 once {@code start} opens (with {@code offerRelease} if {@code release}),
     * running {@code afterEachOffer} after each offer returned and {@code whenDone} after the last.
     */
    private static List<Thread> producers(MpscChunkedArrayQueue<long[]> q, CountDownLatch start, boolean release,
            Runnable afterEachOffer, Runnable whenDone) {
        List<Thread> producers = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            final int id = p;
            producers.add(new Thread(() -> {
                awaitQuietly(start);
                for (int i = 0; i < PER_PRODUCER; i++) {
                    if (release) {
                        q.offerRelease(new long[] {id, i});
                    } else {
                        q.offer(new long[] {id, i});
                    }
                    afterEachOffer.run();
                }
                whenDone.run();
            }, "producer-" + p));
        }
        return producers;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
