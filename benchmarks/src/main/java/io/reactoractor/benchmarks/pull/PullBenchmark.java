package io.reactoractor.benchmarks.pull;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.ConsumerOptions;
import io.reactoractor.pull.GroupStats;
import io.reactoractor.pull.InMemoryMessageStore;
import io.reactoractor.pull.Message;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.pull.PullResult;
import org.HdrHistogram.Histogram;
import reactor.core.Disposable;

/**
 * The pull consumer's figures, on an {@link ActorScheduler} with 2 threads (a plain {@code main};
 * Markdown on stdout, progress on stderr):
 *
 * <ol>
 *   <li><b>Pull throughput</b>: messages/s drained from a backlog (a) by one raw poller
 *       ({@code pull(max=500, ackOnDelivery)} in a loop) and (b) by 4 reactive consumers of one group
 *       ({@code consume()}, acknowledged after {@code onNext}, committed offsets included).</li>
 *   <li><b>Wake-up latency with 1,000 waiting pollers</b>: 1,000 long polls ({@code max=1}, 30 s
 *       timeout) wait on one group; a producer thread appends a message every 500 µs (open loop); each
 *       message answers one poll, which immediately polls again. Latency = append → poll answered
 *       (the answer callback reads {@code System.nanoTime()} against the nanoTime written into the
 *       payload), in an HdrHistogram. Peer in the same run: the same with 1,000 platform threads each
 *       blocked in {@code LinkedBlockingQueue.poll(30 s)} (what a thread-per-request long poll costs):
 *       latency and threads used.</li>
 *   <li><b>Group fairness</b>: a group with 100 consumers and a group with 2 consumers drain the same
 *       backlog; handling a message burns 20 µs on the group's actor (so both groups saturate the 2
 *       threads). Reported: each group's share of delivered messages (0.5 / 0.5 is fair).</li>
 * </ol>
 *
 * <p>Usage: {@code PullBenchmark [--quick]} ({@code --quick} shortens every phase; about 15 s in all,
 * the default about 45 s).
 */
public final class PullBenchmark {

    /** Phase lengths. */
    public record Options(int backlog, Duration latencyWindow, Duration fairnessWindow, int pollers) {
        /** The default profile. */
        public static Options full() {
            return new Options(2_000_000, Duration.ofSeconds(10), Duration.ofSeconds(10), 1_000);
        }

        /** The quick profile. */
        public static Options quick() {
            return new Options(1_000_000, Duration.ofSeconds(3), Duration.ofSeconds(3), 1_000);
        }
    }

    /** Throughput rows: label → messages/s. */
    public record Throughput(String label, long messages, double seconds) {
        public double perSecond() {
            return messages / seconds;
        }
    }

    /** Latency row. */
    public record Latency(String label, long count, double p50us, double p99us, double p999us, double maxUs,
            int threadsAdded) {
    }

    /** Fairness row. */
    public record Fairness(long manyDelivered, long fewDelivered) {
        public double fewShare() {
            return (double) fewDelivered / Math.max(1, manyDelivered + fewDelivered);
        }
    }

    /** Everything measured. */
    public record Report(List<Throughput> throughput, List<Latency> latency, Fairness fairness) {
        public String toMarkdown() {
            StringBuilder sb = new StringBuilder();
            sb.append("### Pull throughput (backlog drained, 2 threads)\n\n| consumer | messages | seconds | messages/s |\n|---|---:|---:|---:|\n");
            for (Throughput t : throughput) {
                sb.append(String.format(Locale.ROOT, "| %s | %d | %.2f | %,.0f |%n", t.label(), t.messages(),
                        t.seconds(), t.perSecond()));
            }
            sb.append("\n### Wake-up latency, append → long poll answered (µs)\n\n| peer | answered | p50 | p99 | p99.9 | max | threads added |\n|---|---:|---:|---:|---:|---:|---:|\n");
            for (Latency l : latency) {
                sb.append(String.format(Locale.ROOT, "| %s | %d | %.1f | %.1f | %.1f | %.1f | %d |%n", l.label(),
                        l.count(), l.p50us(), l.p99us(), l.p999us(), l.maxUs(), l.threadsAdded()));
            }
            sb.append(String.format(Locale.ROOT, "%n### Group fairness (100 consumers vs 2, both lagging)%n%n"
                    + "| group | delivered | share |%n|---|---:|---:|%n| 100 consumers | %d | %.3f |%n"
                    + "| 2 consumers | %d | %.3f |%n", fairness.manyDelivered(), 1 - fairness.fewShare(),
                    fairness.fewDelivered(), fairness.fewShare()));
            return sb.toString();
        }
    }

