package io.reactoractor.benchmarks;

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
import reactor.core.publisher.Flux;

/**
 * A two-stage pipeline with both ends on pool threads, items per second:
 * {@code Flux.range(0, N).subscribeOn(a).hide().publishOn(b).blockLast()}, where {@code a} and
 * {@code b} are two distinct schedulers of the same peer ({@link SchedulerPeers#createPair}: two
 * groups of one {@code ActorScheduler}, two instances of a Reactor scheduler).
 *
 * <p>The range emits on {@code a} (each request from {@code publishOn} is re-scheduled onto
 * {@code a}'s worker, so emission stays there), {@code publishOn} drains on {@code b} and
 * {@code blockLast} receives on the benchmark thread. So every item crosses two threads and every
 * replenishing request ({@code publishOn} prefetches 256 and requests 192 at a time) is one task
 * on {@code a}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class PipelineBenchmark {

    /** Items per invocation. */
    public static final int ITEMS = 100_000;

    @Param({"actorFair", "actorFifo", "parallel", "single", "boundedElastic", "fjp"})
    public String scheduler;

    SchedulerPeers.Pair pair;

    @Setup(Level.Trial)
    public void setUp() {
        pair = SchedulerPeers.createPair(scheduler);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pair.dispose();
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public Integer subscribeOnPublishOn() {
        return Flux.range(0, ITEMS)
                .subscribeOn(pair.upstream())
                .hide()
                .publishOn(pair.downstream())
                .blockLast();
    }
}
