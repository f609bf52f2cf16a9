package io.reactoractor.benchmarks.fairness;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import reactor.core.scheduler.Scheduler;

/**
 * Fairness scenarios for {@code ActorScheduler} (FAIR and FIFO) and Reactor's parallel scheduler,
 * all with the same number of threads (2 by default), run one after the other in one JVM.
 *
 * <ol>
 *   <li><b>Light-worker delay</b>: an outside thread submits a 10 µs task to a dedicated light worker
 *       every 2 ms (open loop); next to it, 4 heavy workers run 1 ms busy tasks that re-schedule
 *       themselves on their own worker. Reported: delay (submission to start) p50/p99/p99.9/max
 *       (HdrHistogram) and the heavy throughput.</li>
 *   <li><b>Group fairness</b>: equal-weight groups with different numbers of saturating workers; the
 *       share of each group is the busy time measured by its tasks. Reported: Jain's index.</li>
 *   <li><b>Cost of fairness</b>: busy-ms completed per second in every scenario, fair vs FIFO.</li>
 * </ol>
 *
 * <p>Usage: {@code FairnessRunner [duration per scenario, e.g. 10s | 500ms | 10] [--quick]
 * [--warmup=2s] [--threads=2] [--peers=actor-fair,actor-fifo,parallel]}. {@code --quick} = 1 s per
 * scenario after a 250 ms warm-up (an explicit duration still wins).
 */
public final class FairnessRunner {

    /** Run parameters. */
    public record Options(Duration duration, Duration warmup, int threads, List<Peer> peers,
            int heavyWorkers, long heavyTaskNanos, long lightPeriodNanos, long lightWorkNanos,
            List<int[]> groupScenarios) {

        public static Options defaults() {
            return new Options(Duration.ofSeconds(10), Duration.ofSeconds(2), 2, List.of(Peer.values()), 4,
                    TimeUnit.MILLISECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(2),
                    TimeUnit.MICROSECONDS.toNanos(10), List.of(new int[] {2, 8}, new int[] {1, 2, 4, 8}));
        }

        public Options withDuration(Duration d, Duration w) {
            return new Options(d, w, threads, peers, heavyWorkers, heavyTaskNanos, lightPeriodNanos,
                    lightWorkNanos, groupScenarios);
        }

        public Options withThreads(int t) {
            return new Options(duration, warmup, t, peers, heavyWorkers, heavyTaskNanos, lightPeriodNanos,
                    lightWorkNanos, groupScenarios);
        }

        public Options withPeers(List<Peer> p) {
            return new Options(duration, warmup, threads, List.copyOf(p), heavyWorkers, heavyTaskNanos,
                    lightPeriodNanos, lightWorkNanos, groupScenarios);
        }
    }

    private FairnessRunner() {
    }

    public static void main(String[] args) throws InterruptedException {
        Options o = parse(args);
        FairnessReport report = run(o, System.err);
        System.out.println(report.toMarkdown());
    }

    static Options parse(String[] args) {
        Options o = Options.defaults();
        Duration duration = null;
        Duration warmup = null;
        boolean quick = false;
        for (String a : args) {
            if (a.equals("--quick")) {
                quick = true;
            } else if (a.startsWith("--warmup=")) {
                warmup = parseDuration(a.substring("--warmup=".length()));
            } else if (a.startsWith("--threads=")) {
                o = o.withThreads(Integer.parseInt(a.substring("--threads=".length())));
            } else if (a.startsWith("--peers=")) {
                List<Peer> peers = new ArrayList<>();
                for (String p : a.substring("--peers=".length()).split(",")) {
                    peers.add(Peer.fromLabel(p.trim()));
                }
                o = o.withPeers(peers);
            } else if (a.startsWith("--")) {
                throw new IllegalArgumentException("unknown option " + a
                        + "; usage: FairnessRunner [duration] [--quick] [--warmup=2s] [--threads=2] "
                        + "[--peers=actor-fair,actor-fifo,parallel]");
            } else {
                duration = parseDuration(a);
            }
        }
        Duration d = duration != null ? duration : quick ? Duration.ofSeconds(1) : o.duration();
        Duration w = warmup != null ? warmup : quick ? Duration.ofMillis(250) : o.warmup();
        return o.withDuration(d, w);
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
        for (Peer p : o.peers()) {
            progress.printf(Locale.ROOT, "[fairness] light-worker delay, %s ...%n", p.label());
            LatencyResult r = runLatency(p, o);
            progress.printf(Locale.ROOT, "[fairness]   %s%n", r);
            report.add(r);
        }
        for (int[] sizes : o.groupScenarios()) {
            for (Peer p : o.peers()) {
                progress.printf(Locale.ROOT, "[fairness] groups %s, %s ...%n", Arrays.toString(sizes), p.label());
                GroupResult g = runGroups(p, o, sizes);
                progress.printf(Locale.ROOT, "[fairness]   jain=%.3f shares=%s busy-ms/s=%.0f%n", g.jain(),
                        Arrays.toString(g.shares()), g.busyMsPerSec());
                report.add(g);
            }
        }
        return report;
    }

