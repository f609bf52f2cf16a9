package io.reactoractor.benchmarks.fairness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.scheduler.Scheduler;

/**
 * Saturating heavy workers: each worker runs a task that burns {@code taskNanos} and then schedules
 * itself again on its own worker, so every worker always has exactly one task ready or running.
 * The busy time is measured by the tasks themselves and added to the counter given for the workers.
 */
final class HeavyLoad {

    private final long taskNanos;
    private final List<Scheduler.Worker> workers = new ArrayList<>();
    private final List<HeavyTask> tasks = new ArrayList<>();
    private volatile boolean running = true;

    HeavyLoad(long taskNanos) {
        this.taskNanos = taskNanos;
    }

    /** Adds {@code count} workers created from {@code scheduler}, charging their busy time to {@code busy}. */
    void add(Scheduler scheduler, int count, LongAdder busy) {
        for (int i = 0; i < count; i++) {
            Scheduler.Worker w = scheduler.createWorker();
            workers.add(w);
            tasks.add(new HeavyTask(w, busy));
        }
    }

    void start() {
        for (HeavyTask t : tasks) {
            t.worker.schedule(t);
        }
    }

    /** Stops re-scheduling and disposes the workers. */
    void stop() {
        running = false;
        for (Scheduler.Worker w : workers) {
            w.dispose();
        }
    }

    private final class HeavyTask implements Runnable {
        final Scheduler.Worker worker;
        final LongAdder busy;

        HeavyTask(Scheduler.Worker worker, LongAdder busy) {
            this.worker = worker;
            this.busy = busy;
        }

        @Override
        public void run() {
            busy.add(Busy.burn(taskNanos));
            if (running) {
                try {
                    worker.schedule(this);
                } catch (RejectedExecutionException stopping) {
                    // the worker was disposed between the check and the call: the run is over
                }
            }
        }
    }
}
