package io.reactoractor.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link MailboxQueueBenchmark} through JMH itself (in this JVM, no warm-up, one 200 ms
 * iteration) for every queue, thread group and back-off, and checks that producers really offered and
 * the consumer really polled. Through JMH rather than by direct calls because the benchmark is made
 * of concurrent thread groups and {@code @AuxCounters}, which only JMH drives. Never a timing.
 */
class MailboxQueueBenchmarkTest {

    @Test
    @Timeout(120)
    void everyQueueGroupAndBackoffOffersAndPolls() throws Exception {
        Options opt = new OptionsBuilder()
                .include(MailboxQueueBenchmark.class.getName() + "\\.")
                .forks(0)
                .warmupIterations(0)
                .measurementIterations(1)
                .measurementTime(TimeValue.milliseconds(200))
                .verbosity(VerboseMode.SILENT)
                .build();
        Collection<RunResult> results = new Runner(opt).run();

        Set<String> seen = new HashSet<>();
        for (RunResult r : results) {
            String queue = r.getParams().getParam("queue");
            String backoff = r.getParams().getParam("backoff");
            String group = r.getParams().getBenchmark().replaceAll(".*\\.", "");
            String run = group + "/" + queue + "/" + backoff;
            seen.add(run);
            Map<String, Result> secondary = r.getSecondaryResults();
            for (String counter : new String[] {"offers", "polls"}) {
                assertTrue(secondary.containsKey(counter), run + ": no " + counter + " in " + secondary.keySet());
                double score = secondary.get(counter).getScore();
                assertTrue(score > 0 && Double.isFinite(score), run + ": " + counter + " = " + score);
            }
        }
        // 2 groups x 6 queues (ours with either offer, JCTools' xadd at two chunk sizes) x 2 back-offs
        assertEquals(24, seen.size(), seen.toString());
    }
}
