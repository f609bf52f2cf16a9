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
import reactor.core.scheduler.Scheduler;

/**
 * How the cost of a task grows with the number of <em>ready</em> workers (issue 9's ready-set
 * scaling), tasks per second. {@code readyWorkers} workers each keep exactly one tiny task in flight:
 * the task re-schedules itself on its worker until it has run {@code TOTAL / readyWorkers} times, so
 * for the whole invocation (but its last few tasks) every worker is ready at once and the scheduler's
 * ordering structure holds {@code readyWorkers} entries. {@value #TOTAL} tasks per invocation at every
 * size, so the rows compare directly.
 *
 * <p>Peers: {@code actorFair} (the fair order), {@code actorFifo} (the same engine, FIFO order: the
 * baseline the fair order must stay close to) and {@code parallel} (Reactor's {@code newParallel(2)},
 * whose workers are pinned round-robin to its two threads).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class ReadySetBenchmark {

    /** Tasks per invocation, at every size: 2^18, a multiple of every {@code readyWorkers}. */
    public static final int TOTAL = 1 << 18;

    @Param({"16", "4096", "65536"})
    public int readyWorkers;

    @Param({"actorFair", "actorFifo", "parallel"})
    public String scheduler;

    Scheduler sched;
    Scheduler.Worker[] workers;

    @Setup(Level.Trial)
    public void setUp() {
        if (TOTAL % readyWorkers != 0) {
            throw new IllegalArgumentException("readyWorkers must divide " + TOTAL + " but was " + readyWorkers);
        }
        sched = SchedulerPeers.create(scheduler);
        workers = new Scheduler.Worker[readyWorkers];
        for (int i = 0; i < readyWorkers; i++) {
            workers[i] = sched.createWorker();
        }
    }

    /** The engine's counters at the iteration's start ({@code null} for {@code parallel}). */
    long[] countersAtStart;
    long invocations;

    @Setup(Level.Iteration)
    public void countersStart() {
        countersAtStart = engineCounters();
        invocations = 0;
    }

    /**
     * Issue 9's many-cores proxy, per executed task of the iteration: run-queue lock acquisitions (all, and
     * those of another carrier's queue: steals, hand-offs from outside) and carrier wake-ups (unparks).
     * Printed in the fork's output, one line per iteration (JMH shows it above the iteration's score).
     */
    @TearDown(Level.Iteration)
    public void countersEnd() {
        long[] end = engineCounters();
        if (end == null || invocations == 0) {
            return;
        }
        double tasks = (double) invocations * TOTAL;
        System.out.printf(java.util.Locale.ROOT, "[ready-set] %s N=%d per task: run-queue locks %.4f (another carrier's %.4f),"
                + " wake-ups %.4f, turns %.4f, preemptions %.5f%n", scheduler, readyWorkers,
                (end[0] - countersAtStart[0]) / tasks, (end[4] - countersAtStart[4]) / tasks,
                (end[1] - countersAtStart[1]) / tasks, (end[5] - countersAtStart[5]) / tasks,
                (end[6] - countersAtStart[6]) / tasks);
    }

    private long[] engineCounters() {
        return sched instanceof io.reactoractor.ActorScheduler a
                ? io.reactoractor.internal.Internals.engine(a.defaultGroup()).engineCounters()
                : null;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (Scheduler.Worker w : workers) {
            w.dispose();
        }
        sched.dispose();
    }

    @Benchmark
    @OperationsPerInvocation(TOTAL)
    public long selfReschedulingWorkers() throws InterruptedException {
        int runs = TOTAL / readyWorkers;
        CountDownLatch done = new CountDownLatch(readyWorkers);
        for (Scheduler.Worker w : workers) {
            w.schedule(new InPoolSubmissionBenchmark.Chain(w, runs, done));
        }
        done.await();
        invocations++;
        return done.getCount();
    }
}
