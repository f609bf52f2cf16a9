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
import reactor.core.publisher.Mono;

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

    /**
     * What the light stream got: its ticks, their median delay (emission to delivery, wall clock: for
     * the log), and the median number of hot elements processed between a tick's emission and its
     * delivery. That count is a logical clock: a carrier the OS deschedules runs no hot element either,
     * so it measures where the scheduler let the light actor in, however busy the machine.
     */
    private record Light(long ticks, long medianDelayNanos, long medianHotElementsBetween) {
    }

    /** @return light ticks received within {@code window} while two hot streams run, and their median delay */
    private Light run(boolean fair, Duration window) throws InterruptedException {
        return run(fair, false, window);
    }

    /**
     * As above; with {@code fusedDownstream} each hot stream goes on through {@code concatMap}, which
     * fuses with the operator (ASYNC) and polls its queue inside the turn's {@code onNext(null)}.
     */
    private Light run(boolean fair, boolean fusedDownstream, Duration window) throws InterruptedException {
        AtomicLong heavy = new AtomicLong();
        for (int i = 0; i < 2; i++) {
            Flux<Long> h = fair ? Flux.from(hot().transform(ActorOperators.publishOn(scheduler)))
                    : hot().publishOn(scheduler);
            if (fusedDownstream) {
                // with a prefetch: FluxConcatMap, which fuses (the no-prefetch one does not)
                h = h.concatMap(Mono::just, 32);
            }
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
        java.util.List<Long> between = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        // each tick carries its emission time and the hot element count (taken on the interval's thread)
        Flux<long[]> ticks = Flux.interval(Duration.ofMillis(10)).map(i -> new long[] {System.nanoTime(), heavy.get()})
                .onBackpressureDrop();
        Flux<long[]> l = fair ? Flux.from(ticks.transform(ActorOperators.publishOn(scheduler)))
                : ticks.publishOn(scheduler);
        subscriptions.add(l.subscribe(emitted -> {
            between.add(heavy.get() - emitted[1]);
            delays.add(System.nanoTime() - emitted[0]);
        }));
        Thread.sleep(window.toMillis());
        long median = median(delays);
        long medianBetween = median(between);
        System.out.printf("%s publishOn%s: light ticks in %d ms = %d (median delay %.3f ms, median hot elements in "
                + "between %d), heavy elements = %d%n", fair ? "fair (ActorOperators)" : "plain (Reactor)",
                fusedDownstream ? " + fused concatMap" : "",
                window.toMillis(), delays.size(), median / 1e6, medianBetween, heavy.get());
        return new Light(delays.size(), median, medianBetween);
    }

    private static long median(java.util.List<Long> values) {
        long[] sorted;
        synchronized (values) {
            sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
        }
        return sorted.length == 0 ? Long.MAX_VALUE : sorted[sorted.length / 2];
    }

    @Test
    @Timeout(30)
    void lightStreamIsServedWhileTwoHotStreamsRun() throws Exception {
        Light light = run(true, Duration.ofSeconds(5));
        // 500 ticks are possible; 20 is a generous floor for 2 noisy cores
        assertTrue(light.ticks() >= 20, "light stream starved with the fair publishOn: " + light);
        // Preemption at task boundaries: a waiting light actor cuts in after the next preemption check
        // (62 us, about a dozen 5 us elements per carrier). A turn cut only by the quota runs about 1,000
        // elements (5 ms), so the light tick would wait for hundreds of elements of both carriers. Counted
        // in elements, not time, so that a descheduled carrier (a busy CI machine) does not count: the
        // quiet-machine delay (tens of microseconds) is a benchmark figure (FairnessRunner publish-on).
        assertTrue(light.medianHotElementsBetween() < 300, "light ticks waited for the quota, not the preemption "
                + "point: " + light);
    }

    /**
     * The same with a fused downstream: {@code concatMap} polls the operator's queue itself, inside one
     * {@code onNext(null)} of the turn, while each poll's replenishment makes the synchronous upstream
     * refill the queue on the spot. Each poll is a task boundary of the turn, so the hot turn still ends
     * at the preemption point; without that, one {@code onNext(null)} would never return.
     */
    @Test
    @Timeout(30)
    void lightStreamIsServedWhileTwoFusedHotStreamsRun() throws Exception {
        Light light = run(true, true, Duration.ofSeconds(5));
        assertTrue(light.ticks() >= 20, "light stream starved with the fused fair publishOn: " + light);
        assertTrue(light.medianHotElementsBetween() < 300, "light ticks waited for the quota, not the preemption "
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
