package io.reactoractor.benchmarks.savina;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What both sides of a workload run share: the result a workload's actors complete (or fail), and
 * the wait for it. {@link OursRun} and {@link PekkoRun} add how actors are built and torn down.
 */
public abstract class WorkloadRun {

    private final CompletableFuture<Long> result = new CompletableFuture<>();

    /** @param value the workload's computed result; the first call wins */
    public final void complete(long value) {
        result.complete(value);
    }

    /** @param error fails the run; the first call wins */
    public final void fail(Throwable error) {
        result.completeExceptionally(error);
    }

    /**
     * Waits for {@link #complete} or {@link #fail}.
     *
     * @param timeout the longest wait
     * @return the result
     * @throws Exception the failure, or a {@link TimeoutException} with {@link #progress()}
     */
    public final long await(Duration timeout) throws Exception {
        try {
            return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        } catch (TimeoutException e) {
            throw new TimeoutException("no result after " + timeout + "; " + progress());
        }
    }

    /** @return what a stuck run looked like (actors, waiting messages), for the timeout message */
    protected abstract String progress();
}
