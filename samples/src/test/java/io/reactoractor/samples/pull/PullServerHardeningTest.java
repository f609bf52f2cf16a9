package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.pull.PullConsumer;
import io.reactoractor.samples.pull.HttpViews.Pulled;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Issue 10, items 2 (the pair cap, bounded status), 3 (connection timeouts, quiet aborted uploads,
 * loopback binding) and 4 (stale acks) over HTTP, with raw sockets where a well-behaved client cannot
 * misbehave. Connection timeouts are set to 1-3 s here, so the checks take seconds; every wait for the
 * server is bounded generously (the machine is small and shared).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "reactor.actor.threads=2",
        "pull.connection-idle-timeout=1s",
        "pull.request-read-timeout=1s",
        "pull.request-timeout=3s",
        "reactor.actor.pull.max-groups=3",
        "reactor.actor.pull.idle-timeout=300ms",
        "pull.status-limit=5"})
@ExtendWith(OutputCaptureExtension.class)
class PullServerHardeningTest {

    /** How long a misbehaving connection may stay open before the test fails (timeouts are 1-3 s). */
    private static final int CLOSE_WITHIN_MS = 30_000;

    @LocalServerPort
    int port;

    @Autowired
    PullConsumer consumer;

    @Value("${server.address}")
    String address;

    /** A client that opens a connection per request: see {@link PullServerTestSupport#connectionPerRequest()}. */
    private WebClient web() {
        return WebClient.builder().baseUrl("http://127.0.0.1:" + port)
                .clientConnector(PullServerTestSupport.connectionPerRequest())
                .build();
    }

