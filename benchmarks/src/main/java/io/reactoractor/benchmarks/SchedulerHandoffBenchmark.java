package io.reactoractor.benchmarks;

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

/**
 * Task submission from outside the pool and {@code publishOn} hand-off throughput, per task / per
 * item, for every peer of {@link SchedulerPeers} ({@code ActorScheduler} FAIR and FIFO, Reactor's
 * parallel, single, boundedElastic, and a 2-thread {@code ForkJoinPool}).
 *
 * <ul>
 *   <li>{@code schedulerSubmit}: the benchmark thread (not a pool thread) calls
 *       {@code scheduler.schedule(task)} {@value #TASKS} times, then waits until every task ran.</li>
 *   <li>{@code workerSubmit}: the same through one {@code scheduler.createWorker()} (tasks run one at
 *       a time, in order; except {@code fjp}, whose worker is not serial, see {@link SchedulerPeers}).</li>
 *   <li>{@code publishOnHandoff}: {@code Flux.range(0, N).hide().publishOn(scheduler).blockLast()}.</li>
 * </ul>
 *
 * <p>Submission from inside the pool, two-scheduler pipelines and fine-grained {@code subscribeOn}
 * are in {@link InPoolSubmissionBenchmark}, {@link PipelineBenchmark} and
 * {@link FineGrainedMonoBenchmark}.
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

    @Param({"actorFair", "actorFifo", "parallel", "single", "boundedElastic", "fjp"})
    public String scheduler;

    Scheduler sched;
    Scheduler.Worker worker;

    @Setup(Level.Trial)
    public void setUp() {
        sched = SchedulerPeers.create(scheduler);
        worker = sched.createWorker();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        worker.dispose();
        sched.dispose();
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
