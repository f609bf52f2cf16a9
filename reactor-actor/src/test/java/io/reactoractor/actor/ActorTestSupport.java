package io.reactoractor.actor;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorScheduler;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

/** Helpers of the actor tests. */
final class ActorTestSupport {

    private ActorTestSupport() {
    }

    /**
     * Disposes without letting a library hang block the test run: waits at most 10 s.
     *
     * @return {@code true} if {@code dispose()} returned in time
     */
    static boolean disposeBounded(ActorScheduler scheduler) {
        Thread t = new Thread(scheduler::dispose, scheduler.name() + "-dispose");
        t.setDaemon(true);
        t.start();
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !t.isAlive();
    }

    /** A subscriber that records its first terminal signal; {@code onSubscribe} runs {@code onSub}. */
    static final class TerminalRecorder<T> implements Subscriber<T> {
        final CompletableFuture<Throwable> error = new CompletableFuture<>();
        final CompletableFuture<Void> completed = new CompletableFuture<>();
        final java.util.function.Consumer<Subscription> onSub;
        volatile Subscription subscription;
        volatile int received;

        TerminalRecorder(java.util.function.Consumer<Subscription> onSub) {
            this.onSub = onSub;
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            onSub.accept(s);
        }

        @Override
        public void onNext(T t) {
            received++;
        }

        @Override
        public void onError(Throwable t) {
            error.complete(t);
        }

        @Override
        public void onComplete() {
            completed.complete(null);
        }

        Throwable awaitError(long seconds) {
            return error.orTimeout(seconds, TimeUnit.SECONDS).join();
        }
    }

    /** A subscriber (unbounded demand) that records the values it got and its terminal signal. */
    static final class ValueRecorder<T> extends BaseSubscriber<T> {
        final List<T> received = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        volatile boolean completed;
        private final CountDownLatch ended = new CountDownLatch(1);

        @Override
        protected void hookOnNext(T value) {
            received.add(value);
        }

        @Override
        protected void hookOnComplete() {
            completed = true;
            ended.countDown();
        }

        @Override
        protected void hookOnError(Throwable t) {
            error.set(t);
            ended.countDown();
        }

        /** @return whether a terminal signal came within {@code seconds} */
        boolean awaitTerminal(long seconds) throws InterruptedException {
            return ended.await(seconds, TimeUnit.SECONDS);
        }
    }
}
