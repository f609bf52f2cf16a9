package io.reactoractor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import reactor.core.Disposable;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Helpers shared by the scheduler tests: unique scheduler names, bounded polling waits, busy
 * spinning and disposal of everything a test creates.
 *
 * <p>Every wait here is bounded and generous: the tests run on noisy 2-core machines, so they wait
 * for an <em>event</em> (up to many seconds) instead of asserting how fast it happens.
 */
final class TestSupport {

    /** The default bound for "this must eventually happen". */
    static final Duration LONG = Duration.ofSeconds(20);

    private static final AtomicInteger NAMES = new AtomicInteger();

    private TestSupport() {
    }

    /**
     * A scheduler name unique in this JVM. Names end with a number and threads are named
     * {@code <name>-...}, so {@code name + "-"} never prefixes another scheduler's threads.
     */
    static String uniqueName(String prefix) {
        return prefix + NAMES.incrementAndGet();
    }

    /** Polls {@code condition} every millisecond until it holds, failing after {@code timeout}. */
    static void await(Duration timeout, BooleanSupplier condition, Supplier<String> message) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not reached within " + timeout + ": " + message.get());
            }
            sleepMillis(1);
        }
    }

    static void await(Duration timeout, BooleanSupplier condition, String message) {
        await(timeout, condition, () -> message);
    }

    /** Awaits the latch for {@code timeout}, failing with {@code message} otherwise. */
    static void await(CountDownLatch latch, Duration timeout, String message) {
        try {
            assertTrue(latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS),
                    () -> message + " (latch still at " + latch.getCount() + " after " + timeout + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted while waiting: " + message);
        }
    }

    /** Awaits inside a task without failing the task thread; returns whether the latch opened. */
    static boolean awaitQuietly(CountDownLatch latch, Duration timeout) {
        try {
            return latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Busy-spins (no sleeping) for at least {@code nanos}; returns the measured duration. */
    static long spin(long nanos) {
        long start = System.nanoTime();
        long now;
        do {
            Thread.onSpinWait();
            now = System.nanoTime();
        } while (now - start < nanos);
        return now - start;
    }

    /** Live threads that belong to the scheduler called {@code name} ({@code <name>} or {@code <name>-*}). */
    static List<String> liveThreadsOf(String name) {
        List<String> result = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (t.isAlive() && (n.equals(name) || n.startsWith(name + "-"))) {
                result.add(n);
            }
        }
        return result;
    }

    /** Waits until no live thread of scheduler {@code name} remains. */
    static void awaitNoThreadsOf(String name, Duration grace) {
        await(grace, () -> liveThreadsOf(name).isEmpty(),
                () -> "threads of '" + name + "' still alive: " + liveThreadsOf(name));
    }

    /** Collects resources a test creates and disposes them all (call from {@code @AfterEach}). */
    static final class Resources {
        private final List<Disposable> disposables = new ArrayList<>();

        synchronized <T extends Disposable> T track(T disposable) {
            disposables.add(disposable);
            return disposable;
        }

        ActorScheduler scheduler(ActorScheduler.Builder builder) {
            return track(builder.build());
        }

        /** Disposes in reverse order of creation; never throws. */
        synchronized void disposeAll() {
            for (int i = disposables.size() - 1; i >= 0; i--) {
                try {
                    disposables.get(i).dispose();
                } catch (Throwable ignored) {
                    // best effort cleanup
                }
            }
            disposables.clear();
        }
    }
}
