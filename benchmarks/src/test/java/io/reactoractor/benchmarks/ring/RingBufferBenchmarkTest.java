package io.reactoractor.benchmarks.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.openjdk.jmh.annotations.Param;

/**
 * Smoke test of the ring-buffer benchmark: every peer ({@code impl}) in every topology pushes two
 * small batches end to end, outside JMH. Checks only that each batch was handled by every leaf
 * consumer; never a timing.
 */
class RingBufferBenchmarkTest {

    private static String[] values(String field) throws NoSuchFieldException {
        return RingBufferBenchmark.class.getField(field).getAnnotation(Param.class).value();
    }

    static Stream<Arguments> peers() throws NoSuchFieldException {
        List<Arguments> all = new ArrayList<>();
        for (String impl : values("impl")) {
            for (String topology : values("topology")) {
                all.add(Arguments.of(impl, topology));
            }
        }
        return all.stream();
    }

    @Test
    void bothOfOurModesAreBenchmarkedAndIdleMeasured() throws NoSuchFieldException {
        List<String> impls = List.of(values("impl"));
        for (String ours : List.of("ring", "ringSp", "ringSubscriber", "ringSubscriberSp")) {
            assertEquals(true, impls.contains(ours), ours + " is a peer of RingBufferBenchmark");
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("peers")
    @Timeout(60)
    void everyPeerHandlesEveryEventOfEachBatch(String impl, String topology) {
        Long[] batch = new Long[10_000];
        for (int i = 0; i < batch.length; i++) {
            batch[i] = (long) i;
        }
        try (RingPeers.Runner r = RingPeers.create(impl, topology)) {
            long first = r.runBatch(batch); // returns once every leaf consumer counted the batch
            long second = r.runBatch(batch);
            assertEquals(true, first >= batch.length && second >= batch.length, impl + " " + topology);
        }
    }
}
