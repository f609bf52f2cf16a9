package io.reactoractor;

import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.actor.Actor;
import io.reactoractor.actor.ActorOperators;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Actors built while another thread walks their group: a disposal terminates every actor of the group, a
 * gauge or {@code Scannable.BUFFERED} sums their queued work. An actor joins its group only once it is fully
 * built ({@code ActorCell.joinGroup()}); joining from the base constructor let the walk reach a worker whose
 * mailbox was not assigned yet, and {@code dispose()} threw a {@code NullPointerException} (found by a
 * black-box probe: 4 to 6 of 300 rounds), leaving the rest of the scheduler undisposed.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ActorConstructionRaceTest {

    private static final int ROUNDS = 300;

    /** Reactor's {@code Disposable.dispose()} does not throw, whatever else runs; nor does {@code newParallel}'s here. */
    @Test
    void aDisposeRacingCreateWorkerNeverThrowsAndLeavesNoWorkerAccepting() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            ActorScheduler s = ActorScheduler.builder().name(uniqueName("build-race")).threads(1).build();
            List<ActorWorker> created = new ArrayList<>();
            disposeWhile(() -> {
                for (int i = 0; i < 2_000; i++) {
                    created.add(s.createWorker()); // a worker of a disposed scheduler comes back disposed
                }
            }, s::dispose);
            assertEquals(0L, s.stats().internalErrors(), "internal errors");
            for (ActorWorker w : created) {
                assertTrue(w.isDisposed(), "a worker created before or during dispose() is disposed");
            }
        }
    }

    /** The same race with actors: each built one joins its group only once built, and the disposal ends it. */
    @Test
    void aDisposeRacingActorCreationNeverThrowsAndTerminatesEveryActorBuilt() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            ActorScheduler s = ActorScheduler.builder().name(uniqueName("build-race")).threads(1).build();
            List<Actor<Integer, Integer>> built = buildActorsDuring(s, s::dispose);
            assertEquals(0L, s.stats().internalErrors(), "internal errors");
            for (Actor<Integer, Integer> a : built) {
                assertTrue(a.isTerminated(), "an actor built before or during dispose() is terminated");
            }
        }
    }

    /** The same race with one group's disposal (the scheduler lives on): every actor built in the group is terminated. */
    @Test
    void aGroupDisposeRacingActorCreationTerminatesEveryActorBuiltInIt() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name(uniqueName("build-race")).threads(1).build();
        try {
            for (int round = 0; round < ROUNDS; round++) {
                ActorGroup g = s.group("tenant-" + round, 1);
                for (Actor<Integer, Integer> a : buildActorsDuring(g, g::dispose)) {
                    assertTrue(a.isTerminated(), "an actor built before or during its group's dispose() is terminated");
                }
            }
            assertEquals(0L, s.stats().internalErrors(), "internal errors");
        } finally {
            s.dispose();
        }
    }

    /**
     * Builds up to 500 actors on {@code target} from another thread while this one runs {@code dispose}, which must
     * not throw.
     *
     * @return the actors built (the rest were refused: the target was disposed)
     */
    private static List<Actor<Integer, Integer>> buildActorsDuring(Scheduler target, Runnable dispose)
            throws InterruptedException {
        List<Actor<Integer, Integer>> built = new ArrayList<>();
        disposeWhile(() -> {
            for (int i = 0; i < 500; i++) {
                try {
                    built.add(Actor.identity(target, 4));
                } catch (RejectedExecutionException disposed) {
                    return;
                }
            }
        }, dispose);
        return built;
    }

    /** Runs {@code creation} on another thread, released together with {@code dispose} here, which must not throw. */
    private static void disposeWhile(Runnable creation, Runnable dispose) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        Thread creator = new Thread(() -> {
            awaitQuietly(go);
            creation.run();
        }, "creator");
        creator.start();
        go.countDown();
        Throwable thrown = null;
        try {
            dispose.run();
        } catch (Throwable t) {
            thrown = t;
        }
        creator.join(TimeUnit.SECONDS.toMillis(30));
        assertEquals(null, thrown, "dispose() threw");
    }

    /**
     * The fair {@code publishOn} subscribed while its scheduler is disposed: its drain joins the group only once its
     * subscriber had {@code onSubscribe}, so each stream sees {@code onSubscribe} first (rule 1.9) and then exactly
     * one terminal signal: the completion, or the rejection.
     */
    @Test
    void publishOnSubscribedDuringADisposeSignalsOnSubscribeFirstAndExactlyOneTerminal() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            ActorScheduler s = ActorScheduler.builder().name(uniqueName("build-race")).threads(1).build();
            List<SignalLog> logs = new ArrayList<>();
            disposeWhile(() -> {
                for (int i = 0; i < 100; i++) {
                    SignalLog log = new SignalLog();
                    logs.add(log);
                    Flux.range(1, 50).transform(ActorOperators.<Integer>publishOn(s)).subscribe(log);
                }
            }, s::dispose);
            for (SignalLog log : logs) {
                assertTrue(log.terminated.await(10, TimeUnit.SECONDS), "a terminal signal");
                assertEquals(null, log.violation.get());
                Throwable e = log.error.get();
                assertTrue(e == null || e instanceof RejectedExecutionException, () -> "the rejection, not " + e);
            }
        }
    }

    /** Records what a rule 1.9 or 1.7 check needs: a signal before {@code onSubscribe}, or after a terminal one. */
    private static final class SignalLog implements CoreSubscriber<Integer> {
        final AtomicBoolean subscribed = new AtomicBoolean();
        final AtomicBoolean done = new AtomicBoolean();
        final AtomicReference<String> violation = new AtomicReference<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final CountDownLatch terminated = new CountDownLatch(1);

        @Override
        public void onSubscribe(Subscription s) {
            if (!subscribed.compareAndSet(false, true)) {
                violation.compareAndSet(null, "onSubscribe twice");
            }
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Integer t) {
            check("onNext");
        }

        @Override
        public void onError(Throwable t) {
            check("onError");
            error.set(t);
            terminate();
        }

        @Override
        public void onComplete() {
            check("onComplete");
            terminate();
        }

        private void check(String signal) {
            if (!subscribed.get()) {
                violation.compareAndSet(null, signal + " before onSubscribe (rule 1.9)");
            }
            if (done.get()) {
                violation.compareAndSet(null, signal + " after a terminal signal (rule 1.7)");
            }
        }

        private void terminate() {
            done.set(true);
            terminated.countDown();
        }
    }

    /** {@code Scannable.BUFFERED} (and the queued-work gauges, the same sum) while workers are created and disposed. */
    @Test
    void theQueuedWorkSumReadsANumberWhileWorkersAreCreated() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name(uniqueName("build-race")).threads(1).build();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> creatorFailure = new AtomicReference<>();
        try {
            ActorGroup g = s.group("workers", 1);
            Thread creator = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        g.createWorker().dispose();
                    }
                } catch (Throwable t) {
                    creatorFailure.set(t);
                }
            }, "creator");
            creator.start();
            try {
                for (int i = 0; i < 200_000; i++) {
                    Object buffered = Scannable.from(g).scanUnsafe(Scannable.Attr.BUFFERED);
                    Object total = Scannable.from(s).scanUnsafe(Scannable.Attr.BUFFERED);
                    assertTrue(buffered instanceof Integer && total instanceof Integer);
                }
            } finally {
                stop.set(true);
                creator.join(TimeUnit.SECONDS.toMillis(30));
            }
            assertEquals(null, creatorFailure.get());
        } finally {
            s.dispose();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
