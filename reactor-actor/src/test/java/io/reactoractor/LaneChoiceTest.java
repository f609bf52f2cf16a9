package io.reactoractor;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/**
 * {@link ActorGroup#schedule(Runnable)} from a carrier: the own lane, unless it already has tasks
 * waiting and the next lane has fewer. Two tasks submitted by one running task therefore land in two
 * lanes and can run at the same time on two carriers; in one lane they would run one after the other.
 */
class LaneChoiceTest {

    @Test
    void aSecondTaskSubmittedFromACarrierGoesToTheIdleLaneAndRunsInParallel() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("lane-choice").threads(2).build();
        try {
            ActorGroup g = s.group("g", 1);
            // each side waits for the other: passes only if both run at once, i.e. from different lanes
            CyclicBarrier together = new CyclicBarrier(2);
            AtomicInteger met = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(2);
            Runnable side = () -> {
                try {
                    together.await(10, TimeUnit.SECONDS);
                    met.incrementAndGet();
                } catch (Exception e) {
                    // timed out: the two tasks ran one after the other (same lane)
                } finally {
                    done.countDown();
                }
            };
            g.schedule(() -> {
                g.schedule(side); // the own lane (nothing waiting there)
                g.schedule(side); // the own lane has one task waiting, the next lane none: the next lane
            });
            assertTrue(done.await(30, TimeUnit.SECONDS), "both tasks ran");
            assertTrue(met.get() == 2, "the two tasks ran at the same time on two carriers: " + met);
        } finally {
            s.dispose();
        }
    }

    /**
     * A task of a lane that submits and then goes on (here: waits for what it submitted) does not hold
     * the new task up: it goes to another lane, as Reactor's parallel() puts it on another worker (it was
     * queued behind its submitter on the submitter's own lane, and waited for all of it).
     */
    @Test
    void aTaskSubmittedByALaneTaskThatGoesOnRunsMeanwhile() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("lane-choice-busy").threads(2).build();
        try {
            for (int round = 0; round < 20; round++) {
                CountDownLatch inner = new CountDownLatch(1);
                java.util.concurrent.CompletableFuture<Boolean> ranMeanwhile = new java.util.concurrent.CompletableFuture<>();
                s.schedule(() -> {
                    s.schedule(inner::countDown);
                    try {
                        ranMeanwhile.complete(inner.await(5, TimeUnit.SECONDS));
                    } catch (InterruptedException e) {
                        ranMeanwhile.complete(false);
                    }
                });
                assertTrue(ranMeanwhile.get(30, TimeUnit.SECONDS), "round " + round
                        + ": the submitted task ran while its submitter went on");
            }
        } finally {
            s.dispose();
        }
    }
}
