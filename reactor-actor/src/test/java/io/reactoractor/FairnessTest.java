package io.reactoractor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.sleepMillis;
import static io.reactoractor.TestSupport.spin;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fairness of the {@link ActorScheduler#ordering() FAIR} ordering, with generous bounds only:
 * equal-weight groups share the CPU about equally, weights skew the share, a group's share does
 * not grow with its number of actors, a light actor next to saturating heavy ones is served
 * promptly (and much faster than with FIFO ordering), and work submitted from outside the pool is
 * never starved by actors that keep re-scheduling themselves.
 *
 * <p>"CPU share" is measured by the tasks themselves: each spins for a fixed time and adds its own
 * measured run time to its group's counter. Both sides of every comparison suffer the machine's
 * noise alike; the assertions leave wide margins around the ideal values.
 */
@Timeout(value = 90, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FairnessTest {

    private static final Duration WARM_UP = Duration.ofMillis(300);
    private static final Duration MEASURE = Duration.ofSeconds(2);
    private static final int FAIR_ATTEMPTS = 3;

    private final TestSupport.Resources resources = new TestSupport.Resources();
    private final AtomicBoolean running = new AtomicBoolean(true);
    /** Saturator tasks started so far (the light-actor test's clock: one tick per heavy task). */
    private final AtomicLong saturatorStarts = new AtomicLong();

    @AfterEach
    void stopAndDispose() {
        running.set(false);
        sleepMillis(20); // let self-rescheduling tasks notice before their scheduler goes away
        resources.disposeAll();
    }

    private ActorScheduler newScheduler(ActorScheduler.Ordering ordering) {
        return resources.scheduler(ActorScheduler.builder()
                .name(uniqueName("fair"))
                .threads(2)
                .ordering(ordering));
    }

    /** A task that spins for a while, charges its measured run time, and re-schedules itself. */
    private final class Saturator implements Runnable {
        private final ActorWorker worker;
        private final long spinNanos;
        private final LongAdder cpuNanos;

        Saturator(ActorWorker worker, long spinNanos, LongAdder cpuNanos) {
            this.worker = worker;
            this.spinNanos = spinNanos;
            this.cpuNanos = cpuNanos;
        }

        void start() {
            worker.schedule(this);
        }

        @Override
        public void run() {
            if (!running.get()) {
                return;
            }
            saturatorStarts.incrementAndGet();
            cpuNanos.add(spin(spinNanos));
            if (running.get()) {
                try {
                    worker.schedule(this);
                } catch (RejectedExecutionException disposedMeanwhile) {
                    // the test is over
                }
            }
        }
    }

    private void saturate(ActorGroup group, int workers, long spinNanos, LongAdder cpu) {
        for (int i = 0; i < workers; i++) {
            new Saturator(group.createWorker(), spinNanos, cpu).start();
        }
    }

    /** Share of {@code a} in the CPU time both groups used during the measurement window. */
    private double measureShare(LongAdder a, LongAdder b) {
        sleepMillis(WARM_UP.toMillis());
        long a0 = a.sum();
        long b0 = b.sum();
        sleepMillis(MEASURE.toMillis());
        long da = a.sum() - a0;
        long db = b.sum() - b0;
        running.set(false);
        assertTrue(da + db > 0, "the saturating tasks ran");
        return (double) da / (da + db);
    }

    @Test
    void equalWeightGroupsShareEqually() {
        ActorScheduler s = newScheduler(ActorScheduler.Ordering.FAIR);
        LongAdder a = new LongAdder();
        LongAdder b = new LongAdder();
        saturate(s.group("a", 1), 4, 200_000, a);
        saturate(s.group("b", 1), 4, 200_000, b);
        double share = measureShare(a, b);
        System.out.printf("fairness equal weights: group a share %.3f%n", share);
        assertTrue(share >= 0.40 && share <= 0.60, () -> "share of group a: " + share + " (ideal 0.5)");
    }

    @Test
    void weightsSkewTheShare() {
        ActorScheduler s = newScheduler(ActorScheduler.Ordering.FAIR);
        LongAdder light = new LongAdder();
        LongAdder heavy = new LongAdder();
        saturate(s.group("w1", 1), 4, 200_000, light);
        saturate(s.group("w3", 3), 4, 200_000, heavy);
        double share = measureShare(heavy, light);
        System.out.printf("fairness weights 1:3: weight-3 share %.3f%n", share);
        assertTrue(share > 0.60, () -> "share of the weight-3 group: " + share + " (ideal 0.75)");
    }

    @Test
    void groupShareDoesNotGrowWithItsNumberOfActors() {
        ActorScheduler s = newScheduler(ActorScheduler.Ordering.FAIR);
        LongAdder many = new LongAdder();
        LongAdder one = new LongAdder();
        saturate(s.group("many", 1), 200, 200_000, many);
        saturate(s.group("one", 1), 1, 200_000, one);
        double share = measureShare(one, many);
        System.out.printf("fairness 200 actors vs 1: single-actor group share %.3f%n", share);
        // ideal 0.5: two threads, and a single actor can use at most one of them
        assertTrue(share >= 0.35, () -> "share of the 1-actor group: " + share + " (ideal 0.5)");
    }

    /**
     * Runs 4 heavy actors (1 ms self-rescheduling tasks) on 2 threads next to a light actor that
     * gets a 10 µs task every 2 ms from an outside thread (open loop), and returns, sorted, how many
     * heavy tasks started between each light task's submission and its start. Prints the same delays
     * in milliseconds for the log.
     *
     * <p>The delay is counted in heavy tasks, not in nanoseconds, so that it measures the scheduling
     * policy rather than the machine: while another process holds the cores, no heavy task starts
     * either, and a stall of tens of milliseconds (a busy CI host) adds nothing to the count. The count
     * starts after {@code schedule} returned: a submitting thread descheduled inside the call can only
     * make it smaller, for both orderings alike.
     */
    private long[] lightActorDelays(ActorScheduler s) {
        running.set(true);
        LongAdder heavyCpu = new LongAdder();
        saturate(s.defaultGroup(), 4, 1_000_000, heavyCpu);
        ActorWorker light = s.createWorker();
        sleepMillis(WARM_UP.toMillis());

        long period = TimeUnit.MILLISECONDS.toNanos(2);
        int samples = (int) (MEASURE.toNanos() / period);
        long[] nanos = new long[samples];
        long[] startsAtRun = new long[samples];
        long[] startsAtSubmit = new long[samples];
        CountDownLatch ran = new CountDownLatch(samples);
        long start = System.nanoTime();
        for (int k = 0; k < samples; k++) {
            long due = start + k * period;
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
            }
            int index = k;
            long enqueued = System.nanoTime();
            light.schedule(() -> {
                startsAtRun[index] = saturatorStarts.get();
                nanos[index] = System.nanoTime() - enqueued;
                spin(10_000);
                ran.countDown();
            });
            startsAtSubmit[k] = saturatorStarts.get();
        }
        await(ran, LONG, "every light task ran");
        running.set(false);
        assertTrue(heavyCpu.sum() > 0, "the heavy actors ran");
        s.dispose(); // stops the heavy actors for good before another scenario starts
        long[] heavyTasks = new long[samples]; // the latch made the tasks' writes visible
        for (int k = 0; k < samples; k++) {
            heavyTasks[k] = Math.max(0L, startsAtRun[k] - startsAtSubmit[k]);
        }
        long[] sortedNanos = nanos.clone();
        Arrays.sort(sortedNanos);
        Arrays.sort(heavyTasks);
        System.out.printf("light actor on %s (%s): heavy tasks started before a light one p50 %d p99 %d max %d;"
                + " delay p50 %.3f ms p99 %.3f ms max %.3f ms%n", s.name(), s.ordering(),
                percentile(heavyTasks, 0.50), percentile(heavyTasks, 0.99), heavyTasks[samples - 1],
                percentile(sortedNanos, 0.50) / 1e6, percentile(sortedNanos, 0.99) / 1e6, sortedNanos[samples - 1] / 1e6);
        return heavyTasks;
    }

    private static long percentile(long[] sorted, double p) {
        int index = Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1);
        return sorted[Math.max(0, index)];
    }

    /**
     * A light actor next to saturating heavy ones waits for far fewer heavy tasks under FAIR ordering
     * than under FIFO ordering, in the same run: FAIR's p99 is at most half of FIFO's (typically 1-2
     * heavy tasks against 10 or more: with FIFO it waits for the heavy turns queued before it). The
     * delay is counted in heavy tasks started, which a stall of the whole machine does not change
     * (see {@link #lightActorDelays}); latency in milliseconds belongs in the benchmarks, and the policy
     * itself (wake-up preemption at the next task boundary) is checked deterministically in
     * {@code FairPolicyTest}.
     *
     * <p>A stall of one carrier while the other runs can still add a few heavy tasks to a sample, so the
     * FAIR scenario gets up to {@value #FAIR_ATTEMPTS} attempts and its best p99 is compared.
     */
    @Test
    void lightActorIsServedPromptlyNextToSaturatingHeavyActors() {
        long fairP99 = Long.MAX_VALUE;
        long fifoP99 = -1;
        List<Long> attempts = new ArrayList<>();
        // fair first (cold JIT), so warm-up effects cannot favour it
        for (int attempt = 1; attempt <= FAIR_ATTEMPTS && (attempt == 1 || fairP99 * 2 > fifoP99); attempt++) {
            long p99 = percentile(lightActorDelays(newScheduler(ActorScheduler.Ordering.FAIR)), 0.99);
            attempts.add(p99);
            fairP99 = Math.min(fairP99, p99);
            if (attempt == 1) {
                fifoP99 = percentile(lightActorDelays(newScheduler(ActorScheduler.Ordering.FIFO)), 0.99);
            }
        }
        String summary = "heavy tasks started before a light task, p99: FAIR " + attempts + ", FIFO " + fifoP99;
        System.out.println(summary);
        long bestFairP99 = fairP99;
        long fifo = fifoP99;
        assertTrue(fifo >= 4, () -> "FIFO makes the light actor wait for the heavy turns queued before it: " + summary);
        assertTrue(bestFairP99 * 2 <= fifo, () -> "FAIR p99 is not at most half the FIFO p99: " + summary);
    }

    @Test
    void outsideSubmitterIsNotStarvedBySelfReschedulingActors() {
        ActorScheduler s = newScheduler(ActorScheduler.Ordering.FAIR);
        LongAdder cpu = new LongAdder();
        saturate(s.defaultGroup(), 4, 100_000, cpu);
        saturate(s.group("busy", 1), 4, 100_000, cpu);
        sleepMillis(100);
        List<Long> latencies = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            CountDownLatch ran = new CountDownLatch(2);
            long t0 = System.nanoTime();
            s.schedule(ran::countDown);
            s.group("busy", 1).schedule(ran::countDown);
            await(ran, Duration.ofSeconds(5), "task submitted from outside the pool ran (round " + i + ")");
            latencies.add(System.nanoTime() - t0);
            sleepMillis(5);
        }
        running.set(false);
        long max = latencies.stream().mapToLong(Long::longValue).max().orElseThrow();
        System.out.printf("outside submitter: max completion %.3f ms over %d rounds%n", max / 1e6, latencies.size());
        assertTrue(cpu.sum() > 0, "the saturating actors ran");
    }
}