    static LatencyResult runLatency(Peer peer, Options o) throws InterruptedException {
        Scheduler s = peer.create(o.threads());
        HeavyLoad heavy = new HeavyLoad(o.heavyTaskNanos());
        Scheduler.Worker lightWorker = null;
        try {
            heavy.addGroup(s, o.heavyWorkers());
            lightWorker = s.createWorker();
            LightProbe light = new LightProbe(lightWorker, o.lightPeriodNanos(), o.lightWorkNanos());
            heavy.start();
            long windowStart = System.nanoTime() + o.warmup().toNanos();
            long windowEnd = windowStart + o.duration().toNanos();
            light.window(windowStart, windowEnd);
            light.start();
            sleepUntil(windowStart);
            long busy0 = heavy.busySnapshot()[0];
            long t0 = System.nanoTime();
            sleepUntil(windowEnd);
            long busy1 = heavy.busySnapshot()[0];
            long t1 = System.nanoTime();
            // keep the heavy load on while the window's light tasks drain, so late ones are counted
            light.stopAndDrain(TimeUnit.SECONDS.toNanos(2));
            Histogram h = light.histogramCopy();
            long samples = h.getTotalCount();
            long unfinished = Math.max(0, light.submittedInWindow() - light.completedInWindow())
                    + light.rejected();
            return new LatencyResult(peer, samples, unfinished, pct(h, 50), pct(h, 99), pct(h, 99.9),
                    samples == 0 ? Double.NaN : h.getMaxValue() / 1e6,
                    (busy1 - busy0) / 1e6 / ((t1 - t0) / 1e9));
        } finally {
            heavy.stop();
            if (lightWorker != null) {
                lightWorker.dispose();
            }
            shutdown(s);
        }
    }

    static GroupResult runGroups(Peer peer, Options o, int[] sizes) throws InterruptedException {
        Scheduler s = peer.create(o.threads());
        HeavyLoad heavy = new HeavyLoad(o.heavyTaskNanos());
        try {
            for (int i = 0; i < sizes.length; i++) {
                heavy.addGroup(peer.group(s, "g" + i), sizes[i]);
            }
            heavy.start();
            long windowStart = System.nanoTime() + o.warmup().toNanos();
            sleepUntil(windowStart);
            long[] b0 = heavy.busySnapshot();
            long t0 = System.nanoTime();
            sleepUntil(windowStart + o.duration().toNanos());
            long[] b1 = heavy.busySnapshot();
            long t1 = System.nanoTime();
            double total = 0;
            double[] busy = new double[sizes.length];
            for (int i = 0; i < busy.length; i++) {
                busy[i] = b1[i] - b0[i];
                total += busy[i];
            }
            double[] shares = new double[busy.length];
            for (int i = 0; i < busy.length; i++) {
                shares[i] = total == 0 ? Double.NaN : busy[i] / total;
            }
            StringBuilder name = new StringBuilder();
            for (int i = 0; i < sizes.length; i++) {
                name.append(i == 0 ? "" : "+").append(sizes[i]);
            }
            String scenario = sizes.length + " groups, " + name + " workers";
            return new GroupResult(peer, scenario, sizes.clone(), shares, GroupResult.jain(busy),
                    total / 1e6 / ((t1 - t0) / 1e9));
        } finally {
            heavy.stop();
            shutdown(s);
        }
    }

    private static double pct(Histogram h, double p) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(p) / 1e6;
    }

    /** Graceful stop (the heavy tasks no longer re-schedule), so the next run starts on idle CPUs. */
    private static void shutdown(Scheduler s) {
        try {
            s.disposeGracefully().timeout(Duration.ofSeconds(5)).block();
        } catch (RuntimeException e) {
            s.dispose();
        }
    }

    private static void sleepUntil(long deadline) throws InterruptedException {
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }
}
