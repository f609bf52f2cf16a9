package io.reactoractor.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The diamond 1 → (A, B) → C under random consumer speeds and random downstream demand on C.
 *
 * <p>Checks: C sees every event exactly once and in order, only after both A and B handled it; no
 * consumer ever reads a slot the producer already overwrote (each event's value is its sequence, so an
 * overwrite shows as a mismatch); no lost wake-up (a parked consumer whose barrier moved and never
 * resumed would leave the run hanging: the bounded wait then fails with the sequences).
 *
 * <p>Default size: 500 000 events (CI); the full size runs with
 * {@code mvn -o -pl reactor-actor test -Dtest=RingDiamondStressTest -Dring.stress.events=10000000}.
 */
class RingDiamondStressTest {

    private static final int EVENTS = Integer.getInteger("ring.stress.events", 500_000);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-stress").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    /** Random speed: mostly fast, sometimes a busy pause of up to 20 µs, sometimes a yield. */
    private static void randomPause(SplittableRandom rnd) {
        int r = rnd.nextInt(1000);
        if (r < 3) {
            long until = System.nanoTime() + rnd.nextInt(20_000);
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
        } else if (r < 5) {
            Thread.yield();
        }
    }

    private static void check(AtomicReference<String> violation, boolean ok, String what) {
        if (!ok) {
            violation.compareAndSet(null, what);
        }
    }

    @Test
    void diamondUnderRandomSpeedsDeliversEveryEventOnceInOrderAfterBothBranches() {
        for (int size : new int[] {8, 64}) {
            runDiamond(size, Source.ASYNC, false);
        }
    }

    /**
     * Single-producer mode ({@code RingBuffer.Builder.singleProducer()}), asynchronous upstream: each
     * {@code onNext} runs on the upstream's thread and publishes with one CAS of the cursor; the
     * consumers read the cursor, not per-slot sequences.
     */
    @Test
    void singleProducerDiamondFedAsynchronouslyDeliversEveryEventOnceInOrderAfterBothBranches() {
        for (int size : new int[] {8, 64}) {
            runDiamond(size, Source.ASYNC, true);
        }
    }

    /**
     * Single-producer mode fed by synchronous bursts: events are stored plain and published every
     * 64 events and at the burst's end (one wake-up per burst); sizes below and above the intermediate
     * flush interval.
     */
    @Test
    void singleProducerDiamondFedBySynchronousBurstsDeliversEveryEventOnceInOrderAfterBothBranches() {
        for (int size : new int[] {8, 64, 256}) {
            runDiamond(size, Source.SYNC, true);
        }
    }

    /**
     * Single-producer mode, imperative: one thread calls {@code tryPublish} (yielding when full), so
     * the gating cache is refreshed whenever it says full, and each call publishes and wakes.
     */
    @Test
    void singleProducerDiamondFedByTryPublishDeliversEveryEventOnceInOrderAfterBothBranches() {
        for (int size : new int[] {8, 64}) {
            runDiamond(size, Source.TRY_PUBLISH, true);
        }
    }

    /**
     * The same with a synchronous upstream subscribed directly: it emits inside the ring's own
     * {@code request(n)} (on the test thread first, then on the carrier of the consumer that freed
     * space), so the events arrive as bursts that are published without a wake-up each and followed
     * by one wake-up (RingBuffer.requestBurst). A lost wake-up there hangs the run.
     */
    @Test
    void diamondFedBySynchronousBurstsDeliversEveryEventOnceInOrderAfterBothBranches() {
        for (int size : new int[] {8, 64}) {
            runDiamond(size, Source.SYNC, false);
        }
    }

    private enum Source { SYNC, ASYNC, TRY_PUBLISH }

