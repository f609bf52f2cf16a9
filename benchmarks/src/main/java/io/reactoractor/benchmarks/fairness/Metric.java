package io.reactoractor.benchmarks.fairness;

import java.util.Locale;

/**
 * One row of a scenario's table, for one peer.
 *
 * @param name    the row name, e.g. {@code "light p99 (ms)"}
 * @param value   the number (NaN when there is none, e.g. a percentile of a starved actor)
 * @param display how the cell reads in Markdown
 * @param ratio   whether the report shows ratios of this row between peers
 */
public record Metric(String name, double value, String display, boolean ratio) {

    static Metric number(String name, double value, String format, boolean ratio) {
        return new Metric(name, value, Double.isNaN(value) ? "-" : String.format(Locale.ROOT, format, value), ratio);
    }

    static Metric percent(String name, double share, boolean ratio) {
        return new Metric(name, share, Double.isNaN(share) ? "-" : String.format(Locale.ROOT, "%.1f%%", share * 100),
                ratio);
    }

    static Metric text(String name, String display) {
        return new Metric(name, Double.NaN, display, false);
    }
}
