package io.reactoractor.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Runs every benchmark method once per scheduler, outside JMH, so the benchmarks cannot rot. */
class SchedulerHandoffBenchmarkTest {

    static Stream<String> peers() {
        return SchedulerPeers.NAMES.stream();
    }

    @ParameterizedTest
    @MethodSource("peers")
    @Timeout(60)
    void everyBenchmarkMethodRunsOnce(String scheduler) throws Exception {
        SchedulerHandoffBenchmark b = new SchedulerHandoffBenchmark();
        b.scheduler = scheduler;
        b.setUp();
        try {
            assertEquals(0, b.schedulerSubmit());
            assertEquals(0, b.workerSubmit());
            assertEquals(SchedulerHandoffBenchmark.ITEMS - 1, b.publishOnHandoff());
        } finally {
            b.tearDown();
        }
    }
}
