package io.reactoractor.benchmarks.fairness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/** The results of a {@link FairnessRunner} run, printable as Markdown (peers as columns). */
public final class FairnessReport {

    private final FairnessRunner.Options options;
    private final List<LatencyResult> latency = new ArrayList<>();
    private final List<GroupResult> groups = new ArrayList<>();

    FairnessReport(FairnessRunner.Options options) {
        this.options = options;
    }

    void add(LatencyResult r) {
        latency.add(r);
    }

    void add(GroupResult r) {
        groups.add(r);
    }

    public FairnessRunner.Options options() {
        return options;
    }

    public List<LatencyResult> latency() {
        return List.copyOf(latency);
    }

    public List<GroupResult> groups() {
        return List.copyOf(groups);
    }

    public String toMarkdown() {
        List<Peer> peers = peers();
        StringBuilder sb = new StringBuilder();
        FairnessRunner.Options o = options;
        sb.append(String.format(Locale.ROOT, "Fairness runner: %d threads per scheduler, %s measured per "
                + "scenario after %s warm-up.%n%n", o.threads(), fmt(o.duration()), fmt(o.warmup())));

        if (!latency.isEmpty()) {
            sb.append(String.format(Locale.ROOT, "### Light-worker scheduling delay (ms)%n%n"
                    + "Open loop: an outside thread submits a %d µs task to a dedicated light worker every "
                    + "%d ms; delay = submission to task start. Next to it, %d heavy workers each run "
                    + "%d ms busy tasks that re-schedule themselves on their own worker (all actors in "
                    + "the default group).%n%n", o.lightWorkNanos() / 1000, o.lightPeriodNanos() / 1_000_000,
                    o.heavyWorkers(), o.heavyTaskNanos() / 1_000_000));
            header(sb, "light delay", peers);
            latencyRow(sb, peers, "p50", LatencyResult::p50Ms, "%.3f", true);
            latencyRow(sb, peers, "p99", LatencyResult::p99Ms, "%.3f", true);
            latencyRow(sb, peers, "p99.9", LatencyResult::p999Ms, "%.3f", true);
            latencyRow(sb, peers, "max", LatencyResult::maxMs, "%.3f", true);
            latencyRow(sb, peers, "samples", r -> r.samples(), "%.0f", false);
            latencyRow(sb, peers, "unfinished (not in percentiles)", r -> r.unfinished(), "%.0f", false);
            latencyRow(sb, peers, "heavy busy-ms/s", LatencyResult::heavyBusyMsPerSec, "%.0f", true);
            sb.append('\n');
        }

        if (!groups.isEmpty()) {
            sb.append(String.format(Locale.ROOT, "### Group fairness (Jain's index over CPU share, 1.0 = fair)%n%n"
                    + "Equal-weight groups of saturating workers (%d ms self-re-scheduling tasks); share = the "
                    + "busy nanos measured by the tasks, summed per group. ActorScheduler: "
                    + "`scheduler.group(name, 1)`; parallel: a group is just a set of workers.%n%n",
                    o.heavyTaskNanos() / 1_000_000));
            header(sb, "scenario", peers);
            for (String scenario : scenarios()) {
                groupRow(sb, peers, scenario, "Jain", g -> String.format(Locale.ROOT, "%.3f", g.jain()),
                        GroupResult::jain);
                groupRow(sb, peers, scenario, "shares", FairnessReport::shares, null);
                groupRow(sb, peers, scenario, "busy-ms/s",
                        g -> String.format(Locale.ROOT, "%.0f", g.busyMsPerSec()), null);
            }
            sb.append('\n');
        }

        if (!latency.isEmpty() || !groups.isEmpty()) {
            sb.append(String.format(Locale.ROOT, "### Heavy throughput: cost of fairness (busy-ms completed "
                    + "per second, %d = every thread always inside a task)%n%n", o.threads() * 1000));
            sb.append("| scenario |");
            for (Peer p : peers) {
                sb.append(' ').append(p.label()).append(" |");
            }
            sb.append(" fair / FIFO | fair / parallel |\n|---|");
            sb.append("---:|".repeat(peers.size() + 2)).append('\n');
            if (!latency.isEmpty()) {
                Map<Peer, Double> v = new LinkedHashMap<>();
                latency.forEach(r -> v.put(r.peer(), r.heavyBusyMsPerSec()));
                costRow(sb, peers, "light + " + o.heavyWorkers() + " heavy workers", v);
            }
            for (String scenario : scenarios()) {
                Map<Peer, Double> v = new LinkedHashMap<>();
                groups.stream().filter(g -> g.scenario().equals(scenario))
                        .forEach(g -> v.put(g.peer(), g.busyMsPerSec()));
                costRow(sb, peers, scenario, v);
            }
        }
        return sb.toString();
    }

