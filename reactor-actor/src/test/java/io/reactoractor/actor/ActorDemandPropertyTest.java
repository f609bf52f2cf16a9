package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * Property: at every sample, the outstanding demand of all upstreams plus the messages waiting in the
 * mailbox never exceeds the capacity. Random interleavings (seeded) of downstream requests, upstream
 * emissions (never more than requested) and samples, with 1 to 3 upstreams.
 *
 * <p>Sampling is race-free in the safe direction: the upstreams' requested totals are read first, then
 * the mailbox size, then the emitted totals (a message counted in the mailbox was emitted before, so it
 * is also subtracted; demand granted after the first read is not counted).
 */
class ActorDemandPropertyTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-demand").threads(2).build();

    @AfterEach
    void tearDown() {
        assertTrue(ActorTestSupport.disposeBounded(scheduler), "dispose() hung");
    }

    /**
     * An upstream whose emissions the test thread drives. Demand is observed with {@code Flux.doOnRequest};
     * the source only emits what reached it (its own counter), so it is a compliant publisher.
     */
    static final class Upstream {
        final int id;
        final AtomicLong requested = new AtomicLong();   // seen by doOnRequest
        final AtomicLong sourceDemand = new AtomicLong(); // reached the source
        final AtomicLong emitted = new AtomicLong();
        volatile org.reactivestreams.Subscriber<? super Long> subscriber;
        volatile boolean cancelled;
        final Flux<Long> flux;

        Upstream(int id) {
            this.id = id;
            org.reactivestreams.Publisher<Long> source = s -> {
                subscriber = s;
                s.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                        sourceDemand.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
                    }

                    @Override
                    public void cancel() {
                        cancelled = true;
                    }
                });
            };
            this.flux = Flux.from(source).doOnRequest(n -> requested.accumulateAndGet(n,
                    (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b));
        }

        /** Emits up to {@code k} messages, never more than requested. */
        void emit(int k) {
            for (int i = 0; i < k && emitted.get() < sourceDemand.get() && !cancelled; i++) {
                long seq = emitted.get();
                // counted before the hand-off: a message in the mailbox is always counted as emitted
                emitted.incrementAndGet();
                subscriber.onNext(((long) id << 40) | seq);
            }
        }

        void complete() {
            subscriber.onComplete();
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 7, 42, 1234, 98765, 20260101})
    @Timeout(30)
    void outstandingDemandPlusMailboxNeverExceedsCapacity(long seed) throws Exception {
        Random rnd = new Random(seed);
        int capacity = new int[] {1, 2, 5, 16, 64}[rnd.nextInt(5)];
        int upstreams = 1 + rnd.nextInt(3);
        Actor<Long, Long> actor = Actor.identity(scheduler, capacity);
        List<Upstream> ups = new ArrayList<>();
        for (int i = 0; i < upstreams; i++) {
            Upstream u = new Upstream(i);
            ups.add(u);
            u.flux.subscribe(actor.newSubscriber());
        }
        AtomicLong received = new AtomicLong();
        long[] lastSeq = new long[upstreams];
        java.util.Arrays.fill(lastSeq, -1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        java.util.concurrent.CountDownLatch completed = new java.util.concurrent.CountDownLatch(1);
        BaseSubscriber<Long> down = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
            }

            @Override
            protected void hookOnNext(Long v) {
                int id = (int) (v >>> 40);
                long seq = v & ((1L << 40) - 1);
                if (seq != lastSeq[id] + 1) {
                    failure.compareAndSet(null, new AssertionError("upstream " + id + ": " + seq + " after "
                            + lastSeq[id]));
                }
                lastSeq[id] = seq;
                received.incrementAndGet();
            }

            @Override
            protected void hookOnError(Throwable t) {
                failure.compareAndSet(null, t);
            }

            @Override
            protected void hookOnComplete() {
                completed.countDown();
            }
        };
        actor.subscribe(down);

        int samples = 0;
        long maxSeen = 0;
        for (int step = 0; step < 20_000; step++) {
            int action = rnd.nextInt(10);
            if (action < 3) {
                down.request(1 + rnd.nextInt(Math.max(1, capacity)));
            } else if (action < 7) {
                ups.get(rnd.nextInt(upstreams)).emit(1 + rnd.nextInt(2 * capacity));
            } else if (action == 7) {
                Thread.yield();
            } else if (action == 8 && rnd.nextInt(50) == 0) {
                Thread.sleep(1);
            }
            // sample after every step
            long r = 0;
            for (Upstream u : ups) {
                r += u.requested.get();
            }
            long m = actor.mailboxSize();
            long e = 0;
            for (Upstream u : ups) {
                e += u.emitted.get();
            }
            long total = r - e + m;
            samples++;
            maxSeen = Math.max(maxSeen, total);
            assertTrue(total <= capacity, "seed " + seed + " step " + step + ": outstanding " + (r - e)
                    + " + mailbox " + m + " > capacity " + capacity);
            assertTrue(r - e >= 0, "an upstream emitted more than requested (test bug)");
            assertNull(failure.get(), () -> "downstream failed: " + failure.get());
        }
        // drain: complete every upstream, request the rest
        for (Upstream u : ups) {
            u.complete();
        }
        down.request(Long.MAX_VALUE);
        assertTrue(completed.await(20, TimeUnit.SECONDS), "actor did not complete; received " + received.get());
        assertNull(failure.get());
        long emitted = ups.stream().mapToLong(u -> u.emitted.get()).sum();
        assertEquals(emitted, received.get(), "every emitted message arrives exactly once");
        assertTrue(samples > 0 && maxSeen <= capacity);
    }
}
