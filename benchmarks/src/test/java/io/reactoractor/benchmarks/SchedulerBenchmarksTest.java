package io.reactoractor.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.openjdk.jmh.annotations.Param;

/**
 * Runs every method of the in-pool, pipeline and fine-grained scheduler benchmarks once per peer,
 * outside JMH (after their {@code @Setup}, as JMH would), and checks that each did all its work. Never
 * a timing.
 */
class SchedulerBenchmarksTest {

    static Stream<String> peers() {
        return SchedulerPeers.NAMES.stream();
    }

    @Test
    void everySchedulerBenchmarkComparesEveryPeer() throws Exception {
        for (Class<?> c : List.of(SchedulerHandoffBenchmark.class, InPoolSubmissionBenchmark.class,
                PipelineBenchmark.class, FineGrainedMonoBenchmark.class)) {
            Param p = c.getField("scheduler").getAnnotation(Param.class);
            assertEquals(SchedulerPeers.NAMES, List.of(p.value()), c.getSimpleName());
        }
    }

    @ParameterizedTest
    @MethodSource("peers")
    @Timeout(60)
    void inPoolSubmission(String scheduler) throws Exception {
        InPoolSubmissionBenchmark b = new InPoolSubmissionBenchmark();
        b.scheduler = scheduler;
        b.setUp();
        try {
            // 0 = the latch reached zero: every task ran
            assertEquals(0, b.schedulerSubmitFromPool());
            assertEquals(0, b.workerSelfReschedule());
        } finally {
            b.tearDown();
        }
    }

    @ParameterizedTest
    @MethodSource("readySetPeers")
    @Timeout(120)
    void readySet(String scheduler) throws Exception {
        ReadySetBenchmark b = new ReadySetBenchmark();
        b.scheduler = scheduler;
        b.readyWorkers = 4096;
        b.setUp();
        try {
            assertEquals(0, b.selfReschedulingWorkers()); // every chain ran to its end
        } finally {
            b.tearDown();
        }
    }

    static Stream<String> readySetPeers() throws NoSuchFieldException {
        return Stream.of(ReadySetBenchmark.class.getField("scheduler").getAnnotation(Param.class).value());
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"actor", "reactor"})
    @Timeout(60)
    void publishOnOperator(String operator) throws Exception {
        assertEquals(List.of("actor", "reactor"), List.of(PublishOnOperatorBenchmark.class.getField("operator")
                .getAnnotation(Param.class).value()));
        PublishOnOperatorBenchmark b = new PublishOnOperatorBenchmark();
        b.operator = operator;
        b.setUp();
        try {
            assertEquals(PublishOnOperatorBenchmark.ITEMS - 1, b.unfused());
            assertEquals(PublishOnOperatorBenchmark.ITEMS - 1, b.fusedConcatMap());
        } finally {
            b.tearDown();
        }
    }

    @ParameterizedTest
    @MethodSource("peers")
    @Timeout(60)
    void pipeline(String scheduler) {
        PipelineBenchmark b = new PipelineBenchmark();
        b.scheduler = scheduler;
        b.setUp();
        try {
            assertEquals(PipelineBenchmark.ITEMS - 1, b.subscribeOnPublishOn());
        } finally {
            b.tearDown();
        }
    }

    @ParameterizedTest
    @MethodSource("peers")
    @Timeout(60)
    void fineGrainedMonos(String scheduler) {
        FineGrainedMonoBenchmark b = new FineGrainedMonoBenchmark();
        b.scheduler = scheduler;
        b.setUp();
        try {
            assertEquals(FineGrainedMonoBenchmark.MONOS, b.monoSubscribeOn());
            assertEquals(FineGrainedMonoBenchmark.MONOS, b.monoHideSubscribeOn());
        } finally {
            b.tearDown();
        }
    }
}
