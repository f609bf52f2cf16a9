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
 * Task submission <em>from inside the pool</em>, tasks per second, for every peer of
 * {@link SchedulerPeers}. Schedulers often have a cheaper path for a pool thread (a local queue, no
 * wake-up because the submitter is itself awake), which {@link SchedulerHandoffBenchmark} (submission
 * from the benchmark thread) cannot see.
 *
 * <ul>
 *   <li>{@code schedulerSubmitFromPool}: one task scheduled on the scheduler calls
 *       {@code scheduler.schedule(task)} {@value #TASKS} times from its pool thread; the benchmark
 *       thread waits until all of them ran. Fan-out from a pool thread.</li>
 *   <li>{@code workerSelfReschedule}: {@value #CHAINS} chains, each on its own worker, of a task that
 *       re-schedules itself on its worker until it has run {@value #TASKS} / {@value #CHAINS} times
 *       (the pattern of an actor processing its mailbox, or of a trampolined loop); the benchmark
 *       thread waits until both chains finished. One chain per thread keeps both threads busy
 *       (both chains share the one thread on {@code single}).</li>
 * </ul>
 *
 * <p>The benchmark thread only starts the work and waits, so no task outlives its invocation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class InPoolSubmissionBenchmark {

    /** Tasks per invocation. */
    public static final int TASKS = 10_000;
    /** Self-re-scheduling chains in {@code workerSelfReschedule}: one per thread. */
    public static final int CHAINS = SchedulerPeers.THREADS;

    @Param({"actorFair", "actorFifo", "parallel", "single", "boundedElastic", "fjp"})
    public String scheduler;

    Scheduler sched;
    Scheduler.Worker[] workers;

    @Setup(Level.Trial)
    public void setUp() {
        sched = SchedulerPeers.create(scheduler);
        workers = new Scheduler.Worker[CHAINS];
        for (int i = 0; i < CHAINS; i++) {
            workers[i] = sched.createWorker();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (Scheduler.Worker w : workers) {
            w.dispose();
        }
        sched.dispose();
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public long schedulerSubmitFromPool() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(TASKS);
        Runnable task = done::countDown;
        Scheduler s = sched;
        s.schedule(() -> {
            for (int i = 0; i < TASKS; i++) {
                s.schedule(task);
            }
        });
        done.await();
        return done.getCount();
    }

    @Benchmark
    @OperationsPerInvocation(TASKS)
    public long workerSelfReschedule() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(CHAINS);
        for (Scheduler.Worker w : workers) {
            w.schedule(new Chain(w, TASKS / CHAINS, done));
        }
        done.await();
        return done.getCount();
    }

    /** A task that schedules itself again on its worker until it has run {@code runs} times. */
    static final class Chain implements Runnable {
        private final Scheduler.Worker worker;
        private final CountDownLatch done;
        // only touched by the task itself; each run happens-after the schedule call of the previous one
        private int remaining;

        Chain(Scheduler.Worker worker, int runs, CountDownLatch done) {
            this.worker = worker;
            this.remaining = runs;
            this.done = done;
        }

        @Override
        public void run() {
            if (--remaining > 0) {
                worker.schedule(this);
            } else {
                done.countDown();
            }
        }
    }
}
