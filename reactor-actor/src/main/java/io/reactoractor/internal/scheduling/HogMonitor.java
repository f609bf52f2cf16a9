package io.reactoractor.internal.scheduling;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
    /** When the previous check ran, 0 before the first (this monitor's thread only). */
    private long lastCheck;

    HogMonitor(SchedulerEngine engine, long thresholdNanos) {
        this.engine = engine;
        this.thresholdNanos = thresholdNanos;
        this.intervalNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), thresholdNanos / 4);
    }

    /**
     * Whether {@link #tick} is armed (or firing). The tick disarms itself when every carrier is parked (no task
     * runs: nothing to check, and an idle scheduler's timer thread then sleeps instead of waking every
     * interval); a carrier that leaves its park with work re-arms it ({@link #carrierBusy}).
     *
     * <p>No lost arming, by a Dekker handshake on volatile variables (sequentially consistent):
     * <pre>
     *   tick:    armed = false ; read parked (all parked?)      -- not all parked: re-arm by CAS
     *   carrier: parked-- (it, or its waker) ; read armed        -- false: arm by CAS
     * </pre>
     * Either the tick sees the carrier unparked and re-arms, or the carrier sees the tick disarmed and arms; the
     * CAS makes one of them, not both, schedule the entry.
     */
    private final AtomicBoolean armed = new AtomicBoolean();

    void start() {
        armed.set(true);
        engine.timer().schedule(tick, System.nanoTime() + intervalNanos);
    }

    /** A carrier leaves its park with work to do: arms the tick if an idle pool had disarmed it. */
    void carrierBusy() {
        if (!armed.get() && armed.compareAndSet(false, true)) {
            engine.timer().schedule(tick, System.nanoTime() + intervalNanos);
        }
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

    /** Test seam: runs at the start of every check, on the timer thread ({@code null} in production). */
    volatile Runnable beforeCheck;

    void check() {
        Runnable hook = beforeCheck;
        if (hook != null) {
            hook.run();
        }
        long now = System.nanoTime();
        long previous = lastCheck;
        lastCheck = now;
        engine.pool().forEach(c -> {
            // an actor woken into a carrier's run-next slot by a task that then ran long: the bound
            // on its wait when every other carrier is parked (RunNext, rescue)
            engine.runNext().rescue(c, now);
            inspect(c, now, previous);
        });
        int h = hogged.get();
        if (h > 0) {
            engine.pool().compensate(h);
        }
    }

    /**
     * A task's published start may be earlier than it was, and shared by a few consecutive tasks: a
     * turn reads the clock once per few tiny tasks ({@link Turn}, "Clock reads between tasks"). The
     * carrier's task count tells those tasks apart, and bounds the age: if the count moved since the
     * previous check, the task running now started after that check.
     */
    private void inspect(CarrierThread c, long now, long previousCheck) {
        long started = c.taskStartedAt();
        if (started == 0) {
            return;
        }
        long runs = c.tasksRun();
        if (runs != c.monitorRuns) {
            c.monitorRuns = runs;
            c.monitorRunsSince = previousCheck;
        }
        long since = Math.max(started, c.monitorRunsSince);
        if (now - since < thresholdNanos || c.hogStamp() == started) {
            return;
        }
        if (!confirmed(c, started, runs, now)) {
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
        long ms = TimeUnit.NANOSECONDS.toMillis(now - since);
        LOG.warn("[{}] actor '{}' has been running one task on thread {} for {} ms (quota {} ms); {}",
                engine.config().name(), cell == null ? "?" : cell.path(), c.getName(), ms,
                TimeUnit.NANOSECONDS.toMillis(engine.config().quotaNanos()), compensationOutlook());
    }

    /**
     * What the warning says happens next: whether {@link #check} will start a compensating carrier for this
     * hog (the pool starts up to {@code min(hogged, maxCompensating)}), so an operator reading the log is
     * not told one starts when compensation is disabled, all compensating carriers are taken, or the
     * scheduler is terminating.
     */
    private String compensationOutlook() {
        int max = engine.pool().maxCompensating();
        if (max == 0) {
            return "compensation is disabled (maxCompensatingThreads 0): other actors wait for this thread";
        }
        if (engine.isStopping()) {
            return "the scheduler is terminating: no compensating thread starts";
        }
        if (hogged.get() > max) {
            return "all " + max + " compensating threads are taken (maxCompensatingThreads): "
                    + "other actors wait for a free thread";
        }
        return "starting a compensating thread so the other actors keep running";
    }

    /**
     * Whether the carrier is really holding on to its task, not merely descheduled by the OS.
     *
     * <p>Wall-clock age alone raises false alarms on an overloaded machine: a carrier that the OS did
     * not run for 50 ms looks exactly like one stuck in a task. So a suspect is confirmed only with
     * evidence, gathered over one more monitor interval:
     * <ul>
     *   <li>it is blocked ({@code BLOCKED}, {@code WAITING}, {@code TIMED_WAITING}): a blocking call,
     *       a hog at once;</li>
     *   <li>it used at least half of the wall time since it became a suspect as CPU time: a busy task
     *       (a {@code publishOn} drain loop, a spin);</li>
     *   <li>it is {@code RUNNABLE} without CPU progress, in a native method: blocking I/O (a JDBC
     *       socket read shows up as {@code RUNNABLE}).</li>
     * </ul>
     * {@code RUNNABLE}, little CPU, not in native code: the OS did not run it; no hog (a compensating
     * thread would not get the CPU either). The suspect is re-examined on the next interval.
     * Only this monitor thread touches the suspect fields, and only on this slow path.
     */
    private boolean confirmed(CarrierThread c, long started, long runs, long now) {
        Thread.State state = c.getState();
        if (state == Thread.State.BLOCKED || state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
            return true;
        }
        if (!CPU_TIME) {
            return true; // no evidence available: trust the wall clock, as before
        }
        long cpu = THREADS.getThreadCpuTime(c.getId());
        if (cpu < 0) {
            return true;
        }
        if (c.suspectStamp != started || c.suspectRuns != runs) {
            // another task (a shared start is told apart by the task count): a new observation window
            c.suspectStamp = started;
            c.suspectRuns = runs;
            c.suspectCpu = cpu;
            c.suspectWall = now;
            return false;
        }
        long wall = now - c.suspectWall;
        if (wall < intervalNanos / 2) {
            return false;
        }
        if (cpu - c.suspectCpu >= wall / 2) {
            return true;
        }
        StackTraceElement[] stack = c.getStackTrace();
        if (stack.length > 0 && stack[0].isNativeMethod()) {
            return true;
        }
        // descheduled: start a new observation window
        c.suspectCpu = cpu;
        c.suspectWall = now;
        return false;
    }

    private static final java.lang.management.ThreadMXBean THREADS =
            java.lang.management.ManagementFactory.getThreadMXBean();
    private static final boolean CPU_TIME = cpuTimeAvailable();

    private static boolean cpuTimeAvailable() {
        try {
            if (!THREADS.isThreadCpuTimeSupported()) {
                return false;
            }
            if (!THREADS.isThreadCpuTimeEnabled()) {
                THREADS.setThreadCpuTimeEnabled(true);
            }
            return THREADS.isThreadCpuTimeEnabled();
        } catch (RuntimeException e) { // SecurityException, UnsupportedOperationException
            return false;
        }
    }

    /**
     * The monitor's periodic timer entry: internal, re-arms itself until the timer shuts down, or until every
     * carrier is parked ({@link #armed}).
     */
    private final class Tick extends TimerEntry {
        @Override
        protected void fire() {
            try {
                check();
            } catch (Throwable t) {
                engine.internalError("checking for hogs", t);
            }
            // re-armed whatever check() did (a monitor that stops re-arming is dead for good), unless every
            // carrier is parked: then the first carrier to leave its park with work re-arms it (armed's doc)
            boolean idle = false;
            try {
                idle = hogged.get() == 0 && engine.pool().allParked();
            } catch (Throwable t) {
                engine.internalError("checking for hogs", t);
            }
            if (idle) {
                armed.set(false);
                if (!engine.pool().allParked() && armed.compareAndSet(false, true)) {
                    engine.timer().schedule(this, System.nanoTime() + intervalNanos);
                }
                return;
            }
            engine.timer().schedule(this, System.nanoTime() + intervalNanos);
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
