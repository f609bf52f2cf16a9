package io.reactoractor.internal.scheduling;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ActorWorker;
import io.reactoractor.internal.Internals;
import org.junit.jupiter.api.Test;

/**
 * Idle carriers ({@link CarrierPool}): one submission wakes at most one parked carrier, however many
 * are parked, so a pool with many carriers has no wake-up storms. Counted with the pool's wake-up
 * counter (every unpark of a parked carrier by a submission), so the bounds hold on a busy machine:
 * a carrier still spinning when work arrives takes it without any wake-up, which only lowers the count.
 */
class WakeUpTest {

    private static final int THREADS = 8;
    private static final int SUBMISSIONS = 200;

    @Test
    void oneOutsideSubmissionWakesAtMostOneOfManyParkedCarriers() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("wake-up-storm").threads(THREADS).build();
        try {
            ActorWorker w = s.createWorker();
            CarrierPool pool = Internals.engine(s.defaultGroup()).pool();
            long before = pool.wakeUps();
            for (int i = 0; i < SUBMISSIONS; i++) {
                // alternate the scheduler's lanes and a worker (actor) as the target
                CountDownLatch done = new CountDownLatch(1);
                if (i % 2 == 0) {
                    s.schedule(done::countDown);
                } else {
                    w.schedule(done::countDown);
                }
                assertTrue(done.await(30, TimeUnit.SECONDS), "task " + i + " ran");
                Thread.sleep(1); // let the carriers go back to their park
            }
            long wakeUps = pool.wakeUps() - before;
            assertTrue(wakeUps <= SUBMISSIONS, SUBMISSIONS + " single submissions to " + THREADS
                    + " idle carriers caused " + wakeUps + " wake-ups (a storm wakes several per submission)");
        } finally {
            s.dispose();
        }
    }

    @Test
    void aBurstFromOneThreadWakesNoMoreCarriersThanItHasTasksAndFansOutOverThePool() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("wake-up-burst").threads(THREADS).build();
        try {
            CarrierPool pool = Internals.engine(s.defaultGroup()).pool();
            Thread.sleep(20); // carriers start and park
            long before = pool.wakeUps();
            int tasks = 3;
            CountDownLatch done = new CountDownLatch(tasks);
            for (int i = 0; i < tasks; i++) {
                s.schedule(done::countDown);
            }
            assertTrue(done.await(30, TimeUnit.SECONDS), "burst ran");
            long wakeUps = pool.wakeUps() - before;
            assertTrue(wakeUps <= tasks, tasks + " tasks woke " + wakeUps + " of " + THREADS + " parked carriers");
        } finally {
            s.dispose();
        }
    }

    /**
     * An idle pool's carriers stay parked: each comes back from its safety-net park about once a second (Reactor's
     * parked threads never do). At 100 ms, with a spin each time, an idle 2-carrier scheduler took 2.2-3.1 ms of
     * CPU a second (a schedcontract probe's finding); at 1 s and without the spin, 0.35-0.39 ms. Timed-out parks do
     * not grow with the machine's load, so the bound holds on a busy machine.
     */
    @Test
    void idleCarriersComeBackFromTheirParkAboutOnceASecond() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("wake-up-idle").threads(4).build();
        try {
            CarrierPool pool = Internals.engine(s.defaultGroup()).pool();
            CountDownLatch done = new CountDownLatch(100);
            for (int i = 0; i < 100; i++) {
                s.schedule(done::countDown);
            }
            assertTrue(done.await(30, TimeUnit.SECONDS), "warm-up ran");
            Thread.sleep(300); // the carriers park
            long before = pool.unwokenParks();
            Thread.sleep(3_000);
            long unwoken = pool.unwokenParks() - before;
            // 4 carriers x 3 s: about 12 at one a second, 120 at ten
            assertTrue(unwoken <= 30, "4 idle carriers came back from their park " + unwoken + " times in 3 s");
        } finally {
            s.dispose();
        }
    }
}
