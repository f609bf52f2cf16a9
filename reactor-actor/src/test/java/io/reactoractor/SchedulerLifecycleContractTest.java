package io.reactoractor;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.awaitQuietly;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The parts of Reactor's scheduler contract that reactor-core's own scheduler tests check
 * ({@code AbstractSchedulerTest}, {@code SchedulersTest}, {@code SchedulersHooksTest}) and the contract
 * test beside this one did not: the deprecated {@code start()} after a disposal (restart is not supported:
 * the scheduler stays disposed, as Reactor's test expects of such a scheduler), repeated and concurrent
 * graceful disposals, the {@code isDisposed()} of delayed and one-shot tasks, FIFO order of equal delays,
 * {@code onSchedule} hooks applied exactly once each, and a scheduler-wide graceful disposal that runs
 * accepted delayed tasks and cancels periodic ones.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SchedulerLifecycleContractTest {

    private final TestSupport.Resources resources = new TestSupport.Resources();

    @AfterEach
    void disposeAll() {
        resources.disposeAll();
    }

    private ActorScheduler newScheduler(int threads) {
        return resources.scheduler(ActorScheduler.builder().name(uniqueName("lifecycle")).threads(threads));
    }

    /** Reactor's {@code restartSupport} for a scheduler without restart: {@code start()} leaves it disposed. */
    @Test
    @SuppressWarnings("deprecation")
    void startAfterDisposeDoesNotRestartAndTasksAreRejectedWithReactorsInstance() {
        ActorScheduler s = newScheduler(1);
        ActorWorker w = s.createWorker();
        ActorGroup g = s.group("g", 1);
        s.dispose();
        s.start();
        g.start();
        assertTrue(s.isDisposed());
        assertTrue(g.isDisposed());
        assertThrows(IllegalStateException.class, s::init, "init() says so");
        assertThrows(IllegalStateException.class, g::init, "init() says so");
        for (Runnable call : List.<Runnable>of(() -> s.schedule(() -> { }), () -> w.schedule(() -> { }),
                () -> g.schedule(() -> { }), () -> s.createWorker().schedule(() -> { }),
                () -> s.schedule(() -> { }, 1, TimeUnit.MILLISECONDS))) {
            RejectedExecutionException e = assertThrows(RejectedExecutionException.class, call::run);
            assertSame(Exceptions.failWithRejected(), e, "Reactor's shared rejection, as its schedulers throw");
        }
    }

    /**
     * {@code groups()}: "retired and disposed ones are not" listed; the scheduler's disposal disposes every group,
     * so none is listed after it (they used to stay listed, each answering {@code isDisposed()} true), whether
     * the disposal is forced or graceful. {@code stats()} keeps their last figures, as its doc says.
     */
    @Test
    void aDisposedSchedulerListsNoGroups() {
        for (boolean graceful : new boolean[] {false, true}) {
            ActorScheduler s = newScheduler(1);
            ActorGroup g = s.group("g", 1);
            assertEquals(List.of(s.defaultGroup(), g).size(), s.groups().size());
            assertTrue(s.groups().contains(g) && s.groups().contains(s.defaultGroup()));
            if (graceful) {
                s.disposeGracefully().block(LONG);
            } else {
                s.dispose();
            }
            assertTrue(g.isDisposed() && s.defaultGroup().isDisposed());
            assertEquals(List.of(), s.groups(), graceful ? "graceful" : "forced");
            assertTrue(s.stats().groups().stream().anyMatch(x -> x.name().equals("g")), "stats keep the figures");
        }
    }

    /**
     * Reactor's {@code multipleDisposeGracefully} and {@code cannotInitAfterDispose}: each graceful disposal
     * waits while a task holds the scheduler (and may be given up and subscribed to again), all complete once
     * it ends, a later one completes at once, and {@code init()} then throws. For the scheduler and a group.
     */
    @Test
    void gracefulDisposalsWaitCanBeRetriedAndAllComplete() {
        ActorScheduler s = newScheduler(2);
        checkGracefulDisposals(s, s::init);
        ActorScheduler t = newScheduler(2);
        ActorGroup g = t.group("g", 1);
        checkGracefulDisposals(g, g::init);
    }

    private static void checkGracefulDisposals(Scheduler s, Runnable init) {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        s.schedule(() -> {
            running.countDown();
            awaitQuietly(release, LONG);
        });
        await(running, LONG, "the task holding the scheduler runs");
        Mono<Void> first = s.disposeGracefully();
        Mono<Void> second = s.disposeGracefully();
        assertThrows(RuntimeException.class, () -> first.block(Duration.ofMillis(50)), "waits for the task");
        assertThrows(RuntimeException.class, () -> second.block(Duration.ofMillis(50)), "waits for the task");
        assertTrue(s.isDisposed(), "disposed (refusing work) while it drains");
        assertThrows(IllegalStateException.class, init::run, "no init while shutting down");
        release.countDown();
        first.block(LONG); // subscribed again after giving up: completes once the task ended
        second.block(LONG);
        s.disposeGracefully().block(Duration.ofSeconds(5)); // already terminated: at once
        assertThrows(IllegalStateException.class, init::run, "no init after a graceful disposal");
    }

    /**
     * Reactor's {@code directScheduleAndDisposeDelay}: a delayed task is not disposed while it runs; it, an
     * immediate task and a worker's delayed task report disposed once they ran.
     */
    @Test
    void delayedAndOneShotTasksReportDisposedOnlyOnceTheyRan() {
        ActorScheduler s = newScheduler(2);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Disposable delayed = s.schedule(() -> {
            running.countDown();
            awaitQuietly(release, LONG);
        }, 10, TimeUnit.MILLISECONDS);
        await(running, LONG, "the delayed task runs");
        assertFalse(delayed.isDisposed(), "a running delayed task is not disposed");
        release.countDown();
        Disposable once = s.schedule(() -> { });
        Disposable later = s.createWorker().schedule(() -> { }, 5, TimeUnit.MILLISECONDS);
        await(LONG, () -> delayed.isDisposed() && once.isDisposed() && later.isDisposed(),
                "tasks that ran report disposed");
    }

    /** {@code Worker.schedule(task, delay, unit)}: tasks with the same delay from one thread run in FIFO order. */
    @Test
    void equalDelaysFromOneThreadRunInFifoOrder() {
        ActorScheduler s = newScheduler(2);
        ActorWorker w = s.createWorker();
        List<Integer> order = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            int n = i;
            w.schedule(() -> order.add(n), 20, TimeUnit.MILLISECONDS);
        }
        await(LONG, () -> order.size() == 1_000, () -> "all ran: " + order.size());
        assertEquals(IntStream.range(0, 1_000).boxed().collect(Collectors.toList()), order);
    }

    /**
     * Reactor's {@code onScheduleIsAdditive}: every registered hook decorates each task exactly once, whatever
     * the path (scheduler, worker, group, delayed, periodic's first run).
     */
    @Test
    void eachOnScheduleHookDecoratesEachTaskExactlyOnce() {
        String k1 = uniqueName("hook1");
        String k2 = uniqueName("hook2");
        String k3 = uniqueName("hook3");
        AtomicInteger tracker = new AtomicInteger();
        Schedulers.onScheduleHook(k1, r -> { tracker.addAndGet(1); return r; });
        Schedulers.onScheduleHook(k2, r -> { tracker.addAndGet(10); return r; });
        Schedulers.onScheduleHook(k3, r -> { tracker.addAndGet(100); return r; });
        try {
            ActorScheduler s = newScheduler(2);
            CountDownLatch ran = new CountDownLatch(5);
            s.schedule(ran::countDown);
            s.createWorker().schedule(ran::countDown);
            s.group("g", 1).schedule(ran::countDown);
            s.schedule(ran::countDown, 1, TimeUnit.MILLISECONDS);
            AtomicBoolean first = new AtomicBoolean(true);
            Disposable periodic = s.schedulePeriodically(() -> {
                if (first.getAndSet(false)) {
                    ran.countDown();
                }
            }, 1, 1, TimeUnit.MILLISECONDS);
            await(ran, LONG, "every task ran");
            periodic.dispose();
            assertEquals(555, tracker.get(), "each of the three hooks once per scheduled task");
        } finally {
            Schedulers.resetOnScheduleHook(k1);
            Schedulers.resetOnScheduleHook(k2);
            Schedulers.resetOnScheduleHook(k3);
        }
    }

    /**
     * A scheduler-wide graceful disposal, as a {@code ScheduledThreadPoolExecutor.shutdown()}: accepted delayed
     * one-shot tasks still run, periodic tasks are cancelled, and the scheduler terminates.
     */
    @Test
    void aGracefulDisposalRunsAcceptedDelayedTasksAndCancelsPeriodicOnes() {
        ActorScheduler s = newScheduler(2);
        AtomicBoolean delayedRan = new AtomicBoolean();
        AtomicBoolean workerDelayedRan = new AtomicBoolean();
        s.schedule(() -> delayedRan.set(true), 50, TimeUnit.MILLISECONDS);
        s.createWorker().schedule(() -> workerDelayedRan.set(true), 50, TimeUnit.MILLISECONDS);
        Disposable periodic = s.schedulePeriodically(() -> { }, 50, 50, TimeUnit.MILLISECONDS);
        s.disposeGracefully().block(LONG);
        assertTrue(delayedRan.get(), "the scheduler's delayed task ran");
        assertTrue(workerDelayedRan.get(), "the worker's delayed task ran");
        assertTrue(periodic.isDisposed(), "the periodic task is cancelled");
        assertTrue(s.isDisposed());
    }

    /**
     * As Reactor's schedulers: {@code Attr.TERMINATED} and {@code Attr.CANCELLED} follow {@code isDisposed()} for
     * the scheduler, a group and a worker; {@code now(unit)} is Reactor's (wall clock down to milliseconds,
     * {@code System.nanoTime()} below).
     */
    @Test
    void terminatedAndCancelledFollowDisposalAndNowReadsTheWallClock() {
        ActorScheduler s = newScheduler(1);
        ActorGroup g = s.group("g", 1);
        ActorWorker w = s.createWorker();
        for (reactor.core.Scannable x : List.<reactor.core.Scannable>of(s, g, w)) {
            assertEquals(Boolean.FALSE, x.scan(reactor.core.Scannable.Attr.TERMINATED), x.toString());
            assertEquals(Boolean.FALSE, x.scan(reactor.core.Scannable.Attr.CANCELLED), x.toString());
        }
        // Scheduler.now's contract: the wall clock for milliseconds and coarser, System.nanoTime() for finer units
        long before = System.currentTimeMillis();
        long nowMillis = s.now(TimeUnit.MILLISECONDS);
        long after = System.currentTimeMillis();
        assertTrue(nowMillis >= before && nowMillis <= after, nowMillis + " in [" + before + ", " + after + "]");
        long n0 = System.nanoTime();
        long nowNanos = s.now(TimeUnit.NANOSECONDS);
        long n1 = System.nanoTime();
        assertTrue(nowNanos - n0 >= 0 && n1 - nowNanos >= 0, nowNanos + " ns in [" + n0 + ", " + n1 + "]");
        g.dispose();
        assertEquals(Boolean.TRUE, g.scan(reactor.core.Scannable.Attr.TERMINATED));
        assertEquals(Boolean.TRUE, g.scan(reactor.core.Scannable.Attr.CANCELLED));
        s.dispose();
        for (reactor.core.Scannable x : List.<reactor.core.Scannable>of(s, w)) {
            assertEquals(Boolean.TRUE, x.scan(reactor.core.Scannable.Attr.TERMINATED), x.toString());
            assertEquals(Boolean.TRUE, x.scan(reactor.core.Scannable.Attr.CANCELLED), x.toString());
        }
    }

    /**
     * Reactor's schedulers complete disposeGracefully on a thread of their own, where the code chained onto
     * it may block; ours completed on the last exiting carrier, a NonBlocking thread, where block() throws.
     */
    @Test
    void gracefulDisposalCompletesOffTheCarriersSoChainedCodeMayBlock() {
        ActorScheduler s = newScheduler(2);
        s.schedule(() -> { });
        Thread completedOn = s.disposeGracefully()
                .then(Mono.fromCallable(() -> {
                    Mono.delay(Duration.ofMillis(1)).block(LONG); // would throw on a NonBlocking carrier
                    return Thread.currentThread();
                }))
                .block(LONG);
        assertFalse(completedOn instanceof reactor.core.scheduler.NonBlocking, completedOn.getName());
        assertFalse(completedOn.getName().startsWith(s.name() + "-"), "not one of the scheduler's threads: "
                + completedOn.getName());
    }

    /**
     * A group's graceful disposal ends on the scheduler's timer (its quiescence check); code chained onto
     * the completion ran there and held up every timer of the scheduler: here a delayed task of another
     * group, which the chained code waits for, never ran.
     */
    @Test
    void aGroupsGracefulCompletionDoesNotRunOnTheTimer() throws InterruptedException {
        ActorScheduler s = newScheduler(2);
        ActorGroup closing = s.group("closing", 1);
        ActorGroup other = s.group("other", 1);
        CountDownLatch busy = new CountDownLatch(1);
        closing.schedule(() -> awaitQuietly(busy, LONG)); // the group is not idle at once: the timer's check ends it
        CountDownLatch delayedRan = new CountDownLatch(1);
        AtomicBoolean timerFree = new AtomicBoolean();
        AtomicReference<String> thread = new AtomicReference<>();
        CountDownLatch completed = new CountDownLatch(1);
        closing.disposeGracefully().subscribe(null, e -> completed.countDown(), () -> {
            thread.set(Thread.currentThread().getName());
            other.schedule(delayedRan::countDown, 5, TimeUnit.MILLISECONDS);
            try {
                timerFree.set(delayedRan.await(20, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            completed.countDown();
        });
        busy.countDown();
        assertTrue(completed.await(60, TimeUnit.SECONDS));
        assertTrue(timerFree.get(), "a delayed task ran while the completion's code waited, on " + thread.get());
        assertFalse(thread.get().equals(s.name() + "-timer"), thread.get());
    }
}
