package io.reactoractor.benchmarks.savina;

/**
 * A Savina-style actor workload, implemented twice with the same sizes: with this library's
 * {@link io.reactoractor.actor.Actor}s and with Apache Pekko classic actors.
 *
 * <p>Each run returns the number its actors computed (a count or a sum); the runner compares it
 * with {@link #expected()} and fails the run on a mismatch, so an implementation that loses
 * messages or stops early cannot report a fast time.
 */
public interface SavinaWorkload {

    /** @return the short name used in {@code --workloads=} and in the report, e.g. {@code ping-pong} */
    String name();

    /** @return the sizes of this instance, for the report, e.g. {@code N=200,000 round trips} */
    String sizes();

    /** @return how many actor messages one run sends (for messages/s in the report) */
    long messages();

    /** @return what {@link #runOurs} and {@link #runPekko} must return */
    long expected();

    /**
     * Runs once on this library's actors; the caller times the call and tears the actors down afterwards.
     *
     * @param run creates the actors and carries the result
     * @return the number the actors computed
     * @throws Exception if the run failed or timed out
     */
    long runOurs(OursRun run) throws Exception;

    /**
     * Runs once on Pekko classic actors; the caller times the call and stops the actors afterwards.
     *
     * @param run creates the actors and carries the result
     * @return the number the actors computed
     * @throws Exception if the run failed or timed out
     */
    long runPekko(PekkoRun run) throws Exception;
}
