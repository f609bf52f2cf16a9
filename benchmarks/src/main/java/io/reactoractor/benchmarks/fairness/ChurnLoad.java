package io.reactoractor.benchmarks.fairness;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.scheduler.Scheduler;

/**
 * Short-lived actors created continuously: a dedicated outside thread creates a new worker every
 * {@code periodNanos} (open loop) that runs {@code tasksPerActor} busy tasks of {@code taskNanos} one after
 * the other (each re-scheduling the next), then disposes itself. Under "least cumulative time first"
 * without placement rules, every newcomer starts at 0 and runs ahead of the long-lived actors.
 *
 * <p>If the scheduler cannot keep up, live churn actors pile up; past {@link #MAX_ALIVE} new ones are
 * skipped (and counted) so that a starving peer cannot exhaust the memory.
 */
final class ChurnLoad {

    static final int MAX_ALIVE = 10_000;

    private final Scheduler scheduler;
    private final long periodNanos;
    private final int tasksPerActor;
    private final long taskNanos;
    private final LongAdder busy;
    private final Thread spawner;
    private final AtomicInteger alive = new AtomicInteger();
    private final LongAdder finishedInWindow = new LongAdder();
    private volatile boolean running = true;
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile long windowEnd = Long.MAX_VALUE;
    private long startedInWindow; // spawner thread only; read after join
    private long skipped; // spawner thread only; read after join

    ChurnLoad(Scheduler scheduler, long periodNanos, int tasksPerActor, long taskNanos, LongAdder busy) {
        this.scheduler = scheduler;
        this.periodNanos = periodNanos;
        this.tasksPerActor = tasksPerActor;
        this.taskNanos = taskNanos;
        this.busy = busy;
        this.spawner = new Thread(this::spawnLoop, "churn-spawner");
        this.spawner.setDaemon(true);
    }

    void start() {
        spawner.start();
    }

    /** Actors created in [start, end) are counted as started; those finishing in it as finished. */
    void window(long start, long end) {
        windowStart = start;
        windowEnd = end;
    }

    private boolean inWindow(long now) {
        return now - windowStart >= 0 && now - windowEnd < 0;
    }

    private void spawnLoop() {
        Pacer pacer = new Pacer(periodNanos);
        while (running) {
            long now = pacer.awaitTick();
            if (alive.get() >= MAX_ALIVE) {
                skipped++;
                continue;
            }
            try {
                Scheduler.Worker w = scheduler.createWorker();
                alive.incrementAndGet();
                w.schedule(new ShortLived(w));
                if (inWindow(now)) {
                    startedInWindow++;
                }
            } catch (RejectedExecutionException stopping) {
                alive.decrementAndGet();
                return;
            }
        }
    }

    /** Stops creating actors (those alive finish or are dropped with the scheduler). */
    void stop() throws InterruptedException {
        running = false;
        spawner.join();
    }

    long startedInWindow() {
        return startedInWindow;
    }

    long finishedInWindow() {
        return finishedInWindow.sum();
    }

    long skipped() {
        return skipped;
    }

    private final class ShortLived implements Runnable {
        private final Scheduler.Worker worker;
        private int left = tasksPerActor; // one run at a time; the worker's hand-off publishes it

        ShortLived(Scheduler.Worker worker) {
            this.worker = worker;
        }

        @Override
        public void run() {
            busy.add(Busy.burn(taskNanos));
            if (--left > 0 && running) {
                try {
                    worker.schedule(this);
                    return;
                } catch (RejectedExecutionException stopping) {
                    // disposed with the scheduler: fall through and retire
                }
            }
            if (left == 0 && inWindow(System.nanoTime())) {
                finishedInWindow.increment();
            }
            alive.decrementAndGet();
            worker.dispose();
        }
    }
}
