package io.reactoractor.benchmarks.fairness;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import reactor.core.scheduler.Scheduler;

/**
 * Open-loop light load: a dedicated outside thread submits a short task to one light worker every
 * {@code periodNanos}, whether or not the previous ones ran. The delay of a task is
 * submission (just before {@code worker.schedule}) to the start of the task.
 */
final class LightProbe {

    private final Scheduler.Worker worker;
    private final long periodNanos;
    private final long workNanos;
    private final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    private final Thread submitter;
    private volatile boolean submitting = true;
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile long windowEnd = Long.MAX_VALUE;
    private long submittedInWindow; // submitter thread only; read after join
    private int rejected; // submitter thread only; read after join
    private long completedInWindow; // guarded by histogram

    LightProbe(Scheduler.Worker worker, long periodNanos, long workNanos) {
        this.worker = worker;
        this.periodNanos = periodNanos;
        this.workNanos = workNanos;
        this.submitter = new Thread(this::submitLoop, "light-submitter");
        this.submitter.setDaemon(true);
    }

    void start() {
        submitter.start();
    }

    /** Only tasks submitted in [start, end) are recorded. */
    void window(long start, long end) {
        windowStart = start;
        windowEnd = end;
    }

    private void submitLoop() {
        long next = System.nanoTime();
        while (submitting) {
            next += periodNanos;
            long now;
            while ((now = System.nanoTime()) - next < 0) {
                LockSupport.parkNanos(next - now);
            }
            if (now - next > periodNanos) {
                next = now; // the submitter itself was descheduled: no catch-up burst
            }
            boolean inWindow = now - windowStart >= 0 && now - windowEnd < 0;
            try {
                worker.schedule(new LightTask(System.nanoTime(), inWindow));
                if (inWindow) {
                    submittedInWindow++;
                }
            } catch (RejectedExecutionException e) {
                rejected++;
            }
        }
    }

    /** Stops submitting, then waits (bounded) for the window's tasks to run; heavy load should still run. */
    void stopAndDrain(long maxWaitNanos) throws InterruptedException {
        submitting = false;
        submitter.join();
        long deadline = System.nanoTime() + maxWaitNanos;
        while (completedInWindow() < submittedInWindow && System.nanoTime() - deadline < 0) {
            Thread.sleep(5);
        }
    }

    long completedInWindow() {
        synchronized (histogram) {
            return completedInWindow;
        }
    }

    long submittedInWindow() {
        return submittedInWindow;
    }

    int rejected() {
        return rejected;
    }

    Histogram histogramCopy() {
        synchronized (histogram) {
            return histogram.copy();
        }
    }

    private final class LightTask implements Runnable {
        final long submittedAt;
        final boolean inWindow;

        LightTask(long submittedAt, boolean inWindow) {
            this.submittedAt = submittedAt;
            this.inWindow = inWindow;
        }

        @Override
        public void run() {
            long delay = System.nanoTime() - submittedAt;
            Busy.burn(workNanos);
            if (inWindow) {
                synchronized (histogram) {
                    histogram.recordValue(Math.min(delay, histogram.getHighestTrackableValue()));
                    completedInWindow++;
                }
            }
        }
    }
}
