package io.reactoractor.benchmarks.fairness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The results of a {@link FairnessRunner} run, printable as Markdown: one table per scenario (rows =
 * metrics, columns = series), then the cost of fairness across scenarios.
 */
public final class FairnessReport {

    private final FairnessRunner.Options options;
    private final List<ScenarioResult> results = new ArrayList<>();

    FairnessReport(FairnessRunner.Options options) {
        this.options = options;
    }

    void add(ScenarioResult r) {
        results.add(r);
    }

    public FairnessRunner.Options options() {
        return options;
    }

    public List<ScenarioResult> results() {
        return List.copyOf(results);
    }

    /** @return the scenarios that have results, in run order */
    public List<Scenario> scenarios() {
        Set<Scenario> s = new LinkedHashSet<>();
        results.forEach(r -> s.add(r.scenario()));
        return List.copyOf(s);
    }

    /** @return the results of one scenario, sorted by peer then variant */
    public List<ScenarioResult> results(Scenario scenario) {
        return results.stream().filter(r -> r.scenario() == scenario)
                .sorted((a, b) -> a.peer() != b.peer() ? a.peer().compareTo(b.peer()) : a.variant().compareTo(b.variant()))
                .collect(Collectors.toList());
    }

    public String toMarkdown() {
        FairnessRunner.Options o = options;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Fairness runner: %d threads per scheduler, %s measured per "
                + "scenario and peer after %s warm-up; peers: %s.%n%n", o.threads(), fmt(o.duration()),
                fmt(o.warmup()), o.peers().stream().map(Peer::label).collect(Collectors.joining(", "))));
        sb.append("Ratio columns divide the fair series (actor-fair; for publish-on: actor-fair with the actor "
                + "operator) by a peer's: for delays below 1 means the fair scheduler is better, for Jain, "
                + "throughput and busy time above 1 does. Shares are of the busy time measured by the tasks.\n\n");
        int n = 0;
        for (Scenario scenario : scenarios()) {
            List<ScenarioResult> rs = results(scenario);
            sb.append(String.format(Locale.ROOT, "### %d. %s (`%s`)%n%n%s%n%n", ++n, scenario.title(),
                    scenario.id(), scenario.describe(o)));
            table(sb, rs);
            sb.append('\n');
        }
        if (!results.isEmpty()) {
            cost(sb);
        }
        return sb.toString();
    }

    private static void table(StringBuilder sb, List<ScenarioResult> rs) {
        ScenarioResult fair = fairSeries(rs);
        ScenarioResult parallel = find(rs, Peer.PARALLEL);
        ScenarioResult qmq = find(rs, Peer.QMQ_PQ);
        List<ScenarioResult> baselines = new ArrayList<>();
        if (fair != null && parallel != null) {
            baselines.add(parallel);
        }
        if (fair != null && qmq != null) {
            baselines.add(qmq);
        }
        sb.append("| metric |");
        for (ScenarioResult r : rs) {
            sb.append(' ').append(r.series()).append(" |");
        }
        for (ScenarioResult b : baselines) {
            sb.append(" fair / ").append(b.peer().label()).append(" |");
        }
        sb.append("\n|---|").append("---:|".repeat(rs.size() + baselines.size())).append('\n');
        Set<String> names = new LinkedHashSet<>();
        rs.forEach(r -> r.metrics().forEach(m -> names.add(m.name())));
        for (String name : names) {
            sb.append("| ").append(name).append(" |");
            for (ScenarioResult r : rs) {
                Metric m = r.metric(name);
                sb.append(' ').append(m == null ? "-" : m.display()).append(" |");
            }
            for (ScenarioResult b : baselines) {
                Metric f = fair.metric(name);
                Metric x = b.metric(name);
                boolean show = f != null && x != null && f.ratio();
                sb.append(' ').append(show ? ratio(f.value(), x.value()) : "").append(" |");
            }
            sb.append('\n');
        }
    }

    /** The heavy busy time of every scenario side by side: what fairness costs in throughput. */
    private void cost(StringBuilder sb) {
        List<Peer> peers = new ArrayList<>(new LinkedHashSet<>(results.stream().map(ScenarioResult::peer)
                .sorted().collect(Collectors.toList())));
        sb.append(String.format(Locale.ROOT, "### Cost of fairness: busy-ms completed per second (%d = every "
                + "thread always inside a measured task)%n%n", options.threads() * 1000));
        sb.append("| scenario |");
        for (Peer p : peers) {
            sb.append(' ').append(p.label()).append(" |");
        }
        sb.append(" fair / FIFO | fair / parallel | fair / qmq-pq |\n|---|");
        sb.append("---:|".repeat(peers.size() + 3)).append('\n');
        for (Scenario scenario : scenarios()) {
            Map<String, Map<Peer, Double>> byVariant = new LinkedHashMap<>();
            for (ScenarioResult r : results(scenario)) {
                byVariant.computeIfAbsent(r.variant(), v -> new LinkedHashMap<>()).put(r.peer(), r.busyMsPerSec());
            }
            for (Map.Entry<String, Map<Peer, Double>> e : byVariant.entrySet()) {
                Map<Peer, Double> v = e.getValue();
                sb.append("| ").append(scenario.id()).append(e.getKey().isEmpty() ? "" : " (" + e.getKey() + ")")
                        .append(" |");
                for (Peer p : peers) {
                    Double x = v.get(p);
                    sb.append(' ').append(x == null ? "-" : String.format(Locale.ROOT, "%.0f", x)).append(" |");
                }
                sb.append(' ').append(ratio(v.get(Peer.ACTOR_FAIR), v.get(Peer.ACTOR_FIFO))).append(" |");
                sb.append(' ').append(ratio(v.get(Peer.ACTOR_FAIR), v.get(Peer.PARALLEL))).append(" |");
                sb.append(' ').append(ratio(v.get(Peer.ACTOR_FAIR), v.get(Peer.QMQ_PQ))).append(" |\n");
            }
        }
    }

    /** actor-fair's series; where it has several (publish-on), the one with the library's own operator. */
    static ScenarioResult fairSeries(List<ScenarioResult> rs) {
        ScenarioResult found = null;
        for (ScenarioResult r : rs) {
            if (r.peer() == Peer.ACTOR_FAIR) {
                if (found == null || r.variant().equals(HotStreams.Operator.ACTOR_OPERATOR.label())) {
                    found = r;
                }
            }
        }
        return found;
    }

    private static ScenarioResult find(List<ScenarioResult> rs, Peer p) {
        for (ScenarioResult r : rs) {
            if (r.peer() == p) {
                return r;
            }
        }
        return null;
    }

    private static String ratio(Double a, Double b) {
        if (a == null || b == null || !Double.isFinite(a) || !Double.isFinite(b) || b == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.2fx", a / b);
    }

    static String fmt(java.time.Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + " s" : ms + " ms";
    }
}
