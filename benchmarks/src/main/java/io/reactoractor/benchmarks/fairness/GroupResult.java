package io.reactoractor.benchmarks.fairness;

/**
 * CPU shares of equal-weight groups of saturating workers, for one scheduler and one scenario.
 *
 * @param peer              the scheduler
 * @param scenario          e.g. {@code "2 groups: 2+8 workers"}
 * @param workersPerGroup   the number of workers of each group
 * @param shares            each group's share of the busy time measured by the tasks (sums to 1)
 * @param jain              Jain's index over the shares (weights are equal): 1.0 = perfectly fair
 * @param busyMsPerSec      busy time completed per second of the window, all groups
 */
public record GroupResult(Peer peer, String scenario, int[] workersPerGroup, double[] shares, double jain,
        double busyMsPerSec) {

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