    private PullBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        boolean quick = List.of(args).contains("--quick");
        Report r = run(quick ? Options.quick() : Options.full(), System.err);
        System.out.println(r.toMarkdown());
    }

    /** Runs every phase. */
    public static Report run(Options o, java.io.PrintStream log) throws Exception {
        List<Throughput> tp = new ArrayList<>();
        log.println("pull throughput: raw poller");
        tp.add(rawPollerThroughput(o.backlog()));
        log.println("pull throughput: 4 reactive consumers");
        tp.add(consumerThroughput(o.backlog(), 4));
        List<Latency> lat = new ArrayList<>();
        log.println("wake-up latency: actor long polls");
        lat.add(actorWakeUp(o.pollers(), o.latencyWindow()));
        log.println("wake-up latency: blocking threads");
        lat.add(blockingWakeUp(o.pollers(), o.latencyWindow()));
        log.println("group fairness");
        Fairness f = fairness(o.fairnessWindow());
        return new Report(tp, lat, f);
    }

    private static ActorScheduler scheduler(String name) {
        return ActorScheduler.builder().name(name).threads(2).build();
    }

    /** A consumer whose store keeps the whole backlog (the default retention would evict most of it). */
    private static PullConsumer consumer(ActorScheduler s, int backlog) {
        return PullConsumer.builder(s)
                .store(InMemoryMessageStore.builder().retention(Math.max(backlog, 100_000)).build()).build();
    }

    static Throughput rawPollerThroughput(int backlog) {
        ActorScheduler s = scheduler("pull-raw");
        PullConsumer c = consumer(s, backlog);
        try {
            byte[] payload = new byte[16];
            for (int i = 0; i < backlog; i++) {
                c.append("t", payload);
            }
            long got = 0;
            long t0 = System.nanoTime();
            while (got < backlog) {
                PullResult r = c.pull("t", "g", 500, Duration.ofSeconds(5), true).block();
                if (r.isEmpty()) {
                    throw new IllegalStateException("backlog not drained: " + c.stats("t", "g"));
                }
                got += r.messages().size();
            }
            return new Throughput("raw pull(max=500, ack on delivery), 1 poller", got, (System.nanoTime() - t0) / 1e9);
        } finally {
            c.dispose();
            s.dispose();
        }
    }

    static Throughput consumerThroughput(int backlog, int consumers) throws InterruptedException {
        ActorScheduler s = scheduler("pull-consume");
        PullConsumer c = consumer(s, backlog);
        try {
            byte[] payload = new byte[16];
            for (int i = 0; i < backlog; i++) {
                c.append("t", payload);
            }
            AtomicLong got = new AtomicLong();
            List<Disposable> subs = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < consumers; i++) {
                subs.add(c.consume("t", "g", ConsumerOptions.builder().batchSize(256).build())
                        .subscribe(d -> got.incrementAndGet()));
            }
            while (c.store().committedOffset("t", "g") < backlog) {
                Thread.sleep(1);
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            subs.forEach(Disposable::dispose);
            return new Throughput(consumers + " x consume() (ack after onNext, batch 256), committed", got.get(), secs);
        } finally {
            c.dispose();
            s.dispose();
        }
    }

    private static byte[] stamp() {
        return ByteBuffer.allocate(8).putLong(System.nanoTime()).array();
    }

    private static long stampOf(byte[] payload) {
        return ByteBuffer.wrap(payload).getLong();
    }

    static Latency actorWakeUp(int pollers, Duration window) throws InterruptedException {
        ActorScheduler s = scheduler("pull-wake");
        PullConsumer c = PullConsumer.builder(s).build();
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(30), 3);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean measuring = new AtomicBoolean();
        int threadsBefore = Thread.activeCount();
        try {
            for (int i = 0; i < pollers; i++) {
                poll(c, h, stop, measuring);
            }
            while (c.stats("w", "g").waitingPulls() < pollers) {
                Thread.sleep(1);
            }
            int threadsAdded = Thread.activeCount() - threadsBefore;
            produce(window, measuring, () -> c.append("w", stamp()));
            stop.set(true);
            GroupStats st = c.stats("w", "g");
            if (st.waitingPulls() == 0) {
                throw new IllegalStateException("pollers were lost: " + st);
            }
            return latency("reactor-actor long polls (" + pollers + " waiting, 0 threads each)", h, threadsAdded);
        } finally {
            c.dispose();
            s.dispose();
        }
    }

    private static void poll(PullConsumer c, Histogram h, AtomicBoolean stop, AtomicBoolean measuring) {
        if (stop.get()) {
            return;
        }
        c.pull("w", "g", 1, Duration.ofSeconds(30), true).subscribe(r -> {
            long now = System.nanoTime();
            for (Message m : r.messages()) {
                if (measuring.get()) {
                    synchronized (h) {
                        h.recordValue(Math.max(0, now - stampOf(m.payload())));
                    }
                }
            }
            poll(c, h, stop, measuring);
        }, e -> { });
    }

    /** Appends every 500 µs (open loop: the schedule never waits for answers); 1 s warm-up first. */
    private static void produce(Duration window, AtomicBoolean measuring, Runnable append) {
        long period = TimeUnit.MICROSECONDS.toNanos(500);
        long start = System.nanoTime();
        long warmEnd = start + TimeUnit.SECONDS.toNanos(1);
        long end = warmEnd + window.toNanos();
        long next = start;
        while (true) {
            long now = System.nanoTime();
            if (now >= end) {
                break;
            }
            measuring.set(now >= warmEnd);
            if (now >= next) {
                append.run();
                next += period;
            } else {
                LockSupport.parkNanos(Math.min(next - now, 100_000));
            }
        }
        measuring.set(false);
    }

    static Latency blockingWakeUp(int pollers, Duration window) throws InterruptedException {
        LinkedBlockingQueue<byte[]> queue = new LinkedBlockingQueue<>();
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(30), 3);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean measuring = new AtomicBoolean();
        int threadsBefore = Thread.activeCount();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < pollers; i++) {
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        byte[] m = queue.poll(30, TimeUnit.SECONDS);
                        long now = System.nanoTime();
                        if (m != null && measuring.get()) {
                            synchronized (h) {
                                h.recordValue(Math.max(0, now - stampOf(m)));
                            }
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "blocking-poller-" + i);
            t.setDaemon(true);
            t.setPriority(Thread.NORM_PRIORITY);
            threads.add(t);
            t.start();
        }
        int threadsAdded = Thread.activeCount() - threadsBefore;
        produce(window, measuring, () -> queue.offer(stamp()));
        stop.set(true);
        threads.forEach(Thread::interrupt);
        for (Thread t : threads) {
            t.join(1_000);
        }
        return latency("blocking long polls (" + pollers + " platform threads in LinkedBlockingQueue.poll)", h,
                threadsAdded);
    }

    private static Latency latency(String label, Histogram h, int threadsAdded) {
        synchronized (h) {
            return new Latency(label, h.getTotalCount(), h.getValueAtPercentile(50) / 1e3,
                    h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3, h.getMaxValue() / 1e3,
                    threadsAdded);
        }
    }

    static Fairness fairness(Duration window) throws InterruptedException {
        ActorScheduler s = scheduler("pull-fair");
        PullConsumer c = consumer(s, 2_000_000);
        try {
            byte[] payload = new byte[16];
            for (int i = 0; i < 2_000_000; i++) {
                c.append("f", payload);
            }
            AtomicLong many = new AtomicLong();
            AtomicLong few = new AtomicLong();
            AtomicBoolean counting = new AtomicBoolean();
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                subs.add(c.consume("f", "many").subscribe(d -> {
                    busy(20_000);
                    if (counting.get()) {
                        many.incrementAndGet();
                    }
                }));
            }
            for (int i = 0; i < 2; i++) {
                subs.add(c.consume("f", "few").subscribe(d -> {
                    busy(20_000);
                    if (counting.get()) {
                        few.incrementAndGet();
                    }
                }));
            }
            Thread.sleep(500); // warm-up
            counting.set(true);
            Thread.sleep(window.toMillis());
            counting.set(false);
            subs.forEach(Disposable::dispose);
            return new Fairness(many.get(), few.get());
        } finally {
            c.dispose();
            s.dispose();
        }
    }

    private static void busy(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }
}
