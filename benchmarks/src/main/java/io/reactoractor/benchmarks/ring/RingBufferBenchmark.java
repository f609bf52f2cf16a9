package io.reactoractor.benchmarks.ring;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Events per second through a multicast (issue 12): our {@code RingBuffer} (consumers are actors on a
 * 2-carrier {@code ActorScheduler}; {@code ring}/{@code ringSubscriber} multi-producer, {@code ringSp}/
 * {@code ringSubscriberSp} built with {@code singleProducer()}) vs the LMAX Disruptor 4.0.0 with its Blocking, Yielding and
 * Sleeping wait strategies (one thread per handler) and Reactor's {@code Flux.publish()} and
 * {@code Sinks.many().multicast().onBackpressureBuffer()} (a {@code publishOn} per consumer on a
 * 2-thread parallel scheduler). Ring/queue size 1024 everywhere. One operation = one event, end to
 * end: a batch of 65,536 events is published from the benchmark thread and the invocation returns
 * once the last consumer handled all of them. See {@link RingPeers} for the topologies.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class RingBufferBenchmark {

    static final int EVENTS = 1 << 16;

    @Param({"oneToOne", "oneToThree", "diamond"})
    public String topology;

    @Param({"ring", "ringSp", "ringSubscriber", "ringSubscriberSp", "disruptorBlocking", "disruptorYielding", "disruptorSleeping", "fluxPublish", "sinksMulticast"})
    public String impl;

    private RingPeers.Runner runner;
    private Long[] values;

    @Setup(Level.Trial)
    public void setup() {
        values = new Long[EVENTS];
        for (int i = 0; i < EVENTS; i++) {
            values[i] = (long) i;
        }
        runner = RingPeers.create(impl, topology);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        runner.close();
    }

    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public long events() {
        return runner.runBatch(values);
    }
}
