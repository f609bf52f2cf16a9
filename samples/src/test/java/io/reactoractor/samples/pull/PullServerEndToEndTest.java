package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.pull.GroupStats;
import io.reactoractor.pull.PullResult;
import io.reactoractor.samples.pull.HttpViews.Acked;
import io.reactoractor.samples.pull.HttpViews.Appended;
import io.reactoractor.samples.pull.HttpViews.MessageView;
import io.reactoractor.samples.pull.HttpViews.Pulled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The app over a real port with real HTTP clients ({@link WebClient}): exactly-once per group under
 * normal operation with many long-polling consumers, long-poll latency and timeout, and 1,000 waiting
 * long polls held without a thread each. Bounds are generous (2 noisy cores); what is asserted holds
 * by construction, not by luck.
 */
class PullServerEndToEndTest extends PullServerTestSupport {

    private ConnectionProvider connections;
    private WebClient web;

    @BeforeEach
    void client() {
        // one connection per concurrent long poll: the default pool (16 connections) would queue them
        connections = ConnectionProvider.builder("e2e").maxConnections(1_200).pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(Duration.ofSeconds(60)).build();
        HttpClient http = HttpClient.create(connections).responseTimeout(Duration.ofSeconds(90));
        web = WebClient.builder().baseUrl(baseUrl()).clientConnector(new ReactorClientHttpConnector(http)).build();
    }

    @AfterEach
    void close() {
        connections.disposeLater().block(Duration.ofSeconds(10));
    }

    @Test
    @Timeout(120)
    void everyMessageReachesEveryGroupExactlyOnceWithTwentyLongPollingClients() {
        int messages = 2_000;
        int clientsPerGroup = 10;
        String subject = unique("e2e");
        List<String> groups = List.of(unique("group-a"), unique("group-b"));
        Map<String, Map<Long, AtomicInteger>> received = new ConcurrentHashMap<>();
        Map<String, Map<Long, String>> payloads = new ConcurrentHashMap<>();
        List<Mono<Void>> clients = new ArrayList<>();
        for (String group : groups) {
            Map<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
            Map<Long, String> got = new ConcurrentHashMap<>();
            received.put(group, seen);
            payloads.put(group, got);
            for (int c = 0; c < clientsPerGroup; c++) {
                // poll, record, ack, poll again, until the group has seen every message; a 1 s poll
                // timeout lets idle clients notice the end quickly
                clients.add(Mono.defer(() -> pull(subject, group, 25, 1_000, "explicit"))
                        .flatMap(p -> {
                            List<Long> offsets = new ArrayList<>();
                            for (MessageView m : p.messages()) {
                                seen.computeIfAbsent(m.offset(), o -> new AtomicInteger()).incrementAndGet();
                                got.put(m.offset(), m.payload());
                                offsets.add(m.offset());
                            }
                            return offsets.isEmpty() ? Mono.empty() : ack(subject, group, offsets);
                        })
                        .repeat(() -> seen.size() < messages)
                        .then());
            }
        }
        Map<Long, String> sent = new ConcurrentHashMap<>();
        Mono<Void> producer = Flux.range(0, messages)
                .flatMap(i -> web.post().uri("/subjects/{s}/messages", subject).contentType(MediaType.TEXT_PLAIN)
                        .bodyValue("m-" + i).retrieve().bodyToMono(Appended.class)
                        .doOnNext(a -> sent.put(a.offset(), "m-" + i)), 4)
                .then();
        List<Mono<Void>> all = new ArrayList<>(clients);
        all.add(producer);
        Mono.when(all).block(Duration.ofSeconds(100));

        assertEquals(messages, sent.size());
        for (String group : groups) {
            Map<Long, AtomicInteger> seen = received.get(group);
            assertEquals(sent.keySet(), seen.keySet(), () -> group + ": every message, no other");
            List<Long> duplicates = seen.entrySet().stream().filter(e -> e.getValue().get() != 1)
                    .map(Map.Entry::getKey).sorted().toList();
            assertEquals(List.of(), duplicates, () -> group + ": offsets delivered more than once");
            assertEquals(sent, payloads.get(group), () -> group + ": payloads as sent");
            GroupStats s = consumer.stats(subject, group);
            assertEquals(messages, s.committedOffset(), s::toString);
            assertEquals(0, s.lag(), s::toString);
            assertEquals(0, s.inFlight(), s::toString);
            assertEquals(messages, s.delivered(), s::toString);
            assertEquals(0, s.redelivered(), s::toString);
        }
    }

