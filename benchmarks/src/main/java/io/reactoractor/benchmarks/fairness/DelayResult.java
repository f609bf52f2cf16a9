package io.reactoractor.benchmarks.fairness;

import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * Scheduling delay of open-loop tasks or items (submission to start), recorded in an HdrHistogram.
 *
 * @param what       what was delayed, e.g. {@code "light actor"}
 * @param submitted  tasks submitted in the measured window
 * @param samples    of those, the ones that ran (they form the percentiles)
 * @param unfinished submitted in the window but not run by the end of the drain, plus rejected ones
 * @param p50Ms      median delay, ms (NaN without samples)
 * @param p99Ms      99th percentile, ms
 * @param p999Ms     99.9th percentile, ms
 * @param maxMs      maximum, ms
 * @param histogram  the delays in nanoseconds (a copy)
 */
public record DelayResult(String what, long submitted, long samples, long unfinished, double p50Ms,
        double p99Ms, double p999Ms, double maxMs, Histogram histogram) {

    static DelayResult of(String what, long submitted, long unfinished, Histogram h) {
        long n = h.getTotalCount();
        return new DelayResult(what, submitted, n, unfinished, pct(h, 50), pct(h, 99), pct(h, 99.9),
                n == 0 ? Double.NaN : h.getMaxValue() / 1e6, h);
    }

    private static double pct(Histogram h, double p) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(p) / 1e6;
    }

    /**
     * The empirical CDF, one point per distinct recorded value (at HdrHistogram's precision): the delay
     * in ms and the fraction of the tasks <em>submitted</em> in the window that started within it. Tasks
     * that never ran keep the curve below 1.
     *
     * @return {@code {delaysMs, fractions}}, both ascending; empty when nothing ran
     */
    public double[][] cdf() {
        List<double[]> points = new ArrayList<>();
        double denominator = Math.max(submitted, samples);
        for (HistogramIterationValue v : histogram.recordedValues()) {
            points.add(new double[] {histogram.highestEquivalentValue(v.getValueIteratedTo()) / 1e6,
                    v.getTotalCountToThisValue() / denominator});
        }
        double[][] r = new double[2][points.size()];
        for (int i = 0; i < points.size(); i++) {
            r[0][i] = points.get(i)[0];
            r[1][i] = points.get(i)[1];
        }
        return r;
    }

    /** @return whether tasks were submitted but none of them ran */
    public boolean starved() {
        return samples == 0 && unfinished > 0;
    }
}
