package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.reactoractor.pull.PullConsumer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The one application context the HTTP tests share (same annotations and properties, so Spring's test
 * context cache starts the server once for all subclasses): the real app on a random port, 2 scheduler
 * threads. Every test uses its own subject names, so tests do not see each other's messages.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "reactor.actor.threads=2")
@AutoConfigureWebTestClient
abstract class PullServerTestSupport {

    private static final AtomicInteger NAMES = new AtomicInteger();

    @LocalServerPort
    int port;

    @Autowired
    PullConsumer consumer;

    /**
     * A client connector that opens a connection per request, for every test client of the running app.
     * The reactor-netty Boot manages here (1.3.7) can stop reading a kept-alive connection: a request that
     * arrives before the previous one's operations ended is buffered, and if it is then answered
     * synchronously (a 400), neither the read nor the idle timeout is re-armed, so the next request on that
     * pooled connection waits forever (reactor-netty#4361, fixed in a later snapshot). A plain Reactor Netty
     * check of that sequence (an answer from another thread, a 400 at once, a third request on the
     * connection) hung the third request in 10 of 1,000 rounds next to two CPU hogs, and
     * {@code PullServerHardeningTest}'s first pooled request after its cap test (a status computed on another
     * thread, then a 400) hung for 60 s in 3 of 10 loaded runs of the samples. The server's answers are
     * what these tests check; keep-alive is the web server's business.
     *
     * @return the connector
     */
    static ClientHttpConnector connectionPerRequest() {
        return new ReactorClientHttpConnector(HttpClient.create(ConnectionProvider.newConnection()));
    }

    /** @return a subject or group name no other test uses */
    static String unique(String prefix) {
        return prefix + "-" + NAMES.incrementAndGet();
    }

    /**
     * @param body an ack body {@code {"offsets": ..}}
     * @return the same with the store's current epoch, as a client copies it from the poll answer
     */
    String withEpoch(String body) {
        return body.replaceFirst("\\{", "{\"epoch\":\"" + consumer.store().epoch() + "\",");
    }

    /** @return the base URL of the running server */
    String baseUrl() {
        return "http://localhost:" + port;
    }

    /**
     * Waits for a condition that the code under test makes true eventually (no sleeping for a fixed time).
     *
     * @param what      described in the failure
     * @param timeout   generous bound: the machine is small and shared
     * @param condition the condition
     */
    static void await(Supplier<String> what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + timeout + " waiting for: " + what.get());
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted waiting for: " + what.get());
            }
        }
    }
}
