package io.reactoractor.benchmarks.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/** Smoke run of every phase in a tiny configuration: the benchmark must run and produce sane figures. */
class PullBenchmarkTest {

    @Test
    void smoke() throws Exception {
        PullBenchmark.Report r = PullBenchmark.run(
                new PullBenchmark.Options(20_000, Duration.ofMillis(300), Duration.ofMillis(300), 100),
                System.err);
        assertEquals(2, r.throughput().size());
        r.throughput().forEach(t -> assertTrue(t.messages() >= 20_000 && t.perSecond() > 0, t.toString()));
        assertEquals(2, r.latency().size());
        r.latency().forEach(l -> assertTrue(l.count() > 0 && l.p50us() > 0 && l.maxUs() >= l.p99us(), l.toString()));
        assertTrue(r.fairness().manyDelivered() > 0 && r.fairness().fewDelivered() > 0, r.fairness().toString());
        String md = r.toMarkdown();
        assertTrue(md.contains("Wake-up latency") && md.contains("100 consumers"), md);
    }
}
