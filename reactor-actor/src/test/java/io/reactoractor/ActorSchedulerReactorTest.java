package io.reactoractor;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.test.StepVerifier;

import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reactor operators run unchanged on an {@link ActorScheduler}: {@code publishOn},
 * {@code subscribeOn}, {@code Mono.delay}, {@code Flux.interval}, {@code parallel().runOn}, on the
 * scheduler and on one of its groups; and {@code block()} fails fast inside a task because the
 * carriers are {@link reactor.core.scheduler.NonBlocking}.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ActorSchedulerReactorTest {

    private static final Duration VERIFY = Duration.ofSeconds(30);

    private final TestSupport.Resources resources = new TestSupport.Resources();

    @AfterEach
    void disposeAll() {
        resources.disposeAll();
    }

    private ActorScheduler newScheduler() {
        return resources.scheduler(ActorScheduler.builder().name(uniqueName("reactor")).threads(2));
    }

    private static boolean onCarrier(ActorScheduler s) {
        return Thread.currentThread().getName().startsWith(s.name() + "-");
    }

    private static void assertPublishOnDeliversAllInOrder(Scheduler scheduler, ActorScheduler owner) {
        List<Integer> expected = IntStream.rangeClosed(1, 10_000).boxed().collect(Collectors.toList());
        AtomicInteger offCarrier = new AtomicInteger();
        StepVerifier.create(Flux.range(1, 10_000)
                        .hide()
                        .publishOn(scheduler)
                        .doOnNext(i -> {
                            if (!onCarrier(owner)) {
                                offCarrier.incrementAndGet();
                            }
                        }))
                .expectNextSequence(expected)
                .expectComplete()
                .verify(VERIFY);
        assertEquals(0, offCarrier.get(), "items delivered off the scheduler's threads");
    }

    @Test
    void publishOnDeliversAllItemsInOrder() {
        ActorScheduler s = newScheduler();
        assertPublishOnDeliversAllInOrder(s, s);
    }

    @Test
    void publishOnWithSmallPrefetchAndManyConcurrentStreams() {
        ActorScheduler s = newScheduler();
        // 50 streams, each a chain of two publishOn hops with prefetch 8 (many small turns)
        Flux<Long> all = Flux.range(0, 50)
                .flatMap(i -> Flux.range(0, 2_000).hide()
                        .publishOn(s, 8)
                        .map(x -> (long) x)
                        .publishOn(s, 8)
                        .reduce(0L, Long::sum), 50);
        StepVerifier.create(all.reduce(0L, Long::sum))
                .expectNext(50L * (1_999L * 2_000L / 2))
                .expectComplete()
                .verify(VERIFY);
    }

    @Test
    void subscribeOnSubscribesOnACarrier() {
        ActorScheduler s = newScheduler();
        AtomicReference<String> subscribedOn = new AtomicReference<>();
        StepVerifier.create(Flux.range(1, 100)
                        .doOnSubscribe(sub -> subscribedOn.set(Thread.currentThread().getName()))
                        .subscribeOn(s)
                        .count())
                .expectNext(100L)
                .expectComplete()
                .verify(VERIFY);
        assertNotNull(subscribedOn.get());
        assertTrue(subscribedOn.get().startsWith(s.name() + "-"), () -> "subscribed on " + subscribedOn.get());

        StepVerifier.create(Mono.fromCallable(() -> Thread.currentThread().getName()).subscribeOn(s))
                .assertNext(name -> assertTrue(name.startsWith(s.name() + "-"), name))
                .expectComplete()
                .verify(VERIFY);
    }

    @Test
    void subscribeOnThenPublishOnBackToBackKeepsOrder() {
        ActorScheduler s = newScheduler();
        List<Integer> expected = IntStream.range(0, 20_000).boxed().collect(Collectors.toList());
        StepVerifier.create(Flux.range(0, 20_000).subscribeOn(s).hide().publishOn(s))
                .expectNextSequence(expected)
                .expectComplete()
                .verify(VERIFY);
    }

    @Test
    void monoDelay() {
        ActorScheduler s = newScheduler();
        AtomicReference<String> thread = new AtomicReference<>();
        StepVerifier.create(Mono.delay(Duration.ofMillis(10), s)
                        .doOnNext(x -> thread.set(Thread.currentThread().getName())))
                .expectNext(0L)
                .expectComplete()
                .verify(VERIFY);
        assertTrue(thread.get().startsWith(s.name() + "-"), () -> "delay fired on " + thread.get());
    }

    @Test
    void fluxInterval() {
        ActorScheduler s = newScheduler();
        StepVerifier.create(Flux.interval(Duration.ofMillis(5), s).take(5))
                .expectNext(0L, 1L, 2L, 3L, 4L)
                .expectComplete()
                .verify(VERIFY);
    }

    @Test
    void parallelRunOn() {
        ActorScheduler s = newScheduler();
        StepVerifier.create(Flux.range(1, 100_000).parallel(4).runOn(s).map(i -> (long) i)
                        .reduce(Long::sum))
                .expectNext(100_000L * 100_001L / 2)
                .expectComplete()
                .verify(VERIFY);
    }

    private static Throwable blockInsideTask(ActorScheduler s, Runnable blocking) {
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        s.schedule(() -> {
            try {
                blocking.run();
            } catch (Throwable t) {
                error.set(t);
            } finally {
                done.countDown();
            }
        });
        // if block() were allowed, Mono.never() would hang the carrier forever: bound the wait
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> await(done, Duration.ofSeconds(20),
                "block() inside a task returned or failed"));
        return error.get();
    }

    @Test
    void blockInsideTaskFailsFast() {
        ActorScheduler s = newScheduler();
        Throwable never = blockInsideTask(s, () -> Mono.never().block());
        assertInstanceOf(IllegalStateException.class, never, "Mono.never().block() on a carrier");
        assertTrue(never.getMessage().contains("block"), never::getMessage);

        Throwable delayed = blockInsideTask(s, () -> Mono.just(1).delayElement(Duration.ofMillis(50)).block());
        assertInstanceOf(IllegalStateException.class, delayed, "Mono.delayElement(..).block() on a carrier");

        Throwable fluxBlock = blockInsideTask(s, () -> Flux.just(1, 2).delayElements(Duration.ofMillis(5)).blockLast());
        assertInstanceOf(IllegalStateException.class, fluxBlock, "Flux.blockLast() on a carrier");
    }

    @Test
    void groupSchedulerWorksWithPublishOnAndSubscribeOn() {
        ActorScheduler s = newScheduler();
        ActorGroup g = s.group("g", 2);
        assertEquals("g", g.name());
        assertEquals(2, g.weight());
        assertPublishOnDeliversAllInOrder(g, s);

        StepVerifier.create(Mono.fromCallable(() -> Thread.currentThread().getName()).subscribeOn(g))
                .assertNext(name -> assertTrue(name.startsWith(s.name() + "-"), name))
                .expectComplete()
                .verify(VERIFY);
        StepVerifier.create(Mono.delay(Duration.ofMillis(5), g))
                .expectNext(0L)
                .expectComplete()
                .verify(VERIFY);
    }
}
