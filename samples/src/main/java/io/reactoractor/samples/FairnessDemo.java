package io.reactoractor.samples;

import io.reactoractor.ActorScheduler;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The fairness demo: one heavy stream and one light stream, first on Reactor's
 * {@code Schedulers.newParallel("parallel", 2)}, then on a 2-thread {@link ActorScheduler}.
 *
 * <ul>
 *   <li><b>Heavy stream</b> (a batch job): {@code Flux.range(..).flatMap(i -> Mono.fromRunnable(chunk)
 *       .subscribeOn(scheduler), 32)}: 32 chunks of 1 ms CPU work in flight at any time, enough to
 *       saturate both threads. Every chunk is its own short task, so a scheduler <em>can</em>
 *       interleave other work between chunks.</li>
 *   <li><b>Light stream</b> (an interactive stream): {@code Flux.interval(3 ms)} on a separate ticker
 *       thread, {@code publishOn(scheduler)}, ~10 µs of work per tick. Its <em>scheduling delay</em> is
 *       the time from the tick to the start of its processing on the scheduler.</li>
 * </ul>
 *
 * <p>On {@code parallel} every thread is a FIFO queue: a tick waits behind all the heavy chunks
 * queued before it. On the {@link ActorScheduler} the heavy stream runs in its own group
 * ({@code scheduler.group("batch", 1)}), the light one in the default group; the scheduler picks the
 * group with the least CPU time used, so a tick waits at most for a chunk in progress to finish.
 *
 * <p>What this demo does <em>not</em> show: a single hot {@code publishOn} drain loop (one task
 * that never returns while items keep arriving) cannot be interrupted by any scheduler, this one
 * included. That needs the library's actor operator.
 *
 * <p>Run: {@code mvn -B -q -pl samples -am -DskipTests package exec:java}
 * (optional: {@code -Dexec.args="<seconds per scheduler>"}, default 10).
 */
public final class FairnessDemo {

    /** Threads of both schedulers. */
    public static final int THREADS = 2;
    /** Period of the light stream's ticks. */
    public static final Duration TICK = Duration.ofMillis(3);
    /** CPU work per light tick. */
    public static final long LIGHT_WORK_NANOS = TimeUnit.MICROSECONDS.toNanos(10);
    /** CPU work per heavy chunk. */
    public static final long CHUNK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Heavy chunks in flight (flatMap concurrency). */
    public static final int HEAVY_IN_FLIGHT = 32;

    private FairnessDemo() {
    }

    /**
     * What one scheduler achieved during the measurement window.
     *
     * @param scheduler          label of the scheduler
     * @param lightTicks         light ticks emitted during the window (each one is measured)
     * @param lightUnfinished    ticks of the window that had still not been processed at the end
     * @param lightP50Ms         median scheduling delay of the light stream, ms
     * @param lightP99Ms         99th percentile, ms
     * @param lightMaxMs         maximum, ms
     * @param heavyChunksPerSec  heavy chunks (1 ms each) completed per second
     * @param heavyCpuShare      heavy CPU work done / (threads x window), 0..1
     */
    public record Result(String scheduler, int lightTicks, int lightUnfinished, double lightP50Ms,
            double lightP99Ms, double lightMaxMs, double heavyChunksPerSec, double heavyCpuShare) {
    }

    public static void main(String[] args) throws InterruptedException {
        Duration window = Duration.ofSeconds(10);
        if (args.length > 0) {
            window = Duration.ofMillis(Math.round(Double.parseDouble(args[0]) * 1000));
        }
        PrintStream out = System.out;
        out.printf(Locale.ROOT, "Fairness demo: %d threads; heavy = %d x 1 ms chunks in flight "
                + "(flatMap + subscribeOn); light = tick every %d ms + %d us work (interval + publishOn)%n",
                THREADS, HEAVY_IN_FLIGHT, TICK.toMillis(), LIGHT_WORK_NANOS / 1000);
        out.printf(Locale.ROOT, "Each scheduler: 1 s warm-up, then %.1f s measured. Live: light delay "
                + "of the ticks processed in each 2 s slice.%n%n", window.toMillis() / 1000.0);
        List<Result> results = runComparison(Duration.ofSeconds(1), window, out);
        out.println();
        out.print(formatTable(results));
        out.println(verdict(results));
    }

