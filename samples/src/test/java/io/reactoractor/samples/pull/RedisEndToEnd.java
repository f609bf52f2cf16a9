package io.reactoractor.samples.pull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.reactoractor.samples.pull.HttpViews.Appended;
import io.reactoractor.samples.pull.HttpViews.MessageView;
import io.reactoractor.samples.pull.HttpViews.Pulled;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * End to end on Redis (issue 13), not a unit test (a {@code main}, run by hand; its figures go to
 * {@code benchmarks/RESULTS.md}): two instances of the pull server app ({@code pull.store=redis}, child
 * JVMs on this class path) and one Redis; long-polling HTTP clients spread over both instances in two
 * groups; messages appended through both; one instance killed ({@code destroyForcibly}) half-way. At the
 * end every message must have been acknowledged in each group at least once; duplicates are counted.
 * Clients of the killed instance move to the other one, as behind a load balancer; an append that failed
 * on the killed instance is sent again to the other one (so a message may be stored twice: counted).
 *
 * <p>Usage: {@code RedisEndToEnd --uri redis://127.0.0.1:6390 [--messages 100000] [--clients 20]};
 * exit code 0 when nothing was lost. {@link RedisEndToEndTest} runs a shorter variant in the build
 * ({@link #run(Options)}).
 */
public final class RedisEndToEnd {

    private RedisEndToEnd() {
    }

    /**
     * What to run.
     *
     * @param uri        the Redis both instances share
     * @param messages   messages appended (half through each instance; instance 1 is killed once half of
     *                   them were appended)
     * @param clients    long-polling HTTP clients, alternately in groups g1 and g2, spread over both instances
     * @param ackTimeout the instances' ack timeout (how soon the killed instance's messages are reclaimed)
     * @param jvmArgs    extra options of the instances' JVMs
     * @param deadline   how long the whole run may take before it is reported as failed (liveness only)
     */
    public record Options(String uri, int messages, int clients, Duration ackTimeout, List<String> jvmArgs,
            Duration deadline) {
    }

    /**
     * One group's outcome.
     *
     * @param group          the group
     * @param delivered      distinct messages delivered to its clients
     * @param lost           messages never delivered
     * @param duplicates     messages delivered more than once
     * @param ackedOk        distinct messages whose ack was answered OK
     * @param pendingInRedis the group's pending entries in Redis at the end ({@code -1}: not read, the
     *                       deliveries did not complete)
     */
    public record GroupResult(String group, int delivered, long lost, long duplicates, int ackedOk,
            long pendingInRedis) {
    }

    /**
     * A run's outcome.
     *
     * @param messages      messages appended
     * @param appendSeconds how long the appends took
     * @param appendRetries appends sent again to the survivor after failing on the killed instance
     * @param seconds       from the first append until every message was acknowledged (or the deadline)
     * @param clients       long-polling clients
     * @param pollErrors    polls and acks that failed (the killed instance's)
     * @param groups        per group
     * @param logs          the instances' logs
     */
    public record Result(int messages, double appendSeconds, long appendRetries, double seconds, int clients,
            long pollErrors, List<GroupResult> groups, List<Path> logs) {

        /** @return whether every message was delivered in each group and nothing is pending in Redis */
        public boolean ok() {
            return groups.stream().allMatch(g -> g.lost() == 0 && g.pendingInRedis() == 0);
        }

        /** @return the report, Markdown */
        public String toMarkdown() {
            StringBuilder sb = new StringBuilder();
            sb.append(String.format("%d messages appended through 2 instances in %.1f s (%d appends retried on the "
                    + "survivor), all acknowledged after %.1f s; %d clients, %d poll/ack errors (the killed instance)%n%n",
                    messages, appendSeconds, appendRetries, seconds, clients, pollErrors));
            sb.append("| group | delivered (distinct) | lost | delivered more than once | acks answered OK (distinct) |"
                    + " pending in Redis at the end |\n|---|---:|---:|---:|---:|---:|\n");
            for (GroupResult g : groups) {
                sb.append(String.format("| %s | %d | %d | %d | %d | %d |%n", g.group(), g.delivered(), g.lost(),
                        g.duplicates(), g.ackedOk(), g.pendingInRedis()));
            }
            return sb.toString();
        }
    }

    /**
     * Runs it.
     *
     * @param args see the class comment
     * @throws Exception on a failure
     */
    public static void main(String[] args) throws Exception {
        List<String> a = List.of(args);
        String uri = a.get(a.indexOf("--uri") + 1);
        int messages = a.contains("--messages") ? Integer.parseInt(a.get(a.indexOf("--messages") + 1)) : 100_000;
        int clients = a.contains("--clients") ? Integer.parseInt(a.get(a.indexOf("--clients") + 1)) : 20;
        Result r = run(new Options(uri, messages, clients, Duration.ofSeconds(5), List.of("-Xmx512m"),
                Duration.ofMinutes(30)));
        System.out.println(r.toMarkdown());
        if (!r.ok()) {
            System.exit(1);
        }
    }

    /**
     * Starts the two instances, runs the clients and the appends, kills instance 1 half-way, waits until
     * every message was acknowledged in each group (or the deadline), stops the survivor.
     *
     * @param o what to run
     * @return the outcome
     * @throws Exception if an instance does not come up, or on interruption
     */
    public static Result run(Options o) throws Exception {
        String prefix = "e2e-" + Long.toString(System.nanoTime(), 36) + ":";
        int[] ports = {freePort(), freePort()};
        Process[] apps = new Process[2];
        List<Path> logs = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Path log = Files.createTempFile("e2e-app-" + i, ".log");
                logs.add(log);
                apps[i] = start(i, ports[i], o, prefix, log);
            }
            return run(o, ports, apps, prefix, logs);
        } finally {
            for (Process p : apps) {
                if (p != null) {
                    p.destroyForcibly();
                }
            }
        }
    }

    private static Result run(Options o, int[] ports, Process[] apps, String prefix, List<Path> logs)
            throws Exception {
        int messages = o.messages();
        int clients = o.clients();
        String uri = o.uri();
        long runDeadline = System.nanoTime() + o.deadline().toNanos();
        WebClient[] web = new WebClient[2];
        for (int i = 0; i < 2; i++) {
            web[i] = WebClient.builder().baseUrl("http://127.0.0.1:" + ports[i])
                    .codecs(c -> c.defaultCodecs().maxInMemorySize(16 << 20)).build();
            awaitUp(web[i], apps[i], runDeadline);
        }
        java.util.concurrent.atomic.AtomicIntegerArray dead = new java.util.concurrent.atomic.AtomicIntegerArray(2);
        String[] groups = {"g1", "g2"};
        Map<String, Map<Integer, AtomicInteger>> acked = new ConcurrentHashMap<>();
        Map<String, Map<Integer, AtomicInteger>> delivered = new ConcurrentHashMap<>();
        for (String g : groups) {
            acked.put(g, new ConcurrentHashMap<>());
            delivered.put(g, new ConcurrentHashMap<>());
        }
        AtomicLong pollErrors = new AtomicLong();
        List<Disposable> loops = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            String group = groups[c % 2];
            int home = (c / 2) % 2;
            Map<Integer, AtomicInteger> seen = acked.get(group);
            Map<Integer, AtomicInteger> got = delivered.get(group);
            loops.add(Mono.defer(() -> {
                        int i = dead.get(home) == 1 ? 1 - home : home;
                        return web[i].get().uri("/subjects/e2e/groups/{g}/messages?max=100&timeoutMs=2000&ack=explicit",
                                        group).retrieve().bodyToMono(Pulled.class)
                                .flatMap(p -> {
                                    if (p.messages().isEmpty()) {
                                        return Mono.just(0);
                                    }
                                    p.messages().forEach(m -> got.computeIfAbsent(
                                            Integer.parseInt(m.payload().substring(2)), k -> new AtomicInteger())
                                            .incrementAndGet());
                                    List<Long> offsets = p.messages().stream().map(MessageView::offset).toList();
                                    return web[i].post().uri("/subjects/e2e/groups/{g}/ack", group)
                                            .contentType(MediaType.APPLICATION_JSON)
                                            .bodyValue(Map.of("epoch", p.epoch(), "offsets", offsets))
                                            .retrieve().toBodilessEntity()
                                            .doOnNext(ok -> p.messages().forEach(m -> seen.computeIfAbsent(
                                                    Integer.parseInt(m.payload().substring(2)), k -> new AtomicInteger())
                                                    .incrementAndGet()))
                                            .thenReturn(p.messages().size());
                                })
                                .onErrorResume(e -> {
                                    pollErrors.incrementAndGet();
                                    return Mono.delay(Duration.ofMillis(50)).thenReturn(0);
                                });
                    })
                    .repeat()
                    .subscribe());
        }
        AtomicLong appendRetries = new AtomicLong();
        AtomicInteger appended = new AtomicInteger();
        long t0 = System.nanoTime();
        Flux.range(0, messages)
                .flatMap(n -> append(web, dead, n % 2, "m-" + n, appendRetries)
                        .doOnNext(x -> {
                            if (appended.incrementAndGet() == messages / 2) {
                                System.err.println("killing instance 1 (destroyForcibly) after " + messages / 2
                                        + " appends");
                                apps[1].destroyForcibly();
                                dead.set(1, 1);
                            }
                        }), 32)
                .blockLast(Duration.ofNanos(Math.max(runDeadline - System.nanoTime(), 1)));
        double appendSecs = (System.nanoTime() - t0) / 1e9;
        // done when every message was delivered in each group and Redis holds nothing unacknowledged (an ack
        // whose HTTP answer was lost with the killed instance is acknowledged all the same: Redis counts it)
        long[] pending = {-1, -1};
        while (System.nanoTime() < runDeadline) {
            if (delivered.values().stream().allMatch(m -> m.size() >= messages)) {
                for (int g = 0; g < 2; g++) {
                    pending[g] = pendingInRedis(uri, prefix, groups[g]);
                }
                if (pending[0] == 0 && pending[1] == 0) {
                    break;
                }
            }
            Thread.sleep(200);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        loops.forEach(Disposable::dispose);
        List<GroupResult> out = new ArrayList<>();
        for (int g = 0; g < 2; g++) {
            Map<Integer, AtomicInteger> d = delivered.get(groups[g]);
            long lost = messages - d.size();
            long dup = d.values().stream().filter(x -> x.get() > 1).count();
            out.add(new GroupResult(groups[g], d.size(), lost, dup, acked.get(groups[g]).size(), pending[g]));
        }
        return new Result(messages, appendSecs, appendRetries.get(), secs, clients, pollErrors.get(), out, logs);
    }

    /** The group's pending (delivered, unacknowledged) entries, from Redis itself. */
    private static long pendingInRedis(String uri, String prefix, String group) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(uri);
        try (var c = client.connect()) {
            return c.sync().xpending(prefix + "e2e", group).getCount();
        } finally {
            client.shutdown();
        }
    }

    private static Mono<Long> append(WebClient[] web, java.util.concurrent.atomic.AtomicIntegerArray dead, int preferred, String body, AtomicLong retries) {
        return Mono.defer(() -> {
            int i = dead.get(preferred) == 1 ? 1 - preferred : preferred;
            return web[i].post().uri("/subjects/e2e/messages").contentType(MediaType.TEXT_PLAIN).bodyValue(body)
                    .retrieve().bodyToMono(Appended.class).map(Appended::offset);
        }).retryWhen(reactor.util.retry.Retry.fixedDelay(100, Duration.ofMillis(50))
                .doBeforeRetry(s -> retries.incrementAndGet()));
    }

    private static Process start(int i, int port, Options o, String prefix, Path log) throws Exception {
        System.err.println("instance " + i + " on port " + port + ", log " + log);
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(o.jvmArgs());
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"),
                PullServerApplication.class.getName(), "--server.port=" + port, "--pull.store=redis",
                "--pull.redis.uri=" + o.uri(), "--pull.redis.key-prefix=" + prefix, "--pull.redis.consumer-name=app-" + i,
                "--reactor.actor.pull.ack-timeout=" + o.ackTimeout().toMillis() + "ms", "--reactor.actor.threads=1"));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static void awaitUp(WebClient web, Process app, long deadline) throws InterruptedException {
        while (true) {
            try {
                web.get().uri("/status").retrieve().toBodilessEntity().block(Duration.ofSeconds(5));
                return;
            } catch (RuntimeException notYet) {
                if (System.nanoTime() > deadline || !app.isAlive()) {
                    throw new IllegalStateException("instance not up (alive: " + app.isAlive() + ")", notYet);
                }
                Thread.sleep(200);
            }
        }
    }

    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
