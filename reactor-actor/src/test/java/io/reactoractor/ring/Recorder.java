package io.reactoractor.ring;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** A subscriber that requests nothing by itself and records what it gets (bounded waits only). */
final class Recorder<T> implements Subscriber<T> {

    volatile Subscription subscription;
    final List<T> values = new CopyOnWriteArrayList<>();
    volatile Throwable error;
    volatile boolean completed;
    private final CountDownLatch terminal = new CountDownLatch(1);

    @Override
    public void onSubscribe(Subscription s) {
        subscription = s;
    }

    @Override
    public void onNext(T t) {
        values.add(t);
    }

    @Override
    public void onError(Throwable t) {
        error = t;
        terminal.countDown();
    }

    @Override
    public void onComplete() {
        completed = true;
        terminal.countDown();
    }

    boolean awaitTerminal(Duration d) {
        try {
            return terminal.await(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    Throwable awaitError(Duration d) {
        assertTrue(awaitTerminal(d), "no terminal signal within " + d);
        assertNotNull(error, "completed instead of failing");
        return error;
    }
}
