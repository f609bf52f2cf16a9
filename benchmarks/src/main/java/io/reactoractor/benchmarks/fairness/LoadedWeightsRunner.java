package io.reactoractor.benchmarks.fairness;

import io.reactoractor.ActorScheduler;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.scheduler.Scheduler;

/**
 * Weighted group shares on a host whose cores other threads also want: two groups of busy actors (weights
 * {@code 1:W}) on a 2-carrier {@code ActorScheduler}, next to {@code H} hog threads of the same JVM that spin
 * (the operating system takes the carriers away for its time slices, as on a shared CI machine). Each task
 * does a fixed amount of arithmetic, so the count of tasks a group ran is its <em>CPU</em> share whatever the
 * host took; the wall-clock run time the scheduler measures is not. Fair: the weight-1 group gets
 * {@code 1 / (1 + W)} of the tasks.
 *
 * <p>Usage: {@code LoadedWeightsRunner [--weight=100] [--hogs=2] [--actors=2] [--work=1000] [--seconds=10]}:
 * {@code actors} busy actors per group, {@code work} iterations of arithmetic per task (1,000 is about
 * 1-2 µs). Prints the weight-1 group's share of the tasks for each second, and the median over the seconds.
 */
public final class LoadedWeightsRunner {

    /** The result: the weight-1 group's share of the tasks in each measured second. */
    record Result(int weight, int hogs, double expected, double[] shares) {
        double median() {
            double[] s = shares.clone();
            Arrays.sort(s);
            return s.length == 0 ? Double.NaN : s[s.length / 2];
        }
    }

    private static volatile long sink;

    private LoadedWeightsRunner() {
    }

    public static void main(String[] args) throws InterruptedException {
        int weight = 100;
        int hogs = 2;
        int actors = 2;
        int work = 1_000;
        int seconds = 10;
        for (String a : args) {
            String[] kv = a.split("=", 2);
            if (kv.length != 2) {
                throw new IllegalArgumentException("expected --name=value, got " + a);
            }
            int v = Integer.parseInt(kv[1]);
            switch (kv[0]) {
                case "--weight" -> weight = v;
                case "--hogs" -> hogs = v;
                case "--actors" -> actors = v;
                case "--work" -> work = v;
                case "--seconds" -> seconds = v;
                default -> throw new IllegalArgumentException("unknown option " + kv[0]);
            }
        }
        Result r = run(weight, hogs, actors, work, seconds * 1_000L, 2_000L, System.out);
        System.out.printf(Locale.ROOT, "weight 1:%d, %d hogs: weight-1 group's share median %.4f, fair %.4f (%.2fx)%n",
                r.weight(), r.hogs(), r.median(), r.expected(), r.median() / r.expected());
    }

    /**
     * Runs one measurement.
     *
     * @param weight      the heavy group's weight (the light group's is 1)
     * @param hogs        spinning threads beside the scheduler
     * @param actors      busy actors per group
     * @param work        iterations of arithmetic per task
     * @param millis      measured time, in steps of one second (at least one step)
     * @param warmupMillis time before measuring
     * @param out         where each second's share is printed
     * @return the shares measured
     */
    static Result run(int weight, int hogs, int actors, int work, long millis, long warmupMillis, PrintStream out)
            throws InterruptedException {
        ActorScheduler scheduler = ActorScheduler.builder().name("loaded").threads(2).build();
        List<Thread> hogThreads = new ArrayList<>();
        boolean[] stop = {false};
        Object stopLock = new Object();
        try {
            Scheduler light = scheduler.group("light", 1);
            Scheduler heavy = scheduler.group("heavy", weight);
            LongAdder lightTasks = new LongAdder();
            LongAdder heavyTasks = new LongAdder();
            for (int i = 0; i < actors; i++) {
                busy(light.createWorker(), lightTasks, work);
                busy(heavy.createWorker(), heavyTasks, work);
            }
            for (int i = 0; i < hogs; i++) {
                Thread t = new Thread(() -> {
                    long x = 0;
                    while (true) {
                        for (int k = 0; k < 1_000_000; k++) {
                            x += k * 31L;
                        }
                        synchronized (stopLock) {
                            if (stop[0]) {
                                break;
                            }
                        }
                    }
                    sink = x;
                }, "hog-" + i);
                t.setDaemon(true);
                t.start();
                hogThreads.add(t);
            }
            Thread.sleep(warmupMillis);
            int steps = (int) Math.max(1, millis / 1_000);
            long step = millis >= 1_000 ? 1_000 : millis;
            double[] shares = new double[steps];
            for (int i = 0; i < steps; i++) {
                long l0 = lightTasks.sum();
                long h0 = heavyTasks.sum();
                Thread.sleep(step);
                long l = lightTasks.sum() - l0;
                long h = heavyTasks.sum() - h0;
                shares[i] = l + h == 0 ? Double.NaN : l / (double) (l + h);
                out.printf(Locale.ROOT, "[loaded-weights] second %d: weight-1 group's share %.4f (%,d tasks)%n",
                        i + 1, shares[i], l + h);
            }
            return new Result(weight, hogs, 1.0 / (1 + weight), shares);
        } finally {
            synchronized (stopLock) {
                stop[0] = true;
            }
            scheduler.dispose();
            for (Thread t : hogThreads) {
                t.join(5_000);
            }
        }
    }

    /** An actor that keeps one task of {@code work} iterations in flight until its scheduler is disposed. */
    private static void busy(Scheduler.Worker worker, LongAdder count, int work) {
        Runnable[] self = new Runnable[1];
        self[0] = () -> {
            long x = 1;
            for (int i = 0; i < work; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            sink = x;
            count.increment();
            if (!worker.isDisposed()) {
                try {
                    worker.schedule(self[0]);
                } catch (java.util.concurrent.RejectedExecutionException disposed) {
                    // the scheduler is shutting down
                }
            }
        };
        worker.schedule(self[0]);
    }
}