    /**
     * Runs the demo on {@code parallel} then on {@code actor}, disposing each scheduler after use.
     *
     * @param warmup how long each scheduler runs before measuring
     * @param window how long each scheduler is measured
     * @param live   where progress lines go (may be a null stream)
     * @return one result per scheduler: {@code parallel} first, {@code actor} second
     */
    public static List<Result> runComparison(Duration warmup, Duration window, PrintStream live)
            throws InterruptedException {
        List<Result> results = new ArrayList<>();
        Scheduler parallel = Schedulers.newParallel("parallel", THREADS);
        try {
            live.println("-- Schedulers.newParallel(\"parallel\", 2): light and heavy on the same scheduler");
            results.add(measure("parallel", parallel, parallel, warmup, window, live));
        } finally {
            parallel.dispose();
        }
        ActorScheduler actor = ActorScheduler.builder().name("actor").threads(THREADS).build();
        try {
            live.println("-- ActorScheduler (2 threads, FAIR): light on the scheduler (default group), "
                    + "heavy on scheduler.group(\"batch\", 1)");
            results.add(measure("actor", actor, actor.group("batch", 1), warmup, window, live));
        } finally {
            actor.dispose();
        }
        return results;
    }

    /**
     * Runs the heavy stream on {@code heavyScheduler} and the light stream on {@code lightScheduler}.
     * The caller owns (and disposes) both schedulers.
     */
    public static Result measure(String label, Scheduler lightScheduler, Scheduler heavyScheduler,
            Duration warmup, Duration window, PrintStream live) throws InterruptedException {
        Scheduler ticker = Schedulers.newSingle("demo-ticker", true);
        LongAdder heavyChunks = new LongAdder();
        DelayLog delays = new DelayLog();
        CountDownLatch lightDone = new CountDownLatch(1);
        Disposable heavy = null;
        Disposable light = null;
        try {
            heavy = Flux.range(0, Integer.MAX_VALUE)
                    .flatMap(i -> Mono.fromRunnable(() -> {
                        burn(CHUNK_NANOS);
                        heavyChunks.increment();
                    }).subscribeOn(heavyScheduler), HEAVY_IN_FLIGHT)
                    .subscribe(null, e -> live.println("heavy stream failed: " + e));

            long start = System.nanoTime();
            long windowStart = start + warmup.toNanos();
            long windowEnd = windowStart + window.toNanos();
            delays.window(windowStart, windowEnd);
            light = Flux.interval(TICK, ticker)
                    .take(warmup.plus(window), ticker)
                    .map(i -> delays.emitted(System.nanoTime()))
                    .onBackpressureBuffer()
                    .publishOn(lightScheduler)
                    .subscribe(t0 -> {
                        long startedAt = System.nanoTime();
                        burn(LIGHT_WORK_NANOS);
                        delays.processed(t0, startedAt - t0);
                    }, e -> {
                        live.println("light stream failed: " + e);
                        lightDone.countDown();
                    }, lightDone::countDown);

            sleepUntil(windowStart);
            long chunksAtStart = heavyChunks.sum();
            delays.drainRecent(); // forget the warm-up
            long slice = TimeUnit.SECONDS.toNanos(2);
            long sliceEnd = windowStart;
            while (sliceEnd < windowEnd) {
                sliceEnd = Math.min(sliceEnd + slice, windowEnd);
                long chunksBefore = heavyChunks.sum();
                long sliceBegin = System.nanoTime();
                sleepUntil(sliceEnd);
                double secs = (System.nanoTime() - sliceBegin) / 1e9;
                long[] recent = delays.drainRecent();
                live.printf(Locale.ROOT, "  %-9s t=%4.1fs  light: %4d ticks, p99 %7.2f ms, max %7.2f ms"
                        + "   heavy: %5.0f chunks/s%n", label, (sliceEnd - windowStart) / 1e9,
                        recent.length, percentileMs(recent, 0.99), percentileMs(recent, 1.0),
                        (heavyChunks.sum() - chunksBefore) / secs);
            }
            long chunksInWindow = heavyChunks.sum() - chunksAtStart;
            double windowSecs = window.toNanos() / 1e9;

            // Ticks of the window that are still queued must be counted, or a starved stream would
            // look good. Keep the heavy load on while they drain (bounded wait).
            lightDone.await(5, TimeUnit.SECONDS);
            long[] all = delays.windowDelays();
            int emitted = delays.emittedInWindow();
            return new Result(label, emitted, Math.max(0, emitted - all.length),
                    percentileMs(all, 0.50), percentileMs(all, 0.99), percentileMs(all, 1.0),
                    chunksInWindow / windowSecs,
                    chunksInWindow * (double) CHUNK_NANOS / (window.toNanos() * (double) THREADS));
        } finally {
            if (light != null) {
                light.dispose();
            }
            if (heavy != null) {
                heavy.dispose();
            }
            ticker.dispose();
        }
    }

