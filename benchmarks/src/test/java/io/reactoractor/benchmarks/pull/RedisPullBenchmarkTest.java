package io.reactoractor.benchmarks.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import io.reactoractor.pull.redis.TestRedis;
import org.junit.jupiter.api.Test;

/**
 * Smoke run of every phase of {@link RedisPullBenchmark} in a tiny configuration on a real redis-server
 * (the PATH's or embedded-redis's): the benchmark must run and produce sane figures; never timings.
 */
class RedisPullBenchmarkTest {

    @Test
    void smoke() throws Exception {
        try (TestRedis redis = TestRedis.start(false)) {
            RedisPullBenchmark.Options o = new RedisPullBenchmark.Options(redis.uri(), 2_000, Duration.ofMillis(300), 20,
                    1, Duration.ofMillis(500));
            RedisPullBenchmark.Report r = RedisPullBenchmark.run(o);
            assertEquals(2, r.throughput().size());
            r.throughput().forEach(t -> assertTrue(t.messages() >= 2_000 && t.perSecond() > 0, t.toString()));
            assertEquals(2, r.latency().size());
            r.latency().forEach(l -> assertTrue(l.count() > 0 && l.p50us() > 0 && l.maxUs() >= l.p99us(),
                    l.toString()));
            assertEquals(2, r.latency().get(0).connections(), "the store: commands and Pub/Sub");
            assertEquals(21, r.latency().get(1).connections(), "the baseline: one per waiting poll, and the producer");
            RedisPullBenchmark.Fairness f = r.fairness();
            assertEquals(100, f.manyPerConsumer().length);
            assertEquals(2, f.fewPerConsumer().length);
            assertTrue(f.many() > 0 && f.few() > 0, "both groups were served: " + f.many() + " / " + f.few());
            String md = r.toMarkdown(o);
            assertTrue(md.contains("store / plain Lettuce") && md.contains("20 waiting polls")
                    && md.contains("group fairness"), md);
        }
    }
}
