package io.reactoractor.benchmarks;

import io.reactoractor.ActorScheduler;
import java.util.concurrent.CountDownLatch;
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
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Task submission and {@code publishOn} hand-off throughput, per task / per item, for
 * {@link ActorScheduler} (FAIR and FIFO ordering) and Reactor's parallel scheduler, all with 2 threads.
 *
 * <ul>
 *   <li>{@code schedulerSubmit}: the benchmark thread (not a pool thread) calls
 *       {@code scheduler.schedule(task)} {@value #TASKS} times, then waits until every task ran.</li>
 *   <li>{@code workerSubmit}: the same through one {@code scheduler.createWorker()} (tasks run one at
 *       a time, in order).</li>
 *   <li>{@code publishOnHandoff}: {@code Flux.range(0, N).hide().publishOn(scheduler).blockLast()}.</li>
 * </ul>
 *
 * <p>{@code parallel} is {@code Schedulers.newParallel("parallel", 2)}: the same implementation as
 * {@code Schedulers.parallel()} (which has availableProcessors threads, 2 on the reference
 * machine), but explicitly sized and disposable.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class SchedulerHandoffBenchmark {

    /** Tasks per invocation of the submission benchmarks. */
    public static final int TASKS = 10_000;
    /** Items per invocation of the hand-off benchmark. */
    public static final int ITEMS = 100_000;
    /** Threads of every scheduler. */
    public static final int THREADS = 2;

    @Param({"actorFair", "actorFifo", "parallel"})
    public String scheduler;

    Scheduler sched;
    Scheduler.Worker worker;

    @Setup(Level.Trial)
    public void setUp() {
        sched = create(scheduler);
        worker = sched.createWorker();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        worker.dispose();
        sched.dispose();
    }

    /** Creates one of the peers, all with {@link #THREADS} threads. */
    public static Scheduler create(String name) {
        switch (name) {
            case "actorFair":
                return ActorScheduler.builder().name("actor-fair").threads(THREADS)
                        .ordering(ActorScheduler.Ordering.FAIR).build();
            case "actorFifo":
                return ActorScheduler.builder().name("actor-fifo").threads(THREADS)
                        .ordering(ActorScheduler.Ordering.FIFO).build();
            case "parallel":
                return Schedulers.newParallel("parallel", THREADS);
            default:
                throw new IllegalArgumentException("unknown scheduler: " + name);
        }
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public long schedulerSubmit() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(TASKS);
        Runnable task = done::countDown;
        Scheduler s = sched;
        for (int i = 0; i < TASKS; i++) {
            s.schedule(task);
        }
        done.await();
        return done.getCount();
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public long workerSubmit() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(TASKS);
        Runnable task = done::countDown;
        Scheduler.Worker w = worker;
        for (int i = 0; i < TASKS; i++) {
            w.schedule(task);
        }
        done.await();
        return done.getCount();
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public Integer publishOnHandoff() {
        return Flux.range(0, ITEMS).hide().publishOn(sched).blockLast();
    }
}