    private List<Peer> peers() {
        Set<Peer> s = new LinkedHashSet<>();
        latency.forEach(r -> s.add(r.peer()));
        groups.forEach(g -> s.add(g.peer()));
        List<Peer> sorted = new ArrayList<>(s);
        sorted.sort(null);
        return sorted;
    }

    private Set<String> scenarios() {
        Set<String> s = new LinkedHashSet<>();
        groups.forEach(g -> s.add(g.scenario()));
        return s;
    }

    private static void header(StringBuilder sb, String first, List<Peer> peers) {
        sb.append("| ").append(first).append(" |");
        for (Peer p : peers) {
            sb.append(' ').append(p.label()).append(" |");
        }
        boolean ratio = peers.contains(Peer.PARALLEL) && peers.contains(Peer.ACTOR_FAIR);
        if (ratio) {
            sb.append(" fair / parallel |");
        }
        sb.append("\n|---|").append("---:|".repeat(peers.size() + (ratio ? 1 : 0))).append('\n');
    }

    private void latencyRow(StringBuilder sb, List<Peer> peers, String name,
            ToDoubleFunction<LatencyResult> f, String format, boolean withRatio) {
        sb.append("| ").append(name).append(" |");
        Map<Peer, Double> values = new LinkedHashMap<>();
        for (LatencyResult r : latency) {
            values.put(r.peer(), f.applyAsDouble(r));
        }
        for (Peer p : peers) {
            Double v = values.get(p);
            sb.append(' ').append(v == null ? "-" : String.format(Locale.ROOT, format, v)).append(" |");
        }
        if (withRatio) {
            appendRatio(sb, peers, values);
        } else if (peers.contains(Peer.PARALLEL) && peers.contains(Peer.ACTOR_FAIR)) {
            sb.append(" |");
        }
        sb.append('\n');
    }

    private void groupRow(StringBuilder sb, List<Peer> peers, String scenario, String metric,
            Function<GroupResult, String> cell, ToDoubleFunction<GroupResult> ratioOf) {
        sb.append("| ").append(scenario).append(": ").append(metric).append(" |");
        Map<Peer, Double> values = new LinkedHashMap<>();
        for (Peer p : peers) {
            GroupResult g = find(p, scenario);
            sb.append(' ').append(g == null ? "-" : cell.apply(g)).append(" |");
            if (g != null && ratioOf != null) {
                values.put(p, ratioOf.applyAsDouble(g));
            }
        }
        if (peers.contains(Peer.PARALLEL) && peers.contains(Peer.ACTOR_FAIR)) {
            if (ratioOf == null) {
                sb.append(" |");
            } else {
                appendRatio(sb, peers, values);
            }
        }
        sb.append('\n');
    }

    private static void appendRatio(StringBuilder sb, List<Peer> peers, Map<Peer, Double> values) {
        if (!(peers.contains(Peer.PARALLEL) && peers.contains(Peer.ACTOR_FAIR))) {
            return;
        }
        Double fair = values.get(Peer.ACTOR_FAIR);
        Double par = values.get(Peer.PARALLEL);
        sb.append(' ').append(ratio(fair, par)).append(" |");
    }

    private static void costRow(StringBuilder sb, List<Peer> peers, String scenario, Map<Peer, Double> v) {
        sb.append("| ").append(scenario).append(" |");
        for (Peer p : peers) {
            Double x = v.get(p);
            sb.append(' ').append(x == null ? "-" : String.format(Locale.ROOT, "%.0f", x)).append(" |");
        }
        sb.append(' ').append(ratio(v.get(Peer.ACTOR_FAIR), v.get(Peer.ACTOR_FIFO))).append(" |");
        sb.append(' ').append(ratio(v.get(Peer.ACTOR_FAIR), v.get(Peer.PARALLEL))).append(" |\n");
    }

    private static String ratio(Double a, Double b) {
        if (a == null || b == null || !Double.isFinite(a) || !Double.isFinite(b) || b == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.2fx", a / b);
    }

    private GroupResult find(Peer p, String scenario) {
        for (GroupResult g : groups) {
            if (g.peer() == p && g.scenario().equals(scenario)) {
                return g;
            }
        }
        return null;
    }

    private static String shares(GroupResult g) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < g.shares().length; i++) {
            if (i > 0) {
                s.append(" / ");
            }
            s.append(String.format(Locale.ROOT, "%.0f%%", g.shares()[i] * 100));
        }
        return s.toString();
    }

    static String fmt(java.time.Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + " s" : ms + " ms";
    }
}
