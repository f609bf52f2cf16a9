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
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Many concurrent fine-grained asynchronous calls, Monos per second, up to {@value #CONCURRENCY} in
 * flight; {@code count()} (not {@code blockLast()}: the order is arbitrary) proves that every Mono
 * delivered its value.
 *
 * <ul>
 *   <li>{@code monoSubscribeOn}:
 *       {@code Flux.range(0, N).flatMap(i -> Mono.fromCallable(() -> i).subscribeOn(s), 256).count().block()}.
 *       Reactor recognises the {@code Callable} source and uses {@code MonoSubscribeOnCallable}: one
 *       {@code s.schedule(task)} per Mono, <em>no worker</em>, the value is signalled into
 *       {@code flatMap} from the pool thread.</li>
 *   <li>{@code monoHideSubscribeOn}: the same with {@code Mono.fromCallable(() -> i).hide()}, which
 *       hides the {@code Callable} as any non-trivial source (a {@code defer}, a {@code map} chain)
 *       would: the general {@code MonoSubscribeOn} path, which creates a worker per Mono (on
 *       {@code ActorScheduler}: an actor), schedules the subscription on it and disposes it at the
 *       end.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class FineGrainedMonoBenchmark {

    /** Monos per invocation. */
    public static final int MONOS = 10_000;
    /** {@code flatMap} concurrency: Monos in flight at once. */
    public static final int CONCURRENCY = 256;

    @Param({"actorFair", "actorFifo", "parallel", "single", "boundedElastic", "fjp"})
    public String scheduler;

    Scheduler sched;

    @Setup(Level.Trial)
    public void setUp() {
        sched = SchedulerPeers.create(scheduler);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sched.dispose();
    }

    @Benchmark
    @OperationsPerInvocation(MONOS)
    public Long monoSubscribeOn() {
        Scheduler s = sched;
        return Flux.range(0, MONOS)
                .flatMap(i -> Mono.fromCallable(() -> i).subscribeOn(s), CONCURRENCY)
                .count()
                .block();
    }

    @Benchmark
    @OperationsPerInvocation(MONOS)
    public Long monoHideSubscribeOn() {
        Scheduler s = sched;
        return Flux.range(0, MONOS)
                .flatMap(i -> Mono.fromCallable(() -> i).hide().subscribeOn(s), CONCURRENCY)
                .count()
                .block();
    }
}