    private void runDiamond(int size, Source source, boolean singleProducer) {
        AtomicReference<String> violation = new AtomicReference<>();
        RingBuffer.Builder<Integer> builder = RingBuffer.<Integer>builder(scheduler).size(size).name("diamond-" + size);
        if (singleProducer) {
            builder.singleProducer();
        }
        RingBuffer<Integer> ring = builder.build();
        SplittableRandom rndA = new SplittableRandom(1);
        SplittableRandom rndB = new SplittableRandom(2);
        SplittableRandom rndC = new SplittableRandom(3);
        long[] nextA = {0};
        long[] nextB = {0};
        long[] nextC = {0};
        RingConsumer<Integer, Void> a = ring.consumer("A", (e, s, eob) -> {
            check(violation, e == s && s == nextA[0]++, "A: event " + e + " at sequence " + s + ", expected " + (nextA[0] - 1));
            randomPause(rndA);
            return null;
        });
        RingConsumer<Integer, Void> b = ring.consumer("B", (e, s, eob) -> {
            check(violation, e == s && s == nextB[0]++, "B: event " + e + " at sequence " + s + ", expected " + (nextB[0] - 1));
            randomPause(rndB);
            return null;
        });
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("C", (e, s, eob) -> {
            check(violation, e == s && s == nextC[0]++, "C: event " + e + " at sequence " + s + ", expected " + (nextC[0] - 1));
            long sa = a.sequence();
            long sb = b.sequence();
            check(violation, sa >= s && sb >= s, "C handled " + s + " before A (" + sa + ") / B (" + sb + ")");
            randomPause(rndC);
            return e;
        });
        ring.handleEventsWith(a, b).then(c);
        ring.start();

        DemandingSubscriber down = new DemandingSubscriber(violation);
        c.subscribe(down);
        switch (source) {
            case SYNC -> Flux.range(0, EVENTS).subscribe(ring);
            case ASYNC -> Flux.range(0, EVENTS).subscribeOn(Schedulers.single()).subscribe(ring);
            case TRY_PUBLISH -> {
                Thread producer = new Thread(() -> {
                    for (int i = 0; i < EVENTS; i++) {
                        while (!ring.tryPublish(i)) {
                            if (ring.isClosed()) {
                                violation.compareAndSet(null, "ring closed while publishing event " + i);
                                return;
                            }
                            Thread.yield();
                        }
                    }
                    ring.complete();
                }, "ring-stress-producer");
                producer.start();
            }
        }

        Duration bound = Duration.ofSeconds(Math.max(120, EVENTS / 50_000));
        try {
            ring.whenTerminated().block(bound);
        } catch (IllegalStateException timeout) {
            fail("no completion within " + bound + " (lost wake-up or deadlock?): A=" + a.sequence() + " B="
                    + b.sequence() + " C=" + c.sequence() + " cursor=" + ring.cursor() + " received="
                    + down.received);
        }
        assertNull(violation.get());
        assertTrue(down.completed, "C's subscriber completed");
        assertEquals(EVENTS, down.received);
        assertEquals(EVENTS, nextA[0]);
        assertEquals(EVENTS, nextB[0]);
        assertEquals(EVENTS, nextC[0]);
        assertEquals(EVENTS - 1, c.sequence());
    }

    /** Requests in random amounts (1..64) each time its outstanding demand runs out. */
    private static final class DemandingSubscriber extends BaseSubscriber<Integer> {
        private final AtomicReference<String> violation;
        private final SplittableRandom rnd = new SplittableRandom(4);
        private long outstanding;
        volatile long received;
        volatile boolean completed;

        DemandingSubscriber(AtomicReference<String> violation) {
            this.violation = violation;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            more();
        }

        private void more() {
            long n = 1 + rnd.nextInt(64);
            outstanding += n;
            request(n);
        }

        @Override
        protected void hookOnNext(Integer value) {
            check(violation, value == received, "subscriber got " + value + ", expected " + received);
            received = received + 1;
            if (--outstanding == 0) {
                more();
            }
        }

        @Override
        protected void hookOnComplete() {
            completed = true;
        }

        @Override
        protected void hookOnError(Throwable t) {
            violation.compareAndSet(null, "C failed: " + t);
        }
    }
}
