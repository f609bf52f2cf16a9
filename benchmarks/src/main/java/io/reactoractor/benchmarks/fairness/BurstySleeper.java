package io.reactoractor.benchmarks.fairness;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.scheduler.Scheduler;

/**
 * An actor that games "least CPU time first": it runs a burst of {@code burstTasks} busy tasks in a row
 * (each re-scheduling the next on its own worker, so one turn can hold them all), then sleeps for
 * {@code sleepNanos} and starts over. A scheduler that credits every wake-up as if the actor had been
 * idle for long gives it more than its fair share.
 *
 * <p>The sleep is a timer outside the scheduler under test (a single daemon thread), so every peer
 * sees the same wake-ups whether or not it can schedule with a delay.
 */
final class BurstySleeper {

    private final Scheduler.Worker worker;
    private final int burstTasks;
    private final long taskNanos;
    private final long sleepNanos;
    private final LongAdder busy;
    private final ScheduledExecutorService timer;
    private volatile boolean running = true;

    BurstySleeper(Scheduler.Worker worker, int burstTasks, long taskNanos, long sleepNanos, LongAdder busy) {
        this.worker = worker;
        this.burstTasks = burstTasks;
        this.taskNanos = taskNanos;
        this.sleepNanos = sleepNanos;
        this.busy = busy;
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "sleeper-timer");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    void start() {
        submit(new Burst());
    }

    void stop() {
        running = false;
        timer.shutdownNow();
        worker.dispose();
    }

    private void submit(Runnable task) {
        if (running) {
            try {
                worker.schedule(task);
            } catch (RejectedExecutionException stopping) {
                // disposed between the check and the call: the run is over
            }
        }
    }

    /** One burst: {@code burstTasks} tasks chained on the worker, then a sleep on the timer. */
    private final class Burst implements Runnable {
        private int left = burstTasks; // touched only by the task, one run at a time (hand-offs publish it)

        @Override
        public void run() {
            busy.add(Busy.burn(taskNanos));
            if (--left > 0) {
                submit(this);
                return;
            }
            left = burstTasks;
            try {
                timer.schedule(() -> submit(this), sleepNanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException stopping) {
                // the timer was shut down: the run is over
            }
        }
    }
}
