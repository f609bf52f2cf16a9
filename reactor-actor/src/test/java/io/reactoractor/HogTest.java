package io.reactoractor;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.spin;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hog detection and compensation: when every carrier is stuck in a task that runs longer than the
 * hog threshold (a busy spin, or a {@code publishOn} drain loop that never returns because items
 * keep arriving), the scheduler detects it, starts compensating threads so other actors still run,
 * and retires those threads once the hogs are gone.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HogTest {

    private final TestSupport.Resources resources = new TestSupport.Resources();
    private final AtomicBoolean stop = new AtomicBoolean();

    @AfterEach
    void disposeAll() {
        stop.set(true);
        resources.disposeAll();
    }

    private ActorScheduler newScheduler() {
        return resources.scheduler(ActorScheduler.builder()
                .name(uniqueName("hog"))
                .threads(2)
                .hogThreshold(Duration.ofMillis(50)));
    }

    @Test
    void lightTaskRunsWhileAllCarriersAreHoggedAndCompensationEndsAfterwards() {
        ActorScheduler s = newScheduler();
        CountDownLatch hogsStarted = new CountDownLatch(2);
        CountDownLatch hogsEnded = new CountDownLatch(2);
        for (int i = 0; i < 2; i++) {
            s.createWorker().schedule(() -> {
                hogsStarted.countDown();
                long start = System.nanoTime();
                // busy, never sleeping, for 3 s (or until the test ends)
                while (System.nanoTime() - start < 3_000_000_000L && !stop.get()) {
                    spin(100_000);
                }
                hogsEnded.countDown();
            });
        }
        await(hogsStarted, LONG, "both hogs occupy a carrier");
        TestSupport.sleepMillis(100);

        CountDownLatch light = new CountDownLatch(1);
        AtomicLong lightThreadHogsRunning = new AtomicLong(-1);
        long submitted = System.nanoTime();
        s.createWorker().schedule(() -> {
            lightThreadHogsRunning.set(hogsEnded.getCount());
            light.countDown();
        });
        await(light, Duration.ofSeconds(2), "light task runs within 2 s while both carriers are hogged");
        long lightDelayMs = (System.nanoTime() - submitted) / 1_000_000;
        assertTrue(lightThreadHogsRunning.get() == 2,
                "the light task ran while both hogs were still running (compensation, not hog completion)");
        await(Duration.ofSeconds(5), () -> s.stats().hogsDetected() >= 1, () -> "hogsDetected: " + s.stats());
        int compensatingDuringHog = s.stats().compensatingThreads();

        await(hogsEnded, LONG, "hogs end");
        await(Duration.ofSeconds(10), () -> s.stats().compensatingThreads() == 0,
                () -> "compensating threads retire after the hogs end: " + s.stats());
        System.out.printf("hog: light task ran after %d ms; compensating threads during the hog: %d; %s%n",
                lightDelayMs, compensatingDuringHog, s.stats());

        // the scheduler still works normally afterwards
        CountDownLatch after = new CountDownLatch(1);
        s.schedule(after::countDown);
        await(after, LONG, "scheduler works after the hogs");
    }

    @Test
    void lightPublishOnStreamProgressesNextToTwoNeverEndingPublishOnDrainLoops() {
        ActorScheduler s = newScheduler();
        AtomicLong hot1 = new AtomicLong();
        AtomicLong hot2 = new AtomicLong();
        AtomicLong lightItems = new AtomicLong();
        Disposable d1 = resources.track(hotStream(s, hot1));
        Disposable d2 = resources.track(hotStream(s, hot2));
        await(LONG, () -> hot1.get() > 1_000 && hot2.get() > 1_000,
                () -> "hot streams progress: " + hot1 + ", " + hot2);

        Disposable light = resources.track(Flux.interval(Duration.ofMillis(10))
                .publishOn(s)
                .subscribe(x -> lightItems.incrementAndGet()));
        await(Duration.ofSeconds(10), () -> lightItems.get() >= 10,
                () -> "light stream received " + lightItems.get() + " items; " + s.stats());
        assertTrue(s.stats().hogsDetected() >= 1, () -> "the drain loops were detected as hogs: " + s.stats());

        light.dispose();
        d1.dispose();
        d2.dispose();
        long h1 = hot1.get();
        await(Duration.ofSeconds(5), () -> {
            long before = hot1.get();
            TestSupport.sleepMillis(50);
            return hot1.get() == before;
        }, () -> "hot stream stops after cancel (was " + h1 + ", now " + hot1.get() + ")");
        await(Duration.ofSeconds(10), () -> s.stats().compensatingThreads() == 0,
                () -> "compensating threads retire after the drain loops end: " + s.stats());
    }

    @Test
    void aHogDetectedWhileTheSchedulerClosesGracefullyIsCompensatedSoQueuedWorkStillRuns() throws Exception {
        String name = uniqueName("hog-closing");
        ActorScheduler s = resources.scheduler(ActorScheduler.builder()
                .name(name)
                .threads(1)
                .hogThreshold(Duration.ofMillis(50))
                .maxCompensatingThreads(1));
        CountDownLatch hogStarted = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        s.createWorker().schedule(() -> {
            hogStarted.countDown();
            TestSupport.awaitQuietly(release, LONG); // blocked: a hog once past the threshold
        });
        await(hogStarted, LONG, "the hog occupies the only carrier");
        CountDownLatch queued = new CountDownLatch(1);
        s.createWorker().schedule(queued::countDown);
        // the close begins before the hog is detected (50 ms after it started, confirmed one check later)
        CountDownLatch closed = new CountDownLatch(1);
        s.disposeGracefully().subscribe(null, e -> { }, closed::countDown);
        try {
            // "queued tasks still run": a compensating carrier runs it while the hog blocks
            await(queued, LONG, "the queued task runs while the hog blocks the only carrier");
            assertTrue(s.stats().hogsDetected() >= 1, () -> "the hog was detected: " + s.stats());
            assertTrue(closed.getCount() == 1, "the close waits for the hog");
        } finally {
            release.countDown();
        }
        await(closed, LONG, "the graceful close ends once the hog returns");
        TestSupport.awaitNoThreadsOf(name, LONG);
    }

    /** An infinite synchronous source published on {@code s}: its drain loop never returns. */
    private static Disposable hotStream(ActorScheduler s, AtomicLong counter) {
        return Flux.<Long, Long>generate(() -> 0L, (i, sink) -> {
                    sink.next(i);
                    return i + 1;
                })
                .publishOn(s)
                .subscribe(x -> {
                    spin(5_000);
                    counter.incrementAndGet();
                });
    }
}
