package io.reactoractor;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.sleepMillis;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Suspend / resume of an {@link ActorWorker}: the counter is re-entrant (n suspends need n
 * resumes), never goes below zero, a suspended worker finishes the task in progress and starts no
 * other (immediate or delayed) until resumed, a task may suspend its own worker, and
 * {@link ActorWorker#isSuspended()} and {@code stats().suspendedActors()} report it.
 *
 * <p>"Does not run" can only be observed by waiting: those checks give a task a few hundred
 * milliseconds of opportunity while another worker proves the scheduler is alive.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SuspendResumeTest {

    /** How long a suspended worker's queued tasks are given to (wrongly) run. */
    private static final long OPPORTUNITY_MS = 250;

    private final TestSupport.Resources resources = new TestSupport.Resources();

    @AfterEach
    void disposeAll() {
        resources.disposeAll();
    }

    private ActorScheduler newScheduler() {
        return resources.scheduler(ActorScheduler.builder().name(uniqueName("suspend")).threads(2));
    }

    /** Proves the scheduler runs other actors, then leaves time for a suspended one to misbehave. */
    private static void giveOpportunity(ActorScheduler s) {
        CountDownLatch other = new CountDownLatch(1);
        s.createWorker().schedule(other::countDown);
        await(other, LONG, "another worker runs meanwhile");
        sleepMillis(OPPORTUNITY_MS);
    }

    /**
     * Tasks cancelled while a suspended worker holds them: what they captured is released at once, the pending
     * count leaves them out, and once resumed they are skipped, not run and not counted as run (Reactor's
     * executors remove a cancelled task from their queue: its capture goes, and it never counts as completed).
     */
    @Test
    void tasksCancelledInASuspendedWorkersMailboxAreReleasedUncountedAndNeverRun() throws Exception {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        w.suspend();
        int n = 1_000;
        AtomicInteger ran = new AtomicInteger();
        List<java.lang.ref.WeakReference<byte[]>> captures = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] captured = new byte[1_024];
            captures.add(new java.lang.ref.WeakReference<>(captured));
            reactor.core.Disposable d = w.schedule(() -> {
                captured[0]++;
                ran.incrementAndGet();
            });
            if (i % 2 == 0) {
                d.dispose();
                assertTrue(d.isDisposed());
            }
        }
        assertEquals(n / 2, w.pendingTasks(), "the cancelled half is not pending");
        for (int attempt = 0; attempt < 50 && captures.stream().filter(r -> r.get() == null).count() < n / 2; attempt++) {
            System.gc();
            sleepMillis(20);
        }
        for (int i = 0; i < n; i++) {
            assertEquals(i % 2 == 0, captures.get(i).get() == null, "capture " + i + " released iff cancelled");
        }
        long before = s.stats().tasksRun();
        w.resume();
        await(LONG, () -> ran.get() == n / 2 && w.pendingTasks() == 0, "the others run");
        giveOpportunity(s);
        assertEquals(n / 2, ran.get(), "no cancelled task ran");
        await(LONG, () -> s.stats().tasksRun() - before >= n / 2 + 1, "counted");
        assertEquals(n / 2 + 1, s.stats().tasksRun() - before, "the tasks run (and giveOpportunity's), not the cancelled");
        assertEquals(0, w.pendingTasks());
    }

    @Test
    void theMostSuspensionsInForceAreCappedNotOverflowed() throws Exception {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        w.suspend();
        // 2^29 - 2 more suspend() calls would take seconds: the count is set where they would leave it
        java.lang.reflect.Field status = io.reactoractor.internal.scheduling.ActorCell.class.getDeclaredField("status");
        status.setAccessible(true);
        Object cell = w.cell();
        status.setInt(cell, io.reactoractor.internal.scheduling.ActorCell.MAX_SUSPENSIONS * 4);
        IllegalStateException e = assertThrows(IllegalStateException.class, w::suspend);
        assertTrue(e.getMessage().contains("resume"), e.getMessage());
        assertTrue(w.isSuspended(), "still suspended: the count did not wrap round");
        assertEquals(io.reactoractor.internal.scheduling.ActorCell.MAX_SUSPENSIONS, w.suspendCount());
        assertTrue(w.resume());
        assertEquals(io.reactoractor.internal.scheduling.ActorCell.MAX_SUSPENSIONS - 1, w.suspendCount());
        status.setInt(cell, 4); // one suspension left, as the stats count it
        CountDownLatch ran = new CountDownLatch(1);
        w.schedule(ran::countDown);
        assertTrue(w.resume());
        await(ran, LONG, "runs once the last suspension is lifted");
    }

    @Test
    void aDisposedWorkerHasNoSuspensionInForce() {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        w.suspend();
        w.suspend();
        w.dispose();
        assertFalse(w.isSuspended(), "nothing can lift it any more, and the stats do not count it");
        assertEquals(0, w.suspendCount());
        assertFalse(w.resume());
        assertEquals(0, s.stats().suspendedActors());
    }

    @Test
    void suspendIsReentrant() {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        List<Integer> order = new CopyOnWriteArrayList<>();
        CountDownLatch all = new CountDownLatch(10);

        w.suspend();
        w.suspend();
        assertTrue(w.isSuspended());
        for (int i = 0; i < 10; i++) {
            int n = i;
            w.schedule(() -> {
                order.add(n);
                all.countDown();
            });
        }
        w.resume();
        assertTrue(w.isSuspended(), "two suspends, one resume: still suspended");
        giveOpportunity(s);
        assertTrue(order.isEmpty(), () -> "tasks ran while still suspended: " + order);
        assertEquals(10, w.pendingTasks());

        w.resume();
        assertFalse(w.isSuspended());
        await(all, LONG, "second resume runs the queued tasks");
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), order, "queued tasks run in FIFO order");
    }

    @Test
    void resumeWithoutSuspendIsHarmless() {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        w.resume();
        w.resume();
        assertFalse(w.isSuspended());
        CountDownLatch first = new CountDownLatch(1);
        w.schedule(first::countDown);
        await(first, LONG, "worker runs after spurious resumes");

        // the counter did not go below zero: one suspend is enough to stop the worker again
        w.suspend();
        assertTrue(w.isSuspended());
        AtomicBoolean ran = new AtomicBoolean();
        CountDownLatch second = new CountDownLatch(1);
        w.schedule(() -> {
            ran.set(true);
            second.countDown();
        });
        giveOpportunity(s);
        assertFalse(ran.get(), "one suspend after extra resumes must still suspend");
        w.resume();
        await(second, LONG, "one resume runs it");
        assertEquals(0, s.stats().suspendedActors());
    }

    @Test
    void suspendFromInsideARunningTaskStopsBeforeTheNextTask() {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        CountDownLatch bothQueued = new CountDownLatch(1);
        CountDownLatch firstDone = new CountDownLatch(1);
        AtomicBoolean firstCompleted = new AtomicBoolean();
        AtomicBoolean secondRan = new AtomicBoolean();
        CountDownLatch secondDone = new CountDownLatch(1);

        w.schedule(() -> {
            TestSupport.awaitQuietly(bothQueued, LONG);
            w.suspend();
            // the task in progress completes normally after suspending its own worker
            firstCompleted.set(true);
            firstDone.countDown();
        });
        w.schedule(() -> {
            secondRan.set(true);
            secondDone.countDown();
        });
        bothQueued.countDown();

        await(firstDone, LONG, "first task runs and suspends its worker");
        assertTrue(firstCompleted.get());
        assertTrue(w.isSuspended());
        giveOpportunity(s);
        assertFalse(secondRan.get(), "task queued behind a self-suspending task ran before resume");
        assertEquals(1, w.pendingTasks());

        w.resume();
        await(secondDone, LONG, "resume runs the next task");
    }

    @Test
    void suspendedWorkerHoldsDelayedAndPeriodicTasksToo() {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        AtomicInteger delayedRuns = new AtomicInteger();
        AtomicInteger periodicRuns = new AtomicInteger();
        w.suspend();
        w.schedule(delayedRuns::incrementAndGet, 10, TimeUnit.MILLISECONDS);
        w.schedulePeriodically(periodicRuns::incrementAndGet, 10, 10, TimeUnit.MILLISECONDS);
        giveOpportunity(s);
        assertEquals(0, delayedRuns.get(), "delayed task of a suspended worker ran");
        assertEquals(0, periodicRuns.get(), "periodic task of a suspended worker ran");
        w.resume();
        await(LONG, () -> delayedRuns.get() == 1 && periodicRuns.get() >= 2,
                () -> "after resume: delayed " + delayedRuns.get() + ", periodic " + periodicRuns.get());
    }

    @Test
    void taskInProgressCompletesWhenSuspendedFromOutside() {
        ActorScheduler s = newScheduler();
        ActorWorker w = s.createWorker();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(1);
        AtomicBoolean nextRan = new AtomicBoolean();
        CountDownLatch nextDone = new CountDownLatch(1);
        w.schedule(() -> {
            started.countDown();
            TestSupport.awaitQuietly(release, LONG);
            finished.countDown();
        });
        w.schedule(() -> {
            nextRan.set(true);
            nextDone.countDown();
        });
        await(started, LONG, "first task starts");
        w.suspend();
        release.countDown();
        await(finished, LONG, "the task in progress completes although its worker was suspended");
        giveOpportunity(s);
        assertFalse(nextRan.get(), "the next task started while suspended");
        w.resume();
        await(nextDone, LONG, "the next task runs after resume");
    }

    @Test
    void isSuspendedAndStatsReflectSuspension() {
        ActorScheduler s = newScheduler();
        ActorWorker a = s.createWorker();
        ActorWorker b = s.createWorker();
        ActorWorker c = s.group("other", 1).createWorker();
        assertEquals(0, s.stats().suspendedActors());

        a.suspend();
        a.suspend(); // a twice-suspended actor is still one suspended actor
        b.suspend();
        c.suspend();
        assertTrue(a.isSuspended());
        assertTrue(b.isSuspended());
        assertTrue(c.isSuspended());
        await(Duration.ofSeconds(5), () -> s.stats().suspendedActors() == 3,
                () -> "suspendedActors: " + s.stats());

        b.resume();
        c.resume();
        a.resume();
        assertFalse(b.isSuspended());
        assertFalse(c.isSuspended());
        assertTrue(a.isSuspended());
        await(Duration.ofSeconds(5), () -> s.stats().suspendedActors() == 1,
                () -> "suspendedActors: " + s.stats());

        a.resume();
        assertFalse(a.isSuspended());
        await(Duration.ofSeconds(5), () -> s.stats().suspendedActors() == 0,
                () -> "suspendedActors: " + s.stats());
    }
}
