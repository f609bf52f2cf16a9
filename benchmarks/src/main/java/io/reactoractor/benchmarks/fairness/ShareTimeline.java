package io.reactoractor.benchmarks.fairness;

import java.util.List;

/**
 * CPU share over time: the busy time of each consumer in consecutive sampling intervals, divided by the
 * busy time of all consumers in that interval.
 *
 * @param names    the consumers (groups, actors, streams)
 * @param timesSec the end of each interval, in seconds since the start of the measured window
 *                 (negative during the warm-up)
 * @param shares   {@code shares[i][g]}: the share of consumer {@code g} in interval {@code i}; NaN when
 *                 nothing completed in the interval
 * @param windowSec the length of the measured window, in seconds
 */
public record ShareTimeline(List<String> names, double[] timesSec, double[][] shares, double windowSec) {
}
