package io.reactoractor.blockhound;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The scheduler under {@code BlockHound.install()}, as Reactor users run their tests. Runs in its own
 * JVM (surefire execution {@code blockhound}: BlockHound instruments the JDK for the whole JVM, and
 * JDK 17 needs {@code -XX:+AllowRedefinitionToAddDeleteMethods}).
 */
class BlockHoundIntegrationTest {

    private final List<Throwable> reported = new CopyOnWriteArrayList<>();
    private ActorScheduler scheduler;

    @BeforeAll
    static void installBlockHound() {
        BlockHound.install(); // loads ActorBlockHoundIntegration (and Reactor's) through ServiceLoader
    }

    @BeforeEach
    void setUp() {
        Schedulers.onHandleError("blockhound-test", (t, e) -> reported.add(e));
        scheduler = ActorScheduler.builder().name("bh").threads(2).build();
    }

    @AfterEach
    void tearDown() {
        scheduler.dispose();
        Schedulers.resetOnHandleError();
    }

    @Test
    void carriersSurviveTheirOwnIdleLoopAndTimerLock() throws InterruptedException {
        // Each round lets the carriers go idle (spin, then park) before the next task arrives: without
        // the integration the first idle spin kills both carriers and the next task never runs.
        for (int round = 0; round < 20; round++) {
            String thread = Mono.fromCallable(() -> Thread.currentThread().getName())
                    .subscribeOn(scheduler)
                    .block(Duration.ofSeconds(30));
            assertTrue(thread.startsWith("bh-"), thread);
            Thread.sleep(2);
        }
        // Delays and timeouts arm and cancel timer entries from the carriers (the timer's lock).
        Long delivered = Flux.range(0, 20_000)
                .flatMap(i -> Mono.delay(Duration.ofMillis(1), scheduler)
                        .timeout(Duration.ofSeconds(60), scheduler), 256)
                .count()
                .block(Duration.ofSeconds(120));
        assertEquals(20_000L, delivered);
        assertEquals(List.of(), reported, "errors reported by the scheduler");
        assertEquals(0, scheduler.stats().failedTasks(), "failed tasks");
    }

    /**
     * Turns the host takes part of (three spinning threads beside two carriers) make a carrier read its scheduler
     * statistics file on Linux (StolenTime): allowed, as the file it opened when it started.
     */
    @Test
    void carriersSurviveReadingTheirSchedulerStatisticsWhenTheHostIsBusy() throws InterruptedException {
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> hogs = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    Thread.onSpinWait();
                }
            }, "hog-" + i);
            t.setDaemon(true);
            t.start();
            hogs.add(t);
        }
        try {
            Long ran = Flux.range(0, 200)
                    .flatMap(i -> Mono.fromCallable(() -> {
                        long end = System.nanoTime() + 2_000_000L; // 2 ms turns: long enough to be checked
                        long x = i;
                        while (System.nanoTime() < end) {
                            x = x * 31 + 7; // busy (Thread.onSpinWait counts as blocking under BlockHound)
                        }
                        return x;
                    }).subscribeOn(scheduler), 8)
                    .count()
                    .block(Duration.ofSeconds(120));
            assertEquals(200L, ran);
        } finally {
            stop.set(true);
            for (Thread t : hogs) {
                t.join(5_000);
            }
        }
        assertEquals(List.of(), reported, "errors reported by the scheduler");
        assertEquals(0, scheduler.stats().failedTasks(), "failed tasks");
    }

    @Test
    void blockingInsideAUserTaskIsStillReported() throws InterruptedException {
        AtomicReference<Throwable> seen = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        scheduler.schedule(() -> {
            try {
                Thread.sleep(1);
            } catch (Throwable t) {
                seen.set(t);
            }
            done.countDown();
        });
        assertTrue(done.await(30, TimeUnit.SECONDS), "the task ran");
        assertInstanceOf(BlockingOperationError.class, seen.get(), "Thread.sleep on a carrier is reported");

        // and the carrier that ran it is still serving
        String thread = Mono.fromCallable(() -> Thread.currentThread().getName())
                .subscribeOn(scheduler)
                .block(Duration.ofSeconds(30));
        assertTrue(thread.startsWith("bh-"), thread);
    }

    /**
     * Found by a black-box probe: the integration allowed blocking calls anywhere inside the carriers' idle loop,
     * and a graceful shutdown delivers its termination signals from that loop (the last carrier to go idle
     * terminates the engine), so a subscriber's blocking {@code onError} there went unreported. Only the spin and
     * the park are allowed now.
     */
    @Test
    void aSubscribersBlockingCallInATerminationSignalFromAnIdleCarrierIsReported() throws Exception {
        io.reactoractor.actor.Actor<Integer, Integer> actor = io.reactoractor.actor.Actor.<Integer, Integer>builder(
                scheduler).behaviour((m, ctx) -> true).build();
        AtomicReference<String> thread = new AtomicReference<>();
        AtomicReference<Throwable> seen = new AtomicReference<>();
        CountDownLatch signalled = new CountDownLatch(1);
        Flux.from(actor).subscribe(x -> { }, e -> {
            thread.set(Thread.currentThread().getName());
            try {
                Thread.sleep(1);
            } catch (Throwable t) {
                seen.set(t);
            }
            signalled.countDown();
        });
        Thread.sleep(20); // the carriers go idle
        scheduler.disposeGracefully().subscribe();
        assertTrue(signalled.await(30, TimeUnit.SECONDS), "the actor's subscriber was signalled");
        assertTrue(thread.get().startsWith("bh-"), "signalled by an idle carrier: " + thread.get());
        assertInstanceOf(BlockingOperationError.class, seen.get(), "Thread.sleep in onError on a carrier is reported");
    }

    @Test
    void thePullConsumersSpinWhileAPairRetiresIsAllowedOnACarrier() throws Exception {
        // the spin itself, as submit() runs it when a pair retires under a pull or an ack
        assertSpinAllowedOnACarrier(io.reactoractor.pull.PullConsumer.class.getDeclaredMethod("retiring"));
    }

    @Test
    void theGroupActorsSpinWhileItDecidesToRetireIsAllowedOnACarrier() throws Exception {
        // the spin itself, as post() runs it when an attached consumer's pull or a Delivery's ack meets the
        // pair's actor between its retirement and its re-check
        assertSpinAllowedOnACarrier(Class.forName("io.reactoractor.pull.ConsumerGroupActor")
                .getDeclaredMethod("awaitingRetirementDecision"));
    }

    private void assertSpinAllowedOnACarrier(java.lang.reflect.Method retiring) throws Exception {
        retiring.setAccessible(true);
        AtomicReference<Throwable> seen = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        scheduler.schedule(() -> {
            try {
                retiring.invoke(null);
            } catch (Throwable t) {
                seen.set(t);
            }
            done.countDown();
        });
        assertTrue(done.await(30, TimeUnit.SECONDS), "the task ran");
        assertEquals(null, seen.get(), "the library's own spin is not reported as blocking");
    }
}
