package io.reactoractor.benchmarks.fairness;

/**
 * Light-worker scheduling delay next to saturating heavy workers, for one scheduler.
 *
 * @param peer             the scheduler
 * @param samples          light tasks submitted in the window and run (they form the percentiles)
 * @param unfinished       light tasks submitted in the window that had not run by the end of the drain
 * @param p50Ms            median delay, ms
 * @param p99Ms            99th percentile, ms
 * @param p999Ms           99.9th percentile, ms
 * @param maxMs            maximum, ms
 * @param heavyBusyMsPerSec heavy busy time completed per second of the window (threads x 1000 at most)
 */
public record LatencyResult(Peer peer, long samples, long unfinished, double p50Ms, double p99Ms,
        double p999Ms, double maxMs, double heavyBusyMsPerSec) {
}
