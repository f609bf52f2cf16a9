package io.reactoractor.benchmarks.pull;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.Consumer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.Message;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.pull.PullResult;
import io.reactoractor.pull.redis.RedisStreamsMessageStore;
import org.HdrHistogram.Histogram;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Redis store ({@link RedisStreamsMessageStore} under a {@link PullConsumer} on 2 scheduler
 * threads) against plain Lettuce loops doing the same work on the same Redis (a plain {@code main};
 * Markdown on stdout, progress on stderr). Needs a running Redis: {@code --uri redis://127.0.0.1:6390}.
 *
 * <ol>
 *   <li><b>Throughput</b>: a backlog of 16-byte messages drained by 4 pollers, each acknowledging what
 *       it got before polling again: {@code pull(max=500)} + {@code ack} through the pull consumer,
 *       against 4 loops of {@code XREADGROUP COUNT 500 BLOCK 100} + {@code XACK}, each on a connection of
 *       its own (a blocking read holds its connection).</li>
 *   <li><b>Wake-up latency</b>: N long polls ({@code max=1}) wait on one group; a producer appends every
 *       millisecond (open loop) with {@code System.nanoTime()} in the payload; each answer is
 *       acknowledged and polls again. Latency = append started → message handed to the poller. The
 *       pull consumer holds N polls on its 2 connections (commands, Pub/Sub); the baseline needs N
 *       connections, each in {@code XREADGROUP COUNT 1 BLOCK 30000}.</li>
 *   <li><b>Group fairness</b> (the store only): one subject with a backlog, two consumer groups reading
 *       it independently, one with 100 long-polling consumers and one with 2; each consumer pulls
 *       ({@code max=20}), spends 20 µs of CPU per message in the answer (which runs in the group
 *       actor's turn, so it is charged to the group's share), acknowledges without waiting for the
 *       answer and pulls again. Delivered messages per group and per consumer over the window: a fair
 *       scheduler gives each group half, whatever its number of consumers.</li>
 * </ol>
 * Throughput and wake-up run a warm-up first (throughput: two drains of the backlog per peer, not
 * recorded; wake-up: the first second of each round), then {@code rounds} rounds, the order of the two peers alternating from round to
 * round; the tables give every round and the medians.
 *
 * <p>Usage: {@code RedisPullBenchmark --uri redis://host:port [--quick] [--pollers N] [--rounds N]}.
 */
public final class RedisPullBenchmark {

    /**
     * Phase sizes.
     *
     * @param uri            the Redis
     * @param backlog        messages drained per throughput round
     * @param latencyWindow  the recording window of a wake-up round
     * @param pollers        waiting polls in the wake-up phase
     * @param rounds         rounds of the throughput and wake-up phases (peers alternated)
     * @param fairnessWindow the counting window of the fairness phase
     */
    public record Options(String uri, int backlog, Duration latencyWindow, int pollers, int rounds,
            Duration fairnessWindow) {
    }

    /**
     * The fairness phase's counts.
     *
     * @param manyPerConsumer messages delivered to each of the 100 consumers of group "many"
     * @param fewPerConsumer  messages delivered to each of the 2 consumers of group "few"
     * @param seconds         the counting window
     */
    public record Fairness(long[] manyPerConsumer, long[] fewPerConsumer, double seconds) {
        /** @return messages delivered to group "many" */
        public long many() {
            return java.util.Arrays.stream(manyPerConsumer).sum();
        }

        /** @return messages delivered to group "few" */
        public long few() {
            return java.util.Arrays.stream(fewPerConsumer).sum();
        }

        /** @return group "few"'s share of the delivered messages (0.5 is fair) */
        public double fewShare() {
            long all = many() + few();
            return all == 0 ? 0 : (double) few() / all;
        }
    }

    /** A throughput row. */
    public record Throughput(String label, long messages, double seconds) {
        /** @return messages per second */
        public double perSecond() {
            return messages / seconds;
        }
    }

    /** A latency row. */
    public record Latency(String label, long count, double p50us, double p99us, double p999us, double maxUs,
            int connections) {
    }

    private RedisPullBenchmark() {
    }

    /**
     * Runs both phases for both peers.
     *
     * @param args {@code --uri redis://host:port [--quick] [--pollers N]}
     * @throws Exception on a failure
     */
    public static void main(String[] args) throws Exception {
        List<String> a = List.of(args);
        int u = a.indexOf("--uri");
        if (u < 0 || u + 1 >= a.size()) {
            throw new IllegalArgumentException("--uri redis://host:port is required");
        }
        boolean quick = a.contains("--quick");
        int p = a.indexOf("--pollers");
        int pollers = p >= 0 ? Integer.parseInt(a.get(p + 1)) : 1_000;
        int r = a.indexOf("--rounds");
        int rounds = r >= 0 ? Integer.parseInt(a.get(r + 1)) : 3;
        if (rounds < 1) {
            throw new IllegalArgumentException("--rounds must be >= 1 but was " + rounds);
        }
        Options o = new Options(a.get(u + 1), quick ? 100_000 : 300_000,
                quick ? Duration.ofSeconds(5) : Duration.ofSeconds(15), pollers, rounds,
                quick ? Duration.ofSeconds(5) : Duration.ofSeconds(10));
        System.out.println(run(o).toMarkdown(o));
    }

    /**
     * Everything measured.
     *
     * @param throughput the throughput rows, store and plain Lettuce per round (in that order)
     * @param latency    the wake-up rows, store and plain Lettuce per round (in that order)
     * @param fairness   the fairness phase
     */
    public record Report(List<Throughput> throughput, List<Latency> latency, Fairness fairness) {

        /** @return the median of the store's throughput rounds over the median of plain Lettuce's */
        public double throughputRatio() {
            return median(throughput, 0, Throughput::perSecond) / median(throughput, 1, Throughput::perSecond);
        }

        /** @return the median of the store's wake-up p99 minus the median of plain Lettuce's, µs */
        public double p99DifferenceUs() {
            return median(latency, 0, Latency::p99us) - median(latency, 1, Latency::p99us);
        }

        private static <T> double median(List<T> rows, int peer, java.util.function.ToDoubleFunction<T> f) {
            double[] v = new double[rows.size() / 2];
            for (int i = 0; i < v.length; i++) {
                v[i] = f.applyAsDouble(rows.get(2 * i + peer));
            }
            java.util.Arrays.sort(v);
            return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        }

        /**
         * @param o the options of the run
         * @return the tables
         */
        public String toMarkdown(Options o) {
            StringBuilder sb = new StringBuilder();
            sb.append("### Redis pull throughput (backlog of " + o.backlog() + " drained by 4 pollers, ack per batch; "
                    + o.rounds() + " rounds after a warm-up)\n\n"
                    + "| round | peer | messages | seconds | messages/s |\n|---:|---|---:|---:|---:|\n");
            for (int i = 0; i < throughput.size(); i++) {
                Throughput t = throughput.get(i);
                sb.append(String.format(Locale.ROOT, "| %d | %s | %d | %.2f | %,.0f |%n", i / 2 + 1, t.label(),
                        t.messages(), t.seconds(), t.perSecond()));
            }
            sb.append(String.format(Locale.ROOT, "%nstore / plain Lettuce (medians): %.2fx (store %,.0f, plain %,.0f msg/s)%n",
                    throughputRatio(), median(throughput, 0, Throughput::perSecond),
                    median(throughput, 1, Throughput::perSecond)));
            sb.append("\n### Redis wake-up latency, append → poll answered (µs), " + o.pollers()
                    + " waiting polls, " + o.latencyWindow().toSeconds() + " s per round\n\n"
                    + "| round | peer | answered | p50 | p99 | p99.9 | max | Redis connections |\n"
                    + "|---:|---|---:|---:|---:|---:|---:|---:|\n");
            for (int i = 0; i < latency.size(); i++) {
                Latency l = latency.get(i);
                sb.append(String.format(Locale.ROOT, "| %d | %s | %d | %.1f | %.1f | %.1f | %.1f | %d |%n", i / 2 + 1,
                        l.label(), l.count(), l.p50us(), l.p99us(), l.p999us(), l.maxUs(), l.connections()));
            }
            sb.append(String.format(Locale.ROOT, "%np99, store - plain Lettuce (medians): %+.1f µs (store %.1f, plain %.1f)%n",
                    p99DifferenceUs(), median(latency, 0, Latency::p99us), median(latency, 1, Latency::p99us)));
            if (fairness != null) {
                sb.append(String.format(Locale.ROOT, "%n### Redis group fairness: one subject, group \"many\" (100 long-polling"
                        + " consumers) and group \"few\" (2), %.0f s%n%n"
                        + "| group | delivered | share | per consumer: min | mean | max |%n|---|---:|---:|---:|---:|---:|%n",
                        fairness.seconds()));
                row(sb, "many (100 consumers)", fairness.manyPerConsumer(), fairness.many(), 1 - fairness.fewShare());
                row(sb, "few (2 consumers)", fairness.fewPerConsumer(), fairness.few(), fairness.fewShare());
            }
            return sb.toString();
        }

        private static void row(StringBuilder sb, String label, long[] per, long sum, double share) {
            long min = java.util.Arrays.stream(per).min().orElse(0);
            long max = java.util.Arrays.stream(per).max().orElse(0);
            sb.append(String.format(Locale.ROOT, "| %s | %d | %.3f | %d | %.1f | %d |%n", label, sum, share, min,
                    per.length == 0 ? 0.0 : (double) sum / per.length, max));
        }
    }

    /**
     * Runs every phase: throughput and wake-up for both peers, fairness for the store.
     *
     * @param o sizes and the Redis to use
     * @return the figures
     * @throws InterruptedException if interrupted
     */
    public static Report run(Options o) throws InterruptedException {
        List<Throughput> tp = new ArrayList<>();
        List<Latency> lat = new ArrayList<>();
        System.err.println("throughput: warm-up");
        for (int w = 0; w < 2; w++) {
            storeThroughput(o);
            lettuceThroughput(o);
        }
        alternate(o, "throughput", RedisPullBenchmark::storeThroughput, RedisPullBenchmark::lettuceThroughput, tp);
        alternate(o, "wake-up", RedisPullBenchmark::storeWakeUp, RedisPullBenchmark::lettuceWakeUp, lat);
        System.err.println("fairness");
        return new Report(tp, lat, storeFairness(o));
    }

    /** One peer's run of a phase. */
    private interface Phase<T> {
        T run(Options o) throws InterruptedException;
    }

    /** {@code o.rounds()} rounds of a phase, the store's row then plain Lettuce's, their order alternating. */
    private static <T> void alternate(Options o, String what, Phase<T> store, Phase<T> plain, List<T> out)
            throws InterruptedException {
        for (int r = 0; r < o.rounds(); r++) {
            System.err.println(what + ": round " + (r + 1));
            T s;
            T p;
            if (r % 2 == 0) {
                s = store.run(o);
                p = plain.run(o);
            } else {
                p = plain.run(o);
                s = store.run(o);
            }
            out.add(s);
            out.add(p);
        }
    }

    /**
     * Group fairness on the Redis store (see the class comment).
     *
     * @param o the Redis and the window
     * @return delivered messages per consumer of each group
     * @throws InterruptedException if interrupted
     */
    static Fairness storeFairness(Options o) throws InterruptedException {
        ActorScheduler s = ActorScheduler.builder().name("redis-fair").threads(2).build();
        RedisStreamsMessageStore store = store(o, prefix("fair"));
        PullConsumer c = PullConsumer.builder(s).asyncStore(store).ackTimeout(Duration.ofMinutes(5))
                .maxWaitingPulls(1_000).build();
        long[] many = new long[100];
        long[] few = new long[2];
        java.util.concurrent.atomic.AtomicLongArray manyCounts = new java.util.concurrent.atomic.AtomicLongArray(many.length);
        java.util.concurrent.atomic.AtomicLongArray fewCounts = new java.util.concurrent.atomic.AtomicLongArray(few.length);
        AtomicBoolean counting = new AtomicBoolean();
        List<Disposable> loops = new ArrayList<>();
        try {
            // a backlog neither group can drain within the window at 20 µs a message on 2 threads
            int backlog = (int) Math.min(2_000_000, Math.max(20_000, o.fairnessWindow().toMillis() * 150));
            fill(store, "f", backlog);
            for (int i = 0; i < many.length; i++) {
                loops.add(fairLoop(c, "many", manyCounts, i, counting));
            }
            for (int i = 0; i < few.length; i++) {
                loops.add(fairLoop(c, "few", fewCounts, i, counting));
            }
            Thread.sleep(1_000); // warm-up
            counting.set(true);
            long t0 = System.nanoTime();
            Thread.sleep(o.fairnessWindow().toMillis());
            counting.set(false);
            double secs = (System.nanoTime() - t0) / 1e9;
            for (int i = 0; i < many.length; i++) {
                many[i] = manyCounts.get(i);
            }
            for (int i = 0; i < few.length; i++) {
                few[i] = fewCounts.get(i);
            }
            return new Fairness(many, few, secs);
        } finally {
            loops.forEach(Disposable::dispose);
            c.dispose();
            store.dispose();
            s.dispose();
        }
    }

    private static Disposable fairLoop(PullConsumer c, String group, java.util.concurrent.atomic.AtomicLongArray counts,
            int i, AtomicBoolean counting) {
        return Mono.defer(() -> c.pull("f", group, 20, Duration.ofSeconds(5)))
                .doOnNext(r -> {
                    for (int k = 0; k < r.messages().size(); k++) {
                        busy(20_000); // the consumer's work, in the group actor's turn
                    }
                    if (counting.get()) {
                        counts.addAndGet(i, r.messages().size());
                    }
                    if (!r.isEmpty()) {
                        c.ack("f", group, r.messages().stream().map(Message::offset).toList()).subscribe(x -> { },
                                e -> { });
                    }
                })
                .repeat()
                .subscribe(x -> { }, e -> System.err.println("fairness loop " + group + "/" + i + " failed: " + e));
    }

    private static void busy(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    private static String prefix(String what) {
        return "bench-" + what + "-" + Long.toString(System.nanoTime(), 36) + ":";
    }

    private static RedisStreamsMessageStore store(Options o, String prefix) {
        return RedisStreamsMessageStore.builder().uri(o.uri()).keyPrefix(prefix).consumerName("bench")
                .maxLen(Math.max(o.backlog() * 2L, 1_000_000)).commandTimeout(Duration.ofSeconds(30)).build();
    }

    private static void fill(RedisStreamsMessageStore store, String subject, int n) {
        byte[] payload = new byte[16];
        Flux.range(0, n).flatMap(i -> store.append(subject, payload), 256).blockLast(Duration.ofMinutes(5));
    }

    static Throughput storeThroughput(Options o) throws InterruptedException {
        ActorScheduler s = ActorScheduler.builder().name("redis-tp").threads(2).build();
        RedisStreamsMessageStore store = store(o, prefix("tp"));
        PullConsumer c = PullConsumer.builder(s).asyncStore(store).ackTimeout(Duration.ofMinutes(5)).build();
        try {
            fill(store, "t", o.backlog());
            AtomicLong got = new AtomicLong();
            List<Disposable> loops = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < 4; i++) {
                loops.add(Mono.defer(() -> c.pull("t", "g", 500, Duration.ofSeconds(1)))
                        .flatMap(r -> r.isEmpty() ? Mono.just(0)
                                : c.ack("t", "g", r.messages().stream().map(Message::offset).toList())
                                        .thenReturn(r.messages().size()))
                        .repeat(() -> got.get() < o.backlog())
                        .subscribe(got::addAndGet));
            }
            awaitCount(got, o.backlog());
            double secs = (System.nanoTime() - t0) / 1e9;
            loops.forEach(Disposable::dispose);
            return new Throughput("Redis store: 4 x pull(max=500) + ack", got.get(), secs);
        } finally {
            c.dispose();
            store.dispose();
            s.dispose();
        }
    }

    static Throughput lettuceThroughput(Options o) throws InterruptedException {
        String prefix = prefix("plain");
        RedisStreamsMessageStore filler = store(o, prefix);
        RedisClient client = RedisClient.create(o.uri());
        List<StatefulRedisConnection<String, byte[]>> conns = new ArrayList<>();
        try {
            String key = filler.key("t");
            fill(filler, "t", o.backlog());
            RedisCodec<String, byte[]> codec = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);
            StatefulRedisConnection<String, byte[]> admin = client.connect(codec);
            conns.add(admin);
            admin.sync().xgroupCreate(XReadArgs.StreamOffset.from(key, "0-0"), "g", XGroupCreateArgs.Builder.mkstream());
            AtomicLong got = new AtomicLong();
            List<Disposable> loops = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < 4; i++) {
                StatefulRedisConnection<String, byte[]> conn = client.connect(codec);
                conns.add(conn);
                Consumer<String> me = Consumer.from("g", "c" + i);
                loops.add(Mono.defer(() -> conn.reactive()
                                .xreadgroup(me, XReadArgs.Builder.count(500).block(100), XReadArgs.StreamOffset.lastConsumed(key))
                                .map(StreamMessage::getId).collectList())
                        .flatMap(ids -> ids.isEmpty() ? Mono.just(0)
                                : conn.reactive().xack(key, "g", ids.toArray(String[]::new)).thenReturn(ids.size()))
                        .repeat(() -> got.get() < o.backlog())
                        .subscribe(got::addAndGet));
            }
            awaitCount(got, o.backlog());
            double secs = (System.nanoTime() - t0) / 1e9;
            loops.forEach(Disposable::dispose);
            return new Throughput("plain Lettuce: 4 x XREADGROUP COUNT 500 BLOCK 100 + XACK", got.get(), secs);
        } finally {
            conns.forEach(StatefulRedisConnection::close);
            client.shutdown();
            filler.dispose();
        }
    }

    private static void awaitCount(AtomicLong got, long n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (got.get() < n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not drained: " + got.get() + " of " + n);
            }
            Thread.sleep(1);
        }
    }

    private static byte[] stamp() {
        return ByteBuffer.allocate(8).putLong(System.nanoTime()).array();
    }

    private static long stampOf(byte[] payload) {
        return ByteBuffer.wrap(payload).getLong();
    }

    /** Appends a stamp every millisecond (open loop) until {@code stop}; returns the producer thread. */
    private static Thread producer(java.util.function.Consumer<byte[]> append, AtomicBoolean stop) {
        Thread t = new Thread(() -> {
            long next = System.nanoTime();
            while (!stop.get()) {
                next += 1_000_000;
                long wait;
                while ((wait = next - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                append.accept(stamp());
            }
        }, "redis-bench-producer");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static Latency measure(String label, Histogram h, AtomicBoolean recording, Options o,
            java.util.function.Consumer<byte[]> append, int connections) throws InterruptedException {
        AtomicBoolean stop = new AtomicBoolean();
        Thread p = producer(append, stop);
        Thread.sleep(1_000); // warm-up
        recording.set(true);
        Thread.sleep(o.latencyWindow().toMillis());
        recording.set(false);
        stop.set(true);
        p.join();
        Histogram copy;
        synchronized (h) {
            copy = h.copy();
        }
        return new Latency(label, copy.getTotalCount(), copy.getValueAtPercentile(50) / 1e3,
                copy.getValueAtPercentile(99) / 1e3, copy.getValueAtPercentile(99.9) / 1e3, copy.getMaxValue() / 1e3,
                connections);
    }

    private static void record(Histogram h, AtomicBoolean recording, byte[] payload) {
        long latency = System.nanoTime() - stampOf(payload);
        if (recording.get()) {
            synchronized (h) {
                h.recordValue(Math.min(Math.max(latency, 0), TimeUnit.SECONDS.toNanos(60)));
            }
        }
    }

    static Latency storeWakeUp(Options o) throws InterruptedException {
        ActorScheduler s = ActorScheduler.builder().name("redis-wake").threads(2).build();
        RedisStreamsMessageStore store = store(o, prefix("wake"));
        PullConsumer c = PullConsumer.builder(s).asyncStore(store).ackTimeout(Duration.ofMinutes(5))
                .maxWaitingPulls(Math.max(o.pollers(), 1) * 2).build();
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        AtomicBoolean recording = new AtomicBoolean();
        List<Disposable> polls = new ArrayList<>();
        try {
            store.append("w", stamp()).block(Duration.ofSeconds(30)); // creates the stream
            c.pull("w", "g", 1, Duration.ZERO).flatMap(r -> c.ack("w", "g",
                    r.messages().stream().map(Message::offset).toList())).block(Duration.ofSeconds(30));
            for (int i = 0; i < o.pollers(); i++) {
                polls.add(Mono.defer(() -> c.pull("w", "g", 1, Duration.ofSeconds(30)))
                        .flatMap(r -> {
                            r.messages().forEach(m -> record(h, recording, m.payload()));
                            return r.isEmpty() ? Mono.just(0L)
                                    : c.ack("w", "g", r.messages().stream().map(Message::offset).toList());
                        })
                        .repeat()
                        .subscribe());
            }
            Thread.sleep(500);
            return measure("Redis store: " + o.pollers() + " long polls on one PullConsumer", h, recording, o,
                    payload -> store.append("w", payload).subscribe(), 2);
        } finally {
            polls.forEach(Disposable::dispose);
            c.dispose();
            store.dispose();
            s.dispose();
        }
    }

    static Latency lettuceWakeUp(Options o) throws InterruptedException {
        String prefix = prefix("plain-wake");
        RedisStreamsMessageStore producerStore = store(o, prefix);
        RedisClient client = RedisClient.create(o.uri());
        RedisCodec<String, byte[]> codec = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);
        List<StatefulRedisConnection<String, byte[]>> conns = new ArrayList<>();
        List<Disposable> loops = new ArrayList<>();
        Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        AtomicBoolean recording = new AtomicBoolean();
        try {
            String key = producerStore.key("w");
            StatefulRedisConnection<String, byte[]> admin = client.connect(codec);
            conns.add(admin);
            admin.sync().xgroupCreate(XReadArgs.StreamOffset.from(key, "$"), "g", XGroupCreateArgs.Builder.mkstream());
            for (int i = 0; i < o.pollers(); i++) {
                StatefulRedisConnection<String, byte[]> conn = client.connect(codec);
                conns.add(conn);
                Consumer<String> me = Consumer.from("g", "c" + i);
                loops.add(Mono.defer(() -> conn.reactive()
                                .xreadgroup(me, XReadArgs.Builder.count(1).block(30_000), XReadArgs.StreamOffset.lastConsumed(key))
                                .collectList())
                        .flatMap(ms -> {
                            ms.forEach(m -> record(h, recording, m.getBody().get(RedisStreamsMessageStore.PAYLOAD_FIELD)));
                            return ms.isEmpty() ? Mono.just(0L)
                                    : conn.reactive().xack(key, "g", ms.stream().map(StreamMessage::getId)
                                            .toArray(String[]::new));
                        })
                        .repeat()
                        .subscribe());
            }
            Thread.sleep(500);
            StatefulRedisConnection<String, byte[]> producer = client.connect(codec);
            conns.add(producer);
            return measure("plain Lettuce: " + o.pollers() + " x XREADGROUP COUNT 1 BLOCK, a connection each", h,
                    recording, o, payload -> producer.reactive().xadd(key, Map.of(RedisStreamsMessageStore.PAYLOAD_FIELD,
                            payload)).subscribe(), o.pollers() + 1);
        } finally {
            loops.forEach(Disposable::dispose);
            conns.forEach(StatefulRedisConnection::close);
            client.shutdown();
            producerStore.dispose();
        }
    }
}