    private Socket connect() throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        s.setSoTimeout(CLOSE_WITHIN_MS);
        return s;
    }

    /** Reads until the server closes the connection; fails if it stays open {@link #CLOSE_WITHIN_MS}. */
    private static String readUntilClosed(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        StringBuilder got = new StringBuilder();
        byte[] buf = new byte[1024];
        try {
            int n;
            while ((n = in.read(buf)) >= 0) {
                got.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server kept the connection open for " + CLOSE_WITHIN_MS + " ms; read: "
                    + got);
        } catch (IOException reset) {
            // a reset is a close too
        }
        return got.toString();
    }

    private static void send(Socket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** What a hang needs explained: the pair's and the scheduler's state, and the threads that serve them. */
    private String diagnostics(String subject, String group) {
        StringBuilder b = new StringBuilder();
        b.append("store end=").append(consumer.store().endOffset(subject)).append("; live groups=")
                .append(consumer.liveGroups()).append("; stats=").append(consumer.stats()).append("; scheduler=")
                .append(consumer.scheduler().stats()).append('\n');
        try {
            java.lang.reflect.Method debug = PullConsumer.class.getDeclaredMethod("debugState", String.class, String.class);
            debug.setAccessible(true);
            b.append("actor: ").append(debug.invoke(consumer, subject, group)).append('\n');
        } catch (ReflectiveOperationException | RuntimeException e) {
            b.append("actor: ").append(e).append('\n');
        }
        Thread.getAllStackTraces().forEach((t, stack) -> {
            String name = t.getName();
            if (name.startsWith("pull") || name.contains("timer") || name.startsWith("reactor-http")
                    || name.startsWith("parallel")) {
                b.append('"').append(name).append("\" ").append(t.getState()).append('\n');
                for (int i = 0; i < Math.min(stack.length, 12); i++) {
                    b.append("    at ").append(stack[i]).append('\n');
                }
            }
        });
        return b.toString();
    }

    // ------------------------------------------------------------------ item 3: connection timeouts

    @Test
    @Timeout(120)
    void anIdleConnectionIsClosed() throws IOException {
        try (Socket s = connect()) {
            assertEquals("", readUntilClosed(s));
        }
    }

    @Test
    @Timeout(120)
    void aConnectionWithPartialHeadersIsClosed() throws IOException {
        try (Socket s = connect()) {
            send(s, "GET /status HTTP/1.1\r\nHost: localhost\r\nX-Partial: ");
            readUntilClosed(s);
        }
    }

    @Test
    @Timeout(120)
    void aHugeContentLengthWithoutABodyDoesNotHangForever() throws IOException {
        try (Socket s = connect()) {
            send(s, "POST /subjects/huge/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: 1000000000000\r\n\r\n0123456789");
            String answer = readUntilClosed(s);
            assertFalse(answer.startsWith("HTTP/1.1 201"), answer);
        }
        assertEquals(0, consumer.store().endOffset("huge"), "nothing appended");
    }

    @Test
    @Timeout(120)
    void aTricklingUploadEndsAtTheRequestTimeout() throws Exception {
        try (Socket s = connect()) {
            send(s, "POST /subjects/trickle/messages HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n");
            long t0 = System.nanoTime();
            boolean closed = false;
            // one byte every 500 ms: never idle for the 1 s read timeout, but over the 3 s request timeout
            while (!closed && System.nanoTime() - t0 < Duration.ofMillis(CLOSE_WITHIN_MS).toNanos()) {
                try {
                    send(s, "x");
                    Thread.sleep(500);
                    s.setSoTimeout(1);
                    closed = s.getInputStream().read() < 0;
                } catch (SocketTimeoutException stillOpen) {
                    // go on trickling
                } catch (IOException reset) {
                    closed = true;
                }
            }
            assertTrue(closed, "the trickling upload was never cut");
        }
    }

    @Test
    @Timeout(120)
    void anAbortedUploadIsNotAnErrorWithAStackTrace(CapturedOutput output) throws Exception {
        for (int i = 0; i < 3; i++) {
            try (Socket s = connect()) {
                send(s, "POST /subjects/aborted/messages HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n"
                        + "only a few bytes");
                Thread.sleep(100);
            } // closed by the client in the middle of the body
        }
        // the server notices the close at once; the read timeout (1 s) would end it anyway: wait past both
        Thread.sleep(2_500);
        // the server still works, and said nothing alarming about the aborted uploads
        assertEquals(Pulled.class, web().get().uri("/subjects/aborted/groups/g/messages?timeoutMs=0").retrieve()
                .bodyToMono(Pulled.class).block(Duration.ofSeconds(30)).getClass());
        String log = output.getAll();
        assertFalse(log.contains(" ERROR "), "aborted uploads were logged as errors:\n" + log);
        // a status 500 as a number of its own: the log also holds numbers such as the process id (16500) and
        // timestamps' milliseconds (10:57:49.500Z), which failed a CI run
        assertFalse(java.util.regex.Pattern.compile("(?<![0-9.])500(?![0-9])").matcher(log).find(),
                "aborted uploads were answered as server errors:\n" + log);
        assertEquals(0, consumer.store().endOffset("aborted"), "nothing appended");
    }

    @Test
    @Timeout(120)
    void longPollsAndStreamsOutliveTheConnectionTimeouts() {
        // 4 s: longer than the idle (1 s), read (1 s) and request (3 s) timeouts
        Pulled timedOut;
        try {
            timedOut = web().get().uri("/subjects/long/groups/g/messages?timeoutMs=4000").retrieve()
                    .bodyToMono(Pulled.class).block(Duration.ofSeconds(60));
        } catch (IllegalStateException timeout) {
            throw new AssertionError("no answer in 60 s; " + diagnostics("long", "g"), timeout);
        }
        assertEquals("TIMED_OUT", timedOut.status().name());

        reactor.core.Disposable appendLater = reactor.core.publisher.Mono.delay(Duration.ofSeconds(4))
                .subscribe(x -> consumer.append("streamed", "late".getBytes(StandardCharsets.UTF_8)));
        try {
            String data;
            try {
                data = web().get().uri("/subjects/streamed/groups/g/stream").accept(MediaType.TEXT_EVENT_STREAM)
                        .retrieve().bodyToFlux(String.class).blockFirst(Duration.ofSeconds(60));
            } catch (IllegalStateException timeout) {
                throw new AssertionError("no event in 60 s; " + diagnostics("streamed", "g"), timeout);
            }
            assertTrue(data.contains("late"), data);
        } finally {
            appendLater.dispose();
        }
    }

    @Test
    void theServerListensOnLoopbackByDefault() {
        assertEquals("127.0.0.1", address);
    }

    // ------------------------------------------------------------------ items 2 and 4

    @Test
    @Timeout(120)
    void pairsBeyondTheCapGet503WithTheLimitAndStatusStaysBounded() throws InterruptedException {
        // pairs of the other tests retire after 300 ms idle
        PullServerTestSupport.await(() -> "pairs retire: " + consumer.liveGroups(), Duration.ofSeconds(30),
                () -> consumer.liveGroups() == 0);
        for (int i = 0; i < 3; i++) {
            consumer.append("cap" + i, "m".getBytes(StandardCharsets.UTF_8)); // keep them busy: in flight
            web().get().uri("/subjects/cap{i}/groups/g/messages?timeoutMs=0", i).retrieve().bodyToMono(Pulled.class)
                    .block(Duration.ofSeconds(30));
        }
        var refused = web().get().uri("/subjects/cap3/groups/g/messages?timeoutMs=0").exchangeToMono(r ->
                r.bodyToMono(String.class).map(body -> List.of(String.valueOf(r.statusCode().value()), body,
                        String.valueOf(r.headers().asHttpHeaders().getFirst("Retry-After"))))).block(Duration.ofSeconds(30));
        assertEquals("503", refused.get(0), refused.toString());
        assertTrue(refused.get(1).contains("\"limit\":\"reactor.actor.pull.max-groups\""), refused.get(1));
        assertEquals("60", refused.get(2));

        String status = web().get().uri("/status?limit=2").retrieve().bodyToMono(String.class)
                .block(Duration.ofSeconds(30));
        assertTrue(status.contains("\"liveGroups\":3"), status);
        assertEquals(2, status.split("\"subject\"").length - 1, status);
        assertEquals(400, web().get().uri("/status?limit=6").exchangeToMono(r -> reactor.core.publisher.Mono.just(
                r.statusCode().value())).block(Duration.ofSeconds(30)));
        assertEquals(3, consumer.liveGroups(), "status created nothing");

        // leave room for the other tests: settle, and the pairs retire when idle
        for (int i = 0; i < 3; i++) {
            consumer.ack("cap" + i, "g", consumer.store().epoch(), List.of(0L)).block(Duration.ofSeconds(30));
        }
        PullServerTestSupport.await(() -> "pairs retire: " + consumer.liveGroups(), Duration.ofSeconds(30),
                () -> consumer.liveGroups() == 0);
    }

    @Test
    @Timeout(120)
    void aStaleAckGets409AndSettlesNothingAndAnAckWithoutEpochIs400() {
        consumer.append("epochs", "m".getBytes(StandardCharsets.UTF_8));
        Pulled p = web().get().uri("/subjects/epochs/groups/g/messages?timeoutMs=0").retrieve()
                .bodyToMono(Pulled.class).block(Duration.ofSeconds(30));
        assertEquals(1, p.messages().size());
        assertEquals(consumer.store().epoch(), p.epoch());

        var stale = web().post().uri("/subjects/epochs/groups/g/ack").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"epoch\":\"before-the-restart\",\"offsets\":[0]}")
                .exchangeToMono(r -> r.bodyToMono(String.class).map(b -> r.statusCode().value() + " " + b))
                .block(Duration.ofSeconds(30));
        assertTrue(stale.startsWith("409 "), stale);
        assertTrue(stale.contains("\"parameter\":\"epoch\""), stale);
        var missing = web().post().uri("/subjects/epochs/groups/g/ack").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"offsets\":[0]}")
                .exchangeToMono(r -> r.bodyToMono(String.class).map(b -> r.statusCode().value() + " " + b))
                .block(Duration.ofSeconds(30));
        assertTrue(missing.startsWith("400 ") && missing.contains("\"parameter\":\"epoch\""), missing);
        assertEquals(0, consumer.stats("epochs", "g").committedOffset(), "nothing settled");

        Long committed = web().post().uri("/subjects/epochs/groups/g/ack").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"epoch\":\"" + p.epoch() + "\",\"offsets\":[0]}").retrieve()
                .bodyToMono(HttpViews.Acked.class).map(HttpViews.Acked::committedOffset).block(Duration.ofSeconds(30));
        assertEquals(1L, committed);
    }
}
