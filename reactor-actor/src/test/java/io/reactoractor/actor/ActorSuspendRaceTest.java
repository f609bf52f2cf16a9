package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.ActorTestSupport.TerminalRecorder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * Regression tests for races found while writing the TCK runs: a lost wake-up between
 * {@code Actor.suspendForBackpressure()} and {@code Actor.wake()}, rule 3.13 (the unicast slot kept a
 * reference to the cancelled subscriber), an idle upstream hoarding every credit, and
 * {@code dispose()} spinning on a terminated actor that still looked busy.
 */
class ActorSuspendRaceTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-race").threads(2).build();

    @AfterEach
    void tearDown() {
        assertTrue(ActorTestSupport.disposeBounded(scheduler),
                "ActorScheduler.dispose() did not return within 10 s (ActorCell.tryDrain spins while "
                        + "Actor.Cell.hasWork() stays true after termination)");
    }

    /** Failed upstream first, subscriber second: onError must always arrive. */
    @Test
    void failedUpstreamThenSubscribeAlwaysDeliversOnError() throws Exception {
        int lost = 0;
        for (int i = 0; i < 300; i++) {
            Actor<Integer, Integer> a = Actor.identity(scheduler, 16);
            Flux.<Integer>error(new RuntimeException("boom")).subscribe(a);
            if (i % 2 == 0) {
                Thread.sleep(1);
            }
            TerminalRecorder<Integer> r = new TerminalRecorder<>(s -> { });
            a.subscribe(r);
            try {
                r.error.get(2, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                lost++;
            }
        }
        assertEquals(0, lost, "subscribers that never got onError (actor left suspended)");
    }

    /** Requests of 1 from another thread, racing with the actor suspending for lack of demand. */
    @Test
    void requestRacingWithBackpressureSuspensionIsNeverLost() throws Exception {
        for (int round = 0; round < 20; round++) {
            Actor<Integer, Integer> a = Actor.identity(scheduler, 16);
            Flux.range(0, 5_000).subscribe(a);
            CountDownLatch done = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicInteger received = new java.util.concurrent.atomic.AtomicInteger();
            BaseSubscriber<Integer> d = new BaseSubscriber<>() {
                @Override
                protected void hookOnSubscribe(Subscription s) {
                }

                @Override
                protected void hookOnNext(Integer v) {
                    received.incrementAndGet();
                }

                @Override
                protected void hookOnComplete() {
                    done.countDown();
                }
            };
            a.subscribe(d);
            Thread requester = new Thread(() -> {
                long requested = 0;
                while (done.getCount() > 0 && requested < 5_001) {
                    if (received.get() == requested) {
                        d.request(1);
                        requested++;
                    } else {
                        Thread.onSpinWait();
                    }
                }
            });
            requester.setDaemon(true);
            requester.start();
            boolean ok = done.await(10, TimeUnit.SECONDS);
            requester.interrupt();
            assertTrue(ok, "round " + round + ": stalled after " + received.get()
                    + " elements with demand outstanding; suspended=" + a.isSuspended());
        }
    }

    /** Rule 3.13: after cancel the actor must eventually drop its reference to the subscriber. */
    @Test
    void cancelledActorDropsSubscriberReference() throws Exception {
        Actor<Integer, Integer> a = Actor.identity(scheduler, 16);
        Flux.range(0, 100).subscribe(a);
        TerminalRecorder<Integer> r = new TerminalRecorder<>(s -> s.request(1));
        a.subscribe(r);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (r.received < 1 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        r.subscription.cancel();
        WeakReference<TerminalRecorder<Integer>> ref = new WeakReference<>(r);
        r = null;
        for (int i = 0; i < 50 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertNull(ref.get(), "the actor still references its cancelled subscriber (subscriberSlot)");
        assertTrue(a.isTerminated());
    }

    /**
     * An idle upstream that attached first holds every credit (it was granted capacity / 1), so a port
     * attached later, and {@code tell}, never get any: credits are never rebalanced.
     */
    @Test
    void idleUpstreamAttachedFirstMustNotStarveLaterUpstreams() throws Exception {
        Actor<Long, Long> a = Actor.identity(scheduler, 64);
        Flux.<Long>never().subscribe(a.newSubscriber());
        Flux.range(0, 1000).map(i -> (long) i).subscribe(a.newSubscriber());
        BaseSubscriber<Long> d = new BaseSubscriber<>() {
        };
        java.util.concurrent.atomic.AtomicInteger received = new java.util.concurrent.atomic.AtomicInteger();
        Flux.from(a).doOnNext(v -> received.incrementAndGet()).subscribe(d);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (received.get() < 1000 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(1000, received.get(), "the second upstream was starved by the idle first one");
        // the idle port holds at most one replenish window (64 / 4 = 16), the finished one returned its
        // credits: tell() must find free space
        assertTrue(a.tell(-1L), "tell() found no credit: the idle upstream holds them all");
    }

    /**
     * Disposing the scheduler under live actors (one cancelled, one waiting for demand, one with an
     * open upstream) returns promptly and fails the still-subscribed downstreams with a rejection
     * instead of leaving them hanging.
     */
    @Test
    void disposeUnderLiveActorsReturnsAndFailsDownstream() throws Exception {
        ActorScheduler local = ActorScheduler.builder().name("actor-dispose").threads(2).build();
        Actor<Integer, Integer> cancelledOne = Actor.identity(local, 8);
        Flux.range(0, 100).subscribe(cancelledOne);
        TerminalRecorder<Integer> r1 = new TerminalRecorder<>(s -> s.request(1));
        cancelledOne.subscribe(r1);
        r1.subscription.cancel();

        Actor<Integer, Integer> waiting = Actor.identity(local, 8);
        Flux.range(0, 100).subscribe(waiting);
        TerminalRecorder<Integer> r2 = new TerminalRecorder<>(s -> s.request(2));
        waiting.subscribe(r2);

        Actor<Integer, Integer> open = Actor.identity(local, 8);
        Flux.<Integer>never().subscribe(open);
        TerminalRecorder<Integer> r3 = new TerminalRecorder<>(s -> s.request(10));
        open.subscribe(r3);

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (r2.received < 2 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertTrue(ActorTestSupport.disposeBounded(local), "dispose() did not return within 10 s");
        assertTrue(r2.error.get(5, TimeUnit.SECONDS) instanceof RejectedExecutionException);
        assertTrue(r3.error.get(5, TimeUnit.SECONDS) instanceof RejectedExecutionException);
        assertTrue(cancelledOne.isTerminated() && waiting.isTerminated() && open.isTerminated());
        assertEquals(2, r2.received);
    }
}
