package io.reactoractor.benchmarks.fairness;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * Open-loop light load: a dedicated outside thread submits {@code batch} short tasks every
 * {@code periodNanos}, whether or not the previous ones ran. The delay of a task is submission (just
 * before handing it to the {@link Target}) to the start of the task. The target decides where the task
 * goes: a light worker, the scheduler itself, or a stream whose subscriber runs it.
 */
final class LightProbe {

    /** Where a task is submitted; throws {@link RejectedExecutionException} if it cannot take it. */
    @FunctionalInterface
    interface Target {
        void submit(Runnable task);
    }

    private final Target target;
    private final long periodNanos;
    private final int batch;
    private final long workNanos;
    private final LongAdder busy;
    private final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
    private final Thread submitter;
    private volatile boolean submitting = true;
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile long windowEnd = Long.MAX_VALUE;
    private long submittedInWindow; // submitter thread only; read after join
    private long rejectedInWindow; // submitter thread only; read after join
    private long completedInWindow; // guarded by histogram

    LightProbe(String threadName, Target target, long periodNanos, int batch, long workNanos, LongAdder busy) {
        this.target = target;
        this.periodNanos = periodNanos;
        this.batch = batch;
        this.workNanos = workNanos;
        this.busy = busy;
        this.submitter = new Thread(this::submitLoop, threadName);
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
        Pacer pacer = new Pacer(periodNanos);
        while (submitting) {
            long now = pacer.awaitTick();
            boolean inWindow = now - windowStart >= 0 && now - windowEnd < 0;
            for (int i = 0; i < batch; i++) {
                try {
                    target.submit(new LightTask(System.nanoTime(), inWindow));
                    if (inWindow) {
                        submittedInWindow++;
                    }
                } catch (RejectedExecutionException e) {
                    if (inWindow) {
                        rejectedInWindow++;
                    }
                }
            }
        }
    }

    /** Stops submitting (idempotent; for clean-up after a failed run). */
    void stop() {
        submitting = false;
    }

    /** Stops submitting, then waits (bounded) for the window's tasks to run; the other load should still run. */
    void stopAndDrain(long maxWaitNanos) throws InterruptedException {
        submitting = false;
        submitter.join();
        long deadline = System.nanoTime() + maxWaitNanos;
        while (completedInWindow() < submittedInWindow && System.nanoTime() - deadline < 0) {
            Thread.sleep(5);
        }
    }

    /** The delays of the window's tasks; call after {@link #stopAndDrain(long)}. */
    DelayResult result(String what) {
        Histogram h;
        long completed;
        synchronized (histogram) {
            h = histogram.copy();
            completed = completedInWindow;
        }
        long submitted = submittedInWindow + rejectedInWindow;
        return DelayResult.of(what, submitted, Math.max(0, submitted - completed), h);
    }

    private long completedInWindow() {
        synchronized (histogram) {
            return completedInWindow;
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
            busy.add(Busy.burn(workNanos));
            if (inWindow) {
                synchronized (histogram) {
                    histogram.recordValue(Math.min(delay, histogram.getHighestTrackableValue()));
                    completedInWindow++;
                }
            }
        }
    }
}
