package io.reactoractor.benchmarks.savina;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import org.apache.pekko.actor.ActorSystem;

/**
 * Runs the Savina-style workloads on this library's actors and on Pekko classic actors in one JVM,
 * with the same sizes and the same number of threads (see {@link SavinaPeers}), and prints the
 * median time per workload and the ratio {@code time_ours / time_pekko} as a Markdown table on
 * stdout (progress on stderr; anything else the runtimes print goes to stderr too).
 *
 * <p>Per workload: {@code warmup} rounds, then {@code rounds} measured rounds; a round runs both
 * peers once, ours first in even rounds and Pekko first in odd ones, so neither always runs on the
 * other's leftovers (JIT, GC). A run is timed from the creation of its actors to the arrival of the
 * result; tearing the actors down is not timed, and finishes before the next run starts. Every run's
 * result is checked against the expected value and a mismatch (or a timeout) aborts the runner
 * with an exception: a broken implementation never reports a time.
 *
 * <p>Usage: {@code SavinaRunner [--quick] [--rounds=N] [--warmup=N] [--workloads=a,b] [--threads=2]
 * [--scale=1.0] [--ordering=fair|fifo]}. Defaults: 3 warm-up and 10 measured rounds; {@code --quick}: 1 and 3 (same sizes,
 * under a minute on 2 cores). {@code --scale} multiplies every size (message counts, not actor
 * counts).
 */
public final class SavinaRunner {

    /** How long one run may take before it counts as failed. */
    static final Duration RUN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration TEARDOWN_TIMEOUT = Duration.ofSeconds(30);

    /** Run parameters. */
    public record Options(int warmup, int rounds, int threads, double scale, List<String> workloads,
            ActorScheduler.Ordering ordering) {

        /** @return 3 warm-up and 10 measured rounds, 2 threads, standard sizes, every workload, FAIR */
        public static Options defaults() {
            return new Options(3, 10, 2, 1.0, List.of(), ActorScheduler.Ordering.FAIR);
        }
    }

    /** One workload's measured times, in nanoseconds, per peer. */
    public record Result(SavinaWorkload workload, long[] oursNanos, long[] pekkoNanos) {

        /** @return the median of this library's times, ms */
        public double oursMedianMs() {
            return median(oursNanos) / 1e6;
        }

        /** @return the median of Pekko's times, ms */
        public double pekkoMedianMs() {
            return median(pekkoNanos) / 1e6;
        }

        /** @return median ours / median Pekko (below 1: ours is faster) */
        public double ratio() {
            return median(oursNanos) / median(pekkoNanos);
        }
    }

    private SavinaRunner() {
    }

    public static void main(String[] args) throws Exception {
        Options o = parse(args);
        // Pekko's default logger and anything else that writes to System.out must not mix with the
        // report: keep the real stdout for the table only
        PrintStream report = System.out;
        System.setOut(System.err);
        List<Result> results = run(o, System.err);
        report.println(toMarkdown(o, results));
        report.flush();
    }

    static Options parse(String[] args) {
        int warmup = -1;
        int rounds = -1;
        boolean quick = false;
        Options d = Options.defaults();
        int threads = d.threads();
        double scale = d.scale();
        List<String> workloads = d.workloads();
        ActorScheduler.Ordering ordering = d.ordering();
        for (String a : args) {
            if (a.equals("--quick")) {
                quick = true;
            } else if (a.startsWith("--rounds=")) {
                rounds = Integer.parseInt(a.substring("--rounds=".length()));
            } else if (a.startsWith("--warmup=")) {
                warmup = Integer.parseInt(a.substring("--warmup=".length()));
            } else if (a.startsWith("--threads=")) {
                threads = Integer.parseInt(a.substring("--threads=".length()));
            } else if (a.startsWith("--scale=")) {
                scale = Double.parseDouble(a.substring("--scale=".length()));
            } else if (a.startsWith("--ordering=")) {
                ordering = ActorScheduler.Ordering.valueOf(
                        a.substring("--ordering=".length()).trim().toUpperCase(Locale.ROOT));
            } else if (a.startsWith("--workloads=")) {
                workloads = new ArrayList<>();
                for (String w : a.substring("--workloads=".length()).split(",")) {
                    if (!w.isBlank()) {
                        workloads.add(w.trim());
                    }
                }
            } else {
                throw new IllegalArgumentException("unknown option " + a + "; usage: SavinaRunner [--quick] "
                        + "[--rounds=N] [--warmup=N] [--workloads=" + String.join(",", workloadNames())
                        + "] [--threads=2] [--scale=1.0] [--ordering=fair|fifo]");
            }
        }
        if (rounds == -1) {
            rounds = quick ? 3 : d.rounds();
        }
        if (warmup == -1) {
            warmup = quick ? 1 : d.warmup();
        }
        if (rounds < 1 || warmup < 0 || threads < 1 || !(scale > 0)) {
            throw new IllegalArgumentException("need rounds >= 1, warmup >= 0, threads >= 1, scale > 0");
        }
        for (String w : workloads) {
            if (!workloadNames().contains(w)) {
                throw new IllegalArgumentException("unknown workload '" + w + "'; known: " + workloadNames());
            }
        }
        return new Options(warmup, rounds, threads, scale, List.copyOf(workloads), ordering);
    }

