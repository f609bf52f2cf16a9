package io.reactoractor.scheduling;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Detects carriers stuck in one task far longer than the quota and keeps the other actors running.
 *
 * <p>The JVM cannot preempt a task: a blocking call, or a Reactor {@code publishOn} drain loop that
 * never returns while items keep coming, holds its carrier for as long as it likes. Every
 * {@code threshold / 4} (on the timer thread) the monitor looks at each carrier's
 * {@code taskStartedAt}; a task older than the threshold is a <em>hog</em>. For each hog the monitor
 * logs one line naming the actor, counts it, and the {@link CarrierPool} starts a compensating
 * carrier (bounded by {@code maxCompensatingThreads}) that serves the run queue until the hog's task
 * ends; the compensating carrier then retires.
 *
 * <p>The flag handshake with the carrier (see {@link CarrierThread#hogStamp()}) guarantees the
 * hogged count never drifts: every successful flag is undone exactly once, by the carrier when the
 * task ends (or when it goes idle), or by the monitor itself when it notices that the task it
 * flagged had already ended.
 */
final class HogMonitor {

    private static final Logger LOG = Loggers.getLogger(HogMonitor.class);

    private final SchedulerEngine engine;
    private final long thresholdNanos;
    private final long intervalNanos;
    private final AtomicInteger hogged = new AtomicInteger();
    private final LongAdder detected = new LongAdder();
    private final Tick tick = new Tick();

    HogMonitor(SchedulerEngine engine, long thresholdNanos) {
        this.engine = engine;
        this.thresholdNanos = thresholdNanos;
        this.intervalNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), thresholdNanos / 4);
    }

    void start() {
        engine.timer().schedule(tick, System.nanoTime() + intervalNanos);
    }

    int hogged() {
        return hogged.get();
    }

    long detected() {
        return detected.sum();
    }

    void hogEnded() {
        hogged.decrementAndGet();
    }

    void check() {
        long now = System.nanoTime();
        engine.pool().forEach(c -> inspect(c, now));
        int h = hogged.get();
        if (h > 0) {
            engine.pool().compensate(h);
        }
    }

    private void inspect(CarrierThread c, long now) {
        long started = c.taskStartedAt();
        if (started == 0 || now - started < thresholdNanos || c.hogStamp() == started) {
            return;
        }
        hogged.incrementAndGet();
        if (!c.tryFlagHog(started)) {
            hogged.decrementAndGet();
            return;
        }
        if (c.taskStartedAt() != started) {
            // the task ended while we flagged it; undo unless the carrier already did
            if (c.tryUnflagHog(started)) {
                hogged.decrementAndGet();
            }
            return;
        }
        detected.increment();
        ActorCell cell = c.currentCell();
        long ms = TimeUnit.NANOSECONDS.toMillis(now - started);
        LOG.warn("[{}] actor '{}' has been running one task on thread {} for {} ms (quota {} ms); "
                        + "starting a compensating thread so the other actors keep running",
                engine.config().name(), cell == null ? "?" : cell.path(), c.getName(), ms,
                TimeUnit.NANOSECONDS.toMillis(engine.config().quotaNanos()));
    }

    /** The monitor's periodic timer entry: internal, re-arms itself until the timer shuts down. */
    private final class Tick extends TimerEntry {
        @Override
        protected void fire() {
            try {
                check();
            } finally {
                engine.timer().schedule(this, System.nanoTime() + intervalNanos);
            }
        }

        @Override
        protected boolean awaitedOnShutdown() {
            return false;
        }

        @Override
        protected boolean internal() {
            return true;
        }
    }
}
