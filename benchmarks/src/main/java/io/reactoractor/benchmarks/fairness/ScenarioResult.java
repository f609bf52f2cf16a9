package io.reactoractor.benchmarks.fairness;

import java.util.List;

/**
 * One scenario run on one peer (one <em>series</em>: a peer, plus a variant where a scenario has several,
 * such as the two {@code publishOn} operators).
 *
 * @param scenario     the scenario
 * @param peer         the scheduler
 * @param variant      empty, or what distinguishes this series from others of the same peer
 * @param metrics      the table rows, in display order
 * @param names        the consumers whose busy time was measured (groups, actors, streams)
 * @param shares       each consumer's share of the busy time in the measured window (sums to 1)
 * @param fairShares   the share each consumer should get if the scheduler were fair, or {@code null}
 *                     when the scenario defines none
 * @param busyMsPerSec busy time of all consumers completed per second of the window
 *                     ({@code threads × 1000} = every thread always inside a measured task)
 * @param delay        the delay of the scenario's light/outside work, or {@code null}
 * @param timeline     the shares over time, warm-up included
 */
public record ScenarioResult(Scenario scenario, Peer peer, String variant, List<Metric> metrics, List<String> names,
        double[] shares, double[] fairShares, double busyMsPerSec, DelayResult delay, ShareTimeline timeline) {

    /** @return the column label: the peer, plus the variant if any */
    public String series() {
        return variant.isEmpty() ? peer.label() : peer.label() + " " + variant;
    }

    /** @return the metric named {@code name}, or {@code null} */
    public Metric metric(String name) {
        for (Metric m : metrics) {
            if (m.name().equals(name)) {
                return m;
            }
        }
        return null;
    }

    /** Jain's fairness index {@code (Σx)² / (n·Σx²)}; NaN if every x is 0. */
    public static double jain(double[] x) {
        double sum = 0;
        double sumSq = 0;
        for (double v : x) {
            sum += v;
            sumSq += v * v;
        }
        return sumSq == 0 ? Double.NaN : sum * sum / (x.length * sumSq);
    }
}