    /** A human-readable table of the results. */
    public static String formatTable(List<Result> results) {
        StringBuilder sb = new StringBuilder();
        String header = String.format(Locale.ROOT, "%-10s | %11s | %11s | %11s | %6s | %14s | %9s%n",
                "scheduler", "light p50", "light p99", "light max", "ticks", "heavy chunk/s", "heavy CPU");
        sb.append(header);
        sb.append("-".repeat(header.length() - 1)).append('\n');
        for (Result r : results) {
            sb.append(String.format(Locale.ROOT, "%-10s | %8.3f ms | %8.3f ms | %8.3f ms | %6d | %14.0f | %7.1f %%%n",
                    r.scheduler(), r.lightP50Ms(), r.lightP99Ms(), r.lightMaxMs(), r.lightTicks(),
                    r.heavyChunksPerSec(), r.heavyCpuShare() * 100));
            if (r.lightUnfinished() > 0) {
                sb.append(String.format(Locale.ROOT, "%-10s   (!) %d ticks of the window were never processed "
                        + "(not in the percentiles)%n", "", r.lightUnfinished()));
            }
        }
        return sb.toString();
    }

    /** One line comparing the second result (actor) with the first (parallel). */
    public static String verdict(List<Result> results) {
        if (results.size() < 2) {
            return "Verdict: incomplete run.";
        }
        Result base = results.get(0);
        Result actor = results.get(1);
        double p99Ratio = base.lightP99Ms() / Math.max(actor.lightP99Ms(), 1e-6);
        double tputRatio = actor.heavyChunksPerSec() / Math.max(base.heavyChunksPerSec(), 1e-6);
        String what = p99Ratio >= 1
                ? String.format(Locale.ROOT, "cut the light stream's p99 delay %.1fx", p99Ratio)
                : String.format(Locale.ROOT, "made the light stream's p99 delay %.1fx WORSE", 1 / p99Ratio);
        return String.format(Locale.ROOT, "Verdict: %s %s (%.2f ms -> %.2f ms) at %.2fx the heavy "
                + "throughput of %s.", actor.scheduler(), what, base.lightP99Ms(), actor.lightP99Ms(),
                tputRatio, base.scheduler());
    }

    /** Spins for {@code nanos} of wall time (CPU-bound work stand-in). */
    static void burn(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    private static void sleepUntil(long deadline) throws InterruptedException {
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
        }
    }

    /** Nearest-rank percentile of nanosecond samples, in ms; NaN when empty. */
    static double percentileMs(long[] nanos, double q) {
        if (nanos.length == 0) {
            return Double.NaN;
        }
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e6;
    }

    /** Records light delays; written by one stream at a time, read by the main thread. */
    private static final class DelayLog {
        private long windowStart;
        private long windowEnd;
        private int emittedInWindow;
        private long[] window = new long[1024];
        private int windowSize;
        private long[] recent = new long[1024];
        private int recentSize;

        synchronized void window(long start, long end) {
            windowStart = start;
            windowEnd = end;
        }

        synchronized long emitted(long t0) {
            if (t0 >= windowStart && t0 < windowEnd) {
                emittedInWindow++;
            }
            return t0;
        }

        synchronized void processed(long t0, long delay) {
            if (t0 >= windowStart && t0 < windowEnd) {
                if (windowSize == window.length) {
                    window = Arrays.copyOf(window, windowSize * 2);
                }
                window[windowSize++] = delay;
            }
            if (recentSize == recent.length) {
                recent = Arrays.copyOf(recent, recentSize * 2);
            }
            recent[recentSize++] = delay;
        }

        synchronized long[] drainRecent() {
            long[] r = Arrays.copyOf(recent, recentSize);
            recentSize = 0;
            return r;
        }

        synchronized long[] windowDelays() {
            return Arrays.copyOf(window, windowSize);
        }

        synchronized int emittedInWindow() {
            return emittedInWindow;
        }
    }
}