    /**
     * The workloads at their standard sizes (each run ≈ 0.2-2 s on 2 cores) times {@code scale}.
     *
     * @param scale multiplies the message counts (not the actor counts); 1.0 = standard
     * @param timeout the longest one run may take
     * @return every workload, in report order
     */
    public static List<SavinaWorkload> workloads(double scale, Duration timeout) {
        return List.of(
                new PingPong(scaled(800_000, scale), timeout),
                new ThreadRing(100, scaled(1_000_000, scale), timeout),
                new Counting(scaled(3_000_000, scale), timeout),
                new ForkJoinThroughput(40, scaled(75_000, scale), timeout),
                new Chameneos(100, scaled(600_000, scale), timeout),
                new Big(200, scaled(3_000, scale), timeout));
    }

    private static int scaled(int n, double scale) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE / 64, Math.round(n * scale)));
    }

    static List<String> workloadNames() {
        List<String> names = new ArrayList<>();
        for (SavinaWorkload w : workloads(1e-6, RUN_TIMEOUT)) {
            names.add(w.name());
        }
        return names;
    }

    /**
     * Runs the selected workloads on both peers.
     *
     * @param o        options
     * @param progress where progress lines go
     * @return one result per workload
     * @throws Exception if a run failed, timed out or computed a wrong result
     */
    public static List<Result> run(Options o, PrintStream progress) throws Exception {
        List<SavinaWorkload> selected = new ArrayList<>();
        for (SavinaWorkload w : workloads(o.scale(), RUN_TIMEOUT)) {
            if (o.workloads().isEmpty() || o.workloads().contains(w.name())) {
                selected.add(w);
            }
        }
        return run(selected, o.warmup(), o.rounds(), o.threads(), o.ordering(), progress);
    }

    /**
     * Runs {@code workloads} on both peers (one scheduler and one actor system for all of them).
     *
     * @param workloads what to run
     * @param warmup    warm-up rounds per workload
     * @param rounds    measured rounds per workload
     * @param threads   threads of each peer
     * @param ordering  the {@code ActorScheduler}'s ordering
     * @param progress  where progress lines go
     * @return one result per workload
     * @throws Exception if a run failed, timed out or computed a wrong result
     */
    public static List<Result> run(List<SavinaWorkload> workloads, int warmup, int rounds, int threads,
            ActorScheduler.Ordering ordering, PrintStream progress) throws Exception {
        ActorScheduler scheduler = SavinaPeers.newScheduler(threads, ordering);
        ActorSystem system = SavinaPeers.newActorSystem(threads);
        try {
            List<Result> results = new ArrayList<>();
            for (SavinaWorkload w : workloads) {
                progress.printf(Locale.ROOT, "[savina] %s (%s): %d warm-up + %d measured rounds%n", w.name(),
                        w.sizes(), warmup, rounds);
                long[] ours = new long[rounds];
                long[] pekko = new long[rounds];
                for (int r = 0; r < warmup + rounds; r++) {
                    boolean oursFirst = r % 2 == 0;
                    long a = oursFirst ? timeOurs(w, scheduler) : timePekko(w, system);
                    long b = oursFirst ? timePekko(w, system) : timeOurs(w, scheduler);
                    long o = oursFirst ? a : b;
                    long p = oursFirst ? b : a;
                    boolean measured = r >= warmup;
                    if (measured) {
                        ours[r - warmup] = o;
                        pekko[r - warmup] = p;
                    }
                    progress.printf(Locale.ROOT, "[savina]   %s %2d: %s %8.1f ms, %s %8.1f ms%n",
                            measured ? "round " : "warm-up", measured ? r - warmup + 1 : r + 1,
                            SavinaPeers.OURS, o / 1e6, SavinaPeers.PEKKO, p / 1e6);
                }
                results.add(new Result(w, ours, pekko));
            }
            return results;
        } finally {
            scheduler.dispose();
            system.terminate();
            try {
                system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                progress.println("[savina] Pekko did not terminate within 10 s: " + e);
            }
        }
    }

    /** One run on this library's actors, checked; returns its time in ns. */
    static long timeOurs(SavinaWorkload w, ActorScheduler scheduler) throws Exception {
        OursRun run = new OursRun(scheduler);
        long[] before = engineCounters(scheduler);
        long t0 = System.nanoTime();
        long got;
        try {
            got = w.runOurs(run);
        } catch (Exception e) {
            tearDownAfterFailure(e, run::teardown);
            throw e;
        }
        long t1 = System.nanoTime();
        long[] after = engineCounters(scheduler);
        run.teardown(TEARDOWN_TIMEOUT);
        check(w, SavinaPeers.OURS, got);
        if (COUNTERS) {
            double m = w.messages();
            System.out.printf(Locale.ROOT, "[savina]     %s engine per message: run-queue locks %.3f (of which"
                    + " another carrier's or shared %.3f), wake-ups %.3f, chained turns %.3f, run-next rescues %.4f, turns %.3f, preemptions %.4f,"
                    + " clock reads %.3f%n",
                    w.name(), (after[0] - before[0]) / m, (after[4] - before[4]) / m, (after[1] - before[1]) / m,
                    (after[2] - before[2]) / m, (after[3] - before[3]) / m, (after[5] - before[5]) / m,
                    (after[6] - before[6]) / m, (after[7] - before[7]) / m);
        }
        return t1 - t0;
    }

    /** {@code -Dsavina.counters=true}: print the engine's shared-structure counters per message of each run. */
    private static final boolean COUNTERS = Boolean.getBoolean("savina.counters");

    /**
     * The engine's [run-queue locks, wake-ups, chained turns, rescues, locks not of the caller's own carrier,
     * turns, preemptions, clock reads between and after tasks]
     * (racy reads; exact once quiet).
     */
    private static long[] engineCounters(ActorScheduler scheduler) {
        return io.reactoractor.internal.Internals.engine(scheduler.defaultGroup()).engineCounters();
    }

    /** One run on Pekko, checked; returns its time in ns. */
    static long timePekko(SavinaWorkload w, ActorSystem system) throws Exception {
        PekkoRun run = new PekkoRun(system);
        long t0 = System.nanoTime();
        long got;
        try {
            got = w.runPekko(run);
        } catch (Exception e) {
            tearDownAfterFailure(e, run::teardown);
            throw e;
        }
        long t1 = System.nanoTime();
        run.teardown(TEARDOWN_TIMEOUT);
        check(w, SavinaPeers.PEKKO, got);
        return t1 - t0;
    }

    /** A teardown step that may fail. */
    private interface Teardown {
        void run(Duration timeout) throws Exception;
    }

    /** Tears a failed run down without letting a teardown failure hide the run's own failure. */
    private static void tearDownAfterFailure(Exception failure, Teardown teardown) {
        try {
            teardown.run(TEARDOWN_TIMEOUT);
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
    }

    private static void check(SavinaWorkload w, String peer, long got) {
        if (got != w.expected()) {
            throw new IllegalStateException(w.name() + " on " + peer + " computed " + got + " but "
                    + w.expected() + " was expected: the implementation is broken, no time is reported");
        }
    }

    static double median(long[] values) {
        long[] s = values.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
    }

    /**
     * @param o       the options of the run
     * @param results its results
     * @return the report as Markdown
     */
    public static String toMarkdown(Options o, List<Result> results) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "### Savina-style workloads: %s (%s) vs %s (%d threads each)%n%n",
                SavinaPeers.OURS, o.ordering(), SavinaPeers.PEKKO, o.threads()));
        b.append(String.format(Locale.ROOT, "Median of %d measured runs after %d warm-up rounds per workload "
                + "(peers alternating, same JVM); time from creating the actors to the checked result.%n%n",
                o.rounds(), o.warmup()));
        b.append("| workload | sizes | messages | ").append(SavinaPeers.OURS).append(" ms (min-max) | ")
                .append(SavinaPeers.PEKKO).append(" ms (min-max) | ours / pekko |\n");
        b.append("|---|---|---:|---:|---:|---:|\n");
        Map<String, Result> byName = new LinkedHashMap<>();
        for (Result r : results) {
            byName.put(r.workload().name(), r);
        }
        for (Result r : byName.values()) {
            b.append(String.format(Locale.ROOT, "| %s | %s | %,d | %s | %s | **%.2fx** |%n", r.workload().name(),
                    r.workload().sizes(), r.workload().messages(), cell(r.oursNanos()), cell(r.pekkoNanos()),
                    r.ratio()));
        }
        b.append("\nRatio below 1: ").append(SavinaPeers.OURS).append(" is faster.\n");
        return b.toString();
    }

    private static String cell(long[] nanos) {
        long min = Arrays.stream(nanos).min().orElse(0);
        long max = Arrays.stream(nanos).max().orElse(0);
        return String.format(Locale.ROOT, "%.1f (%.1f-%.1f)", median(nanos) / 1e6, min / 1e6, max / 1e6);
    }
}
