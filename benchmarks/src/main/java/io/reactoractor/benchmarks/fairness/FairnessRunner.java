package io.reactoractor.benchmarks.fairness;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Fairness scenarios for {@code ActorScheduler} (FAIR and FIFO) and its peers: Reactor's parallel
 * scheduler, a fixed {@code ThreadPoolExecutor} and a QMQ-style priority queue by cumulative time
 * ({@link Peer}), all with the same number of threads (2 by default), run one after the other in one JVM.
 * Every {@link Scenario} runs on every peer, scenario by scenario.
 *
 * <p>Output: Markdown tables on stdout (progress on stderr); with {@code --csv=<dir>} one CSV per
 * scenario ({@link CsvExport}); with {@code --png=<dir>} charts ({@link Charts}).
 *
 * <p>Usage: {@code FairnessRunner [duration per scenario, e.g. 10s | 500ms | 10] [--quick]
 * [--warmup=2s] [--sample=100ms] [--threads=2] [--peers=actor-fair,actor-fifo,parallel,tpe,qmq-pq]
 * [--scenarios=light,weighted-1-2-4,...] [--csv=<dir>] [--png=<dir>]}. {@code --quick} = 3 s per scenario
 * after a 500 ms warm-up (explicit values still win).
 */
public final class FairnessRunner {

    /**
     * Run parameters.
     *
     * @param duration         the measured window of every run
     * @param warmup           load before the window (not measured, but sampled for the share charts)
     * @param sample           the interval of the CPU-share-over-time samples
     * @param threads          threads of every scheduler
     * @param peers            the schedulers to compare
     * @param scenarios        the scenarios to run
     * @param heavyWorkers     K, the saturating heavy workers next to a light actor (light, gamer, churn, outside)
     * @param heavyTaskNanos   the length of one heavy task
     * @param lightPeriodNanos the light actor's period (open loop)
     * @param lightWorkNanos   the light actor's work per task
     * @param manyActors       the size of the big group of {@link Scenario#MANY_VS_ONE}
     */
    public record Options(Duration duration, Duration warmup, Duration sample, int threads, List<Peer> peers,
            List<Scenario> scenarios, int heavyWorkers, long heavyTaskNanos, long lightPeriodNanos,
            long lightWorkNanos, int manyActors) {

        public static Options defaults() {
            return new Options(Duration.ofSeconds(10), Duration.ofSeconds(2), Duration.ofMillis(100), 2,
                    List.of(Peer.values()), List.of(Scenario.values()), 4, TimeUnit.MILLISECONDS.toNanos(1),
                    TimeUnit.MILLISECONDS.toNanos(2), TimeUnit.MICROSECONDS.toNanos(10), 1000);
        }

        public Options withDuration(Duration d, Duration w) {
            return new Options(d, w, sample, threads, peers, scenarios, heavyWorkers, heavyTaskNanos,
                    lightPeriodNanos, lightWorkNanos, manyActors);
        }

        public Options withSample(Duration s) {
            return new Options(duration, warmup, s, threads, peers, scenarios, heavyWorkers, heavyTaskNanos,
                    lightPeriodNanos, lightWorkNanos, manyActors);
        }

        public Options withThreads(int t) {
            return new Options(duration, warmup, sample, t, peers, scenarios, heavyWorkers, heavyTaskNanos,
                    lightPeriodNanos, lightWorkNanos, manyActors);
        }

        public Options withPeers(List<Peer> p) {
            return new Options(duration, warmup, sample, threads, List.copyOf(p), scenarios, heavyWorkers,
                    heavyTaskNanos, lightPeriodNanos, lightWorkNanos, manyActors);
        }

        public Options withScenarios(List<Scenario> s) {
            return new Options(duration, warmup, sample, threads, peers, List.copyOf(s), heavyWorkers,
                    heavyTaskNanos, lightPeriodNanos, lightWorkNanos, manyActors);
        }

        public Options withManyActors(int n) {
            return new Options(duration, warmup, sample, threads, peers, scenarios, heavyWorkers, heavyTaskNanos,
                    lightPeriodNanos, lightWorkNanos, n);
        }
    }

    /** Parsed command line: the run options and where to write files (null = not at all). */
    record Command(Options options, Path csvDir, Path pngDir) {
    }