    @Test
    @Timeout(60)
    void aLongPollAnswersSoonAfterAnAppendAndEmptyAtItsTimeout() throws Exception {
        String subject = unique("latency");
        String group = "g";
        long worstNanos = 0;
        for (int round = 0; round < 3; round++) {
            CompletableFuture<Pulled> poll = pull(subject, group, 10, 30_000, "auto").toFuture();
            await(() -> "the poll waits: " + consumer.stats(subject, group), Duration.ofSeconds(20),
                    () -> consumer.stats(subject, group).waitingPulls() == 1);
            long start = System.nanoTime();
            web.post().uri("/subjects/{s}/messages", subject).bodyValue("r" + round).retrieve()
                    .bodyToMono(Appended.class).block(Duration.ofSeconds(20));
            Pulled p = poll.get(20, TimeUnit.SECONDS);
            long nanos = System.nanoTime() - start;
            worstNanos = Math.max(worstNanos, nanos);
            assertEquals(PullResult.Status.MESSAGES, p.status());
            assertEquals("r" + round, p.messages().get(0).payload());
        }
        // the bound is far above the typical milliseconds: it only rules out "answered at the timeout"
        long worst = worstNanos;
        System.out.printf("append -> long poll answer, worst of 3: %.1f ms%n", worst / 1e6);
        assertTrue(worst < TimeUnit.SECONDS.toNanos(2),
                () -> "append -> answer took " + TimeUnit.NANOSECONDS.toMillis(worst) + " ms");

        long timeoutMs = 500;
        long start = System.nanoTime();
        Pulled empty = pull(subject, group, 10, timeoutMs, "explicit").block(Duration.ofSeconds(20));
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(PullResult.Status.TIMED_OUT, empty.status());
        assertEquals(List.of(), empty.messages());
        // never before the timeout (the server's deadline starts after our clock did), late by < 3 s
        System.out.printf("a %d ms long poll answered TIMED_OUT after %d ms%n", timeoutMs, elapsedMs);
        assertTrue(elapsedMs >= timeoutMs && elapsedMs < timeoutMs + 3_000, () -> "timed out after " + elapsedMs + " ms");
    }

    @Test
    @Timeout(120)
    void aThousandWaitingLongPollsHoldNoThreadEach() throws Exception {
        int polls = 1_000;
        String subject = unique("thousand");
        String group = "many";
        // warm up the client and server paths (event loops start lazily)
        pull(subject, group, 1, 0, "explicit").block(Duration.ofSeconds(20));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        int before = threads.getThreadCount();
        threads.resetPeakThreadCount();

        List<CompletableFuture<Pulled>> waiting = new ArrayList<>();
        for (int i = 0; i < polls; i++) {
            waiting.add(pull(subject, group, 1, 90_000, "explicit").toFuture());
        }
        await(() -> "all polls wait: " + consumer.stats(subject, group), Duration.ofSeconds(60),
                () -> consumer.stats(subject, group).waitingPulls() == polls);
        int during = threads.getThreadCount();
        int peak = threads.getPeakThreadCount();
        System.out.printf("JVM threads: %d before, %d while %d polls wait (peak %d)%n", before, during, polls, peak);
        // a thread per waiting poll would add 1,000; the event loops and the scheduler add none
        assertTrue(peak - before < 100, () -> "threads before " + before + ", while 1,000 polls wait " + during
                + ", peak " + peak);
        assertTrue(waiting.stream().noneMatch(CompletableFuture::isDone), "nothing answered before an append");

        // a burst of appends, as a producer would send them; each waiting poll gets one message
        for (int i = 0; i < polls; i++) {
            consumer.append(subject, ("x" + i).getBytes(StandardCharsets.UTF_8));
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(waiting.toArray(new CompletableFuture<?>[0]));
        try {
            all.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            long unanswered = waiting.stream().filter(f -> !f.isDone()).count();
            throw new AssertionError(unanswered + " of " + polls + " polls still unanswered 30 s after the appends"
                    + " (a lost wake-up of the group actor?): " + consumer.stats(subject, group));
        }
        Set<Long> offsets = new HashSet<>();
        for (CompletableFuture<Pulled> f : waiting) {
            Pulled p = f.get();
            assertEquals(PullResult.Status.MESSAGES, p.status());
            assertEquals(1, p.messages().size());
            assertTrue(offsets.add(p.messages().get(0).offset()), () -> "offset handed out twice: " + p);
        }
        assertEquals(polls, offsets.size());
        Long committed = ack(subject, group, new ArrayList<>(offsets)).block(Duration.ofSeconds(20));
        assertEquals(polls, committed);
        assertEquals(0, consumer.stats(subject, group).waitingPulls());
    }

    // ------------------------------------------------------------------ the HTTP client side

    private Mono<Pulled> pull(String subject, String group, int max, long timeoutMs, String ack) {
        return web.get().uri("/subjects/{s}/groups/{g}/messages?max={m}&timeoutMs={t}&ack={a}", subject, group, max,
                timeoutMs, ack).retrieve().bodyToMono(Pulled.class);
    }

    private Mono<Long> ack(String subject, String group, List<Long> offsets) {
        return web.post().uri("/subjects/{s}/groups/{g}/ack", subject, group).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("epoch", consumer.store().epoch(), "offsets", offsets)).retrieve().bodyToMono(Acked.class).map(Acked::committedOffset);
    }
}
