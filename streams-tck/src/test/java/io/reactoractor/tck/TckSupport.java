package io.reactoractor.tck;

import java.time.Duration;

import io.reactoractor.ActorScheduler;
import org.reactivestreams.tck.TestEnvironment;

/**
 * Shared settings of the TCK classes: timeouts suitable for 2 slow, shared cores, read from the same
 * environment variables the TCK itself reads (set by surefire, see the module README), with the same
 * values as fallbacks when a class is run from an IDE without them.
 */
final class TckSupport {

    /** Fallback of {@code DEFAULT_TIMEOUT_MILLIS}: how long the TCK waits for an expected signal. */
    static final long DEFAULT_TIMEOUT_MILLIS = 500;
    /** Fallback of {@code DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS}: how long the TCK waits to see "no signal". */
    static final long DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS = 200;
    /**
     * Fallback of {@code DEFAULT_POLL_TIMEOUT_MILLIS}: the TCK's polling interval in {@code expectError}, which in
     * TCK 1.0.4 is also the whole wait for the error (its time-left computation has a typo; module README), so
     * it equals {@link #DEFAULT_TIMEOUT_MILLIS}.
     */
    static final long DEFAULT_POLL_TIMEOUT_MILLIS = DEFAULT_TIMEOUT_MILLIS;
    /** Fallback of {@code PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS} (rule 3.13). */
    static final long PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS = 1000;

    private TckSupport() {
    }

    static TestEnvironment environment() {
        return new TestEnvironment(
                env("DEFAULT_TIMEOUT_MILLIS", DEFAULT_TIMEOUT_MILLIS),
                env("DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS", DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS),
                env("DEFAULT_POLL_TIMEOUT_MILLIS", DEFAULT_POLL_TIMEOUT_MILLIS));
    }

    static long publisherReferenceGcTimeoutMillis() {
        return env("PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS", PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS);
    }

    static ActorScheduler scheduler(String name) {
        return ActorScheduler.builder().name(name).threads(2).quota(Duration.ofMillis(5)).build();
    }

    /**
     * Disposes the scheduler, but never hangs the build: if {@code dispose()} does not return within
     * 10 s (a library bug, see the module README) the calling configuration method fails instead.
     */
    static void disposeBounded(ActorScheduler scheduler) {
        Thread t = new Thread(scheduler::dispose, scheduler.name() + "-dispose");
        t.setDaemon(true);
        t.start();
        try {
            t.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            throw new AssertionError("ActorScheduler.dispose() of " + scheduler.name()
                    + " did not return within 10 s (spinning in ActorCell.tryDrain?)");
        }
    }

    private static long env(String name, long fallback) {
        String v = System.getenv(name);
        if (v == null || v.isBlank()) {
            return fallback;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("environment variable " + name + " must be a number of ms: " + v, e);
        }
    }
}