    private static final String USAGE = "usage: FairnessRunner [duration] [--quick] [--warmup=2s] [--sample=100ms] "
            + "[--threads=2] [--peers=actor-fair,actor-fifo,parallel,tpe,qmq-pq] [--scenarios=<id>,...] "
            + "[--csv=<dir>] [--png=<dir>]";

    private FairnessRunner() {
    }

    public static void main(String[] args) throws InterruptedException, IOException {
        // charts are drawn off-screen; must be set before anything touches AWT
        System.setProperty("java.awt.headless", "true");
        Command c = parse(args);
        long start = System.nanoTime();
        FairnessReport report = run(c.options(), System.err);
        System.out.println(report.toMarkdown());
        if (c.csvDir() != null) {
            for (Path p : CsvExport.write(report, c.csvDir())) {
                System.err.println("[fairness] wrote " + p);
            }
        }
        if (c.pngDir() != null) {
            for (Path p : Charts.write(report, c.pngDir())) {
                System.err.println("[fairness] wrote " + p);
            }
        }
        System.err.printf(Locale.ROOT, "[fairness] done in %.0f s%n", (System.nanoTime() - start) / 1e9);
    }

    static Command parse(String[] args) {
        Options o = Options.defaults();
        Duration duration = null;
        Duration warmup = null;
        Path csv = null;
        Path png = null;
        boolean quick = false;
        for (String a : args) {
            if (a.equals("--quick")) {
                quick = true;
            } else if (a.startsWith("--warmup=")) {
                warmup = parseDuration(value(a));
            } else if (a.startsWith("--sample=")) {
                o = o.withSample(parseDuration(value(a)));
            } else if (a.startsWith("--threads=")) {
                o = o.withThreads(Integer.parseInt(value(a)));
            } else if (a.startsWith("--peers=")) {
                List<Peer> peers = new ArrayList<>();
                for (String p : value(a).split(",")) {
                    peers.add(Peer.fromLabel(p.trim()));
                }
                o = o.withPeers(peers);
            } else if (a.startsWith("--scenarios=")) {
                List<Scenario> scenarios = new ArrayList<>();
                for (String s : value(a).split(",")) {
                    scenarios.add(Scenario.fromId(s.trim()));
                }
                o = o.withScenarios(scenarios);
            } else if (a.startsWith("--csv=")) {
                csv = Paths.get(value(a));
            } else if (a.startsWith("--png=")) {
                png = Paths.get(value(a));
            } else if (a.startsWith("--")) {
                throw new IllegalArgumentException("unknown option " + a + "; " + USAGE);
            } else {
                duration = parseDuration(a);
            }
        }
        Duration d = duration != null ? duration : quick ? Duration.ofSeconds(3) : o.duration();
        Duration w = warmup != null ? warmup : quick ? Duration.ofMillis(500) : o.warmup();
        if (d.isZero() || d.isNegative() || w.isNegative() || o.sample().isZero() || o.sample().isNegative()) {
            throw new IllegalArgumentException("durations must be positive; " + USAGE);
        }
        return new Command(o.withDuration(d, w), csv, png);
    }

    private static String value(String arg) {
        return arg.substring(arg.indexOf('=') + 1);
    }

    static Duration parseDuration(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
        }
        if (t.endsWith("s")) {
            t = t.substring(0, t.length() - 1);
        }
        return Duration.ofMillis(Math.round(Double.parseDouble(t) * 1000));
    }

    /** Runs every scenario for every peer (scenario by scenario, peers side by side). */
    public static FairnessReport run(Options o, PrintStream progress) throws InterruptedException {
        FairnessReport report = new FairnessReport(o);
        for (Scenario scenario : o.scenarios()) {
            for (Peer p : o.peers()) {
                progress.printf(Locale.ROOT, "[fairness] %s, %s ...%n", scenario.id(), p.label());
                for (ScenarioResult r : Scenarios.run(scenario, p, o)) {
                    StringBuilder line = new StringBuilder();
                    for (Metric m : r.metrics()) {
                        line.append(line.length() == 0 ? "" : "; ").append(m.name()).append(' ').append(m.display());
                    }
                    progress.printf(Locale.ROOT, "[fairness]   %s: %s%n", r.series(), line);
                    report.add(r);
                }
            }
        }
        return report;
    }
}
