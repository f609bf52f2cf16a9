package io.reactoractor.benchmarks.ring;

import java.lang.management.ManagementFactory;

/**
 * Idle CPU of each multicast peer (issue 12): builds the diamond, pushes one batch through it, then
 * measures the process CPU time over an idle window. Reported in cores (1.0 = one core busy).
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar io.reactoractor.benchmarks.ring.RingIdleCpu [seconds]}
 */
public final class RingIdleCpu {

    private RingIdleCpu() {
    }

    /**
     * @param args optional idle window in seconds (default 3)
     * @throws InterruptedException if interrupted while idle
     */
    public static void main(String[] args) throws InterruptedException {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 3;
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Long[] values = new Long[1 << 16];
        for (int i = 0; i < values.length; i++) {
            values[i] = (long) i;
        }
        for (String impl : new String[] {"ring", "ringSp", "ringSubscriber", "ringSubscriberSp", "disruptorBlocking", "disruptorYielding", "disruptorSleeping",
                "fluxPublish", "sinksMulticast"}) {
            RingPeers.Runner r = RingPeers.create(impl, "diamond");
            try {
                r.runBatch(values);
                Thread.sleep(200); // let the batch's tail settle
                long cpu0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                Thread.sleep(seconds * 1000);
                double cores = (os.getProcessCpuTime() - cpu0) / (double) (System.nanoTime() - t0);
                System.out.printf("%-18s idle CPU %.3f cores over %d s%n", impl, cores, seconds);
            } finally {
                r.close();
            }
        }
    }
}
