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
 * and every turn ends at the quota, so the light stream keeps getting ticks.
 *
 * <p>Contrast (printed, not asserted, because how soon the hogs take both threads is timing): with
 * Reactor's own {@code publishOn(scheduler)} each hot stream's drain loop is one task that never
 * returns while its synchronous upstream keeps refilling the queue, so both threads are held and the
 * light stream typically receives nothing until the hog detector adds a thread (after 10 s here).
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

    /** @return light ticks received within {@code window} while two hot streams run */
    private long run(boolean fair, Duration window) throws InterruptedException {
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
        AtomicLong light = new AtomicLong();
        Flux<Long> ticks = Flux.interval(Duration.ofMillis(10)).onBackpressureDrop();
        Flux<Long> l = fair ? Flux.from(ticks.transform(ActorOperators.publishOn(scheduler)))
                : ticks.publishOn(scheduler);
        subscriptions.add(l.subscribe(v -> light.incrementAndGet()));
        Thread.sleep(window.toMillis());
        long result = light.get();
        System.out.printf("%s publishOn: light ticks in %d ms = %d, heavy elements = %d%n",
                fair ? "fair (ActorOperators)" : "plain (Reactor)", window.toMillis(), result, heavy.get());
        return result;
    }

    @Test
    @Timeout(30)
    void lightStreamIsServedWhileTwoHotStreamsRun() throws Exception {
        long light = run(true, Duration.ofSeconds(5));
        // 500 ticks are possible; 20 is a generous floor for 2 noisy cores
        assertTrue(light >= 20, "light stream starved with the fair publishOn: " + light + " ticks in 5 s");
    }

    @Test
    @Timeout(30)
    void contrastPlainPublishOnStarvesTheLightStream() throws Exception {
        long light = run(false, Duration.ofSeconds(3));
        // documented, not asserted: typically 0 (both threads held by the hot drain loops)
        assertTrue(light >= 0);
    }
}
