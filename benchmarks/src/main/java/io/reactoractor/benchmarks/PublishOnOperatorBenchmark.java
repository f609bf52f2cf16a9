package io.reactoractor.benchmarks;

import io.reactoractor.actor.ActorOperators;
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
 * The fair operator, {@code transform(ActorOperators.publishOn(actorScheduler))}, against Reactor's own
 * {@code publishOn(Schedulers.newParallel(2))}, items per second, on a hidden (not fusable) range of
 * {@value #ITEMS}:
 * <ul>
 *   <li>{@code unfused}: {@code blockLast()} receives every element through {@code onNext};</li>
 *   <li>{@code fusedConcatMap}: {@code concatMap(Mono::just, 32)}, which fuses with the operator
 *       ({@code ASYNC}) and polls its queue itself, then {@code blockLast()}.</li>
 * </ul>
 * Peers ({@code operator}): {@code actor} (the fair operator on a 2-thread {@code ActorScheduler},
 * {@code FAIR}) and {@code reactor} (Reactor's operator on {@code parallel}, the peer of
 * {@link SchedulerPeers}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class PublishOnOperatorBenchmark {

    /** Items per invocation. */
    public static final int ITEMS = 100_000;

    /** {@code actor}: {@code ActorOperators.publishOn}; {@code reactor}: {@code Flux.publishOn}. */
    @Param({"actor", "reactor"})
    public String operator;

    Scheduler scheduler;

    @Setup(Level.Trial)
    public void setUp() {
        scheduler = SchedulerPeers.create(switch (operator) {
            case "actor" -> "actorFair";
            case "reactor" -> "parallel";
            default -> throw new IllegalArgumentException("unknown operator: " + operator);
        });
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scheduler.dispose();
    }

    private Flux<Integer> publishOn(Flux<Integer> source) {
        return "actor".equals(operator) ? Flux.from(source.transform(ActorOperators.publishOn(scheduler)))
                : source.publishOn(scheduler);
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public Integer unfused() {
        return publishOn(Flux.range(0, ITEMS).hide()).blockLast();
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public Integer fusedConcatMap() {
        return publishOn(Flux.range(0, ITEMS).hide()).concatMap(Mono::just, 32).blockLast();
    }
}
