package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;

/**
 * Two hot, infinite streams (about 5 µs of busy work per element) and one light stream (a tick every
 * 10 ms) share a 2-thread {@link ActorScheduler} whose hog threshold (10 s) is far beyond the test, so
 * no compensating thread can help: with {@link ActorOperators#publishOn} every element is one message
 * and a hot actor's turn ends at the preemption point as soon as the light stream's actor waits, so
 * the light ticks are delivered within about the preemption granularity (0.5 ms), not a quota (5 ms).
 *
 * <p>Contrast: with Reactor's own {@code publishOn(scheduler)} each hot stream's drain loop is one
 * task that never returns while its synchronous upstream keeps refilling the queue; once both loops
 * run, both threads are held and the light stream receives nothing until the hog detector adds a
 * thread (after 10 s here, beyond the test).
 */
class FairPublishOnTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("fair-publish-on").threads(2)
            .hogThreshold(Duration.ofSeconds(10)).build();
    private final Disposable.Composite subscriptions = Disposables.composite();

    @AfterEach
    void tearDown() {
        subscriptions.dispose();
        assertTrue(ActorTestSupport.disposeBounded(scheduler), "dispose() hung");
    }

    static void busy(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    private static Flux<Long> hot() {
        return Flux.generate(() -> 0L, (i, sink) -> {
            sink.next(i);
            return i + 1;
        });
    }

    /** What the light stream got. */
    private record Light(long ticks, long medianDelayNanos) {
    }

    /** @return light ticks received within {@code window} while two hot streams run, and their median delay */
    private Light run(boolean fair, Duration window) throws InterruptedException {
        AtomicLong heavy = new AtomicLong();
        for (int i = 0; i < 2; i++) {
            Flux<Long> h = fair ? Flux.from(hot().transform(ActorOperators.publishOn(scheduler)))
                    : hot().publishOn(scheduler);
            subscriptions.add(h.subscribe(v -> {
                busy(5_000);
                heavy.incrementAndGet();
            }));
        }
        // let the hot streams occupy the threads first
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (heavy.get() < 1_000 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        java.util.List<Long> delays = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        // each tick carries its emission time (taken on the interval's own thread)
        Flux<Long> ticks = Flux.interval(Duration.ofMillis(10)).map(i -> System.nanoTime()).onBackpressureDrop();
        Flux<Long> l = fair ? Flux.from(ticks.transform(ActorOperators.publishOn(scheduler)))
                : ticks.publishOn(scheduler);
        subscriptions.add(l.subscribe(emitted -> delays.add(System.nanoTime() - emitted)));
        Thread.sleep(window.toMillis());
        long[] sorted;
        synchronized (delays) {
            sorted = delays.stream().mapToLong(Long::longValue).sorted().toArray();
        }
        long median = sorted.length == 0 ? Long.MAX_VALUE : sorted[sorted.length / 2];
        System.out.printf("%s publishOn: light ticks in %d ms = %d (median delay %.3f ms), heavy elements = %d%n",
                fair ? "fair (ActorOperators)" : "plain (Reactor)", window.toMillis(), sorted.length,
                median / 1e6, heavy.get());
        return new Light(sorted.length, median);
    }

    @Test
    @Timeout(30)
    void lightStreamIsServedWhileTwoHotStreamsRun() throws Exception {
        Light light = run(true, Duration.ofSeconds(5));
        // 500 ticks are possible; 20 is a generous floor for 2 noisy cores
        assertTrue(light.ticks() >= 20, "light stream starved with the fair publishOn: " + light);
        // preemption at task boundaries: well under a quota (5 ms; a turn cut only by the quota gives a
        // median of about 2 ms here); typically tens of microseconds
        assertTrue(light.medianDelayNanos() < 1_250_000, "light ticks waited for the quota, not the preemption "
                + "point: " + light);
    }

    @Test
    @Timeout(30)
    void contrastPlainPublishOnStarvesTheLightStream() throws Exception {
        Light light = run(false, Duration.ofSeconds(3));
        // both threads are held by the never-returning drain loops, and no compensating thread starts
        // before the 10 s hog threshold
        org.junit.jupiter.api.Assertions.assertEquals(0, light.ticks(), "Reactor's publishOn drain loops "
                + "returned: " + light);
    }
}
