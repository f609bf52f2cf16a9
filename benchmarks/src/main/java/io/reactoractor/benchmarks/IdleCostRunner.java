package io.reactoractor.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import reactor.core.scheduler.Scheduler;

/**
 * What a scheduler costs at rest: the CPU time its own threads use per second once it is idle, every peer of
 * {@link SchedulerPeers} in the same run. Each peer is created, runs 1,000 tiny tasks (so every thread has
 * started and worked), rests for half a second, then its threads' CPU time ({@link ThreadMXBean}) is read
 * over the measured window. A scheduler's threads are those that appeared while it was created and warmed
 * up (nothing else starts threads meanwhile).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.reactoractor.benchmarks.IdleCostRunner [--seconds=5] [--peers=actorFair,parallel]
 * </pre>
 */
public final class IdleCostRunner {

    private IdleCostRunner() {
    }

    /** One peer's figures. */
    public record Row(String peer, int threads, double cpuMicrosPerSecond) {
    }

    public static void main(String[] args) throws Exception {
        int seconds = 5;
        List<String> peers = SchedulerPeers.NAMES;
        for (String a : args) {
            if (a.startsWith("--seconds=")) {
                seconds = Integer.parseInt(a.substring("--seconds=".length()));
                if (seconds < 1) {
                    throw new IllegalArgumentException("seconds must be >= 1 but was " + seconds);
                }
            } else if (a.startsWith("--peers=")) {
                peers = List.of(a.substring("--peers=".length()).split(","));
            } else {
                throw new IllegalArgumentException("unknown argument: " + a + " (--seconds=N, --peers=a,b)");
            }
        }
        System.out.println("### Idle cost: CPU of a scheduler's own threads at rest (" + seconds + " s window)");
        System.out.println("| scheduler | threads | CPU us/s |");
        System.out.println("|---|---:|---:|");
        for (String p : peers) {
            Row r = measure(p, seconds);
            System.out.printf("| %s | %d | %.1f |%n", r.peer(), r.threads(), r.cpuMicrosPerSecond());
        }
    }

    /**
     * @param peer    one of {@link SchedulerPeers#NAMES}
     * @param seconds the measured window
     * @return the peer's idle CPU per second of its threads
     */
    public static Row measure(String peer, int seconds) throws InterruptedException {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Set<Long> before = liveThreadIds();
        Scheduler s = SchedulerPeers.create(peer);
        try {
            s.init();
            CountDownLatch done = new CountDownLatch(1_000);
            for (int i = 0; i < 1_000; i++) {
                s.schedule(done::countDown);
            }
            if (!done.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException(peer + ": the warm-up tasks did not run");
            }
            Thread.sleep(500);
            List<Long> own = new ArrayList<>(liveThreadIds());
            own.removeAll(before);
            long c0 = cpu(mx, own);
            Thread.sleep(seconds * 1_000L);
            long c1 = cpu(mx, own);
            return new Row(peer, own.size(), (c1 - c0) / 1_000.0 / seconds);
        } finally {
            s.dispose();
        }
    }

    private static Set<Long> liveThreadIds() {
        Set<Long> ids = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            ids.add(t.getId());
        }
        return ids;
    }

    private static long cpu(ThreadMXBean mx, List<Long> ids) {
        long sum = 0;
        for (long id : ids) {
            long t = mx.getThreadCpuTime(id);
            if (t > 0) {
                sum += t; // -1: the thread ended
            }
        }
        return sum;
    }
}
