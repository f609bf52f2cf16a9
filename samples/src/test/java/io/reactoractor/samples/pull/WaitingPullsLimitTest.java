package io.reactoractor.samples.pull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.reactoractor.pull.PullConsumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

/**
 * {@code reactor.actor.pull.max-waiting-pulls}: a long poll beyond the limit gets {@code 503} with {@code Retry-After}
 * and the limit's name, as the other limits' answers (it was a bare 503 that read like the consumer's shutdown).
 * A context of its own, with room for two waiting polls per group.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"reactor.actor.threads=2", "reactor.actor.pull.max-waiting-pulls=2"})
@AutoConfigureWebTestClient
class WaitingPullsLimitTest {

    @Autowired
    WebTestClient autoConfigured;

    @Autowired
    PullConsumer consumer;

    @LocalServerPort
    int port;

    WebTestClient client;

    @BeforeEach
    void client() {
        client = autoConfigured.mutate().responseTimeout(Duration.ofSeconds(30))
                .clientConnector(PullServerTestSupport.connectionPerRequest()).build(); // see there
    }

    @Test
    @Timeout(60)
    void aLongPollBeyondTheLimitGets503WithRetryAfterAndTheLimit() throws InterruptedException {
        List<Disposable> waiting = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                // not through WebTestClient, whose exchange() waits for the answer (at the poll's timeout)
                waiting.add(WebClient.create("http://localhost:" + port).get()
                        .uri("/subjects/w/groups/g/messages?timeoutMs=20000").accept(MediaType.APPLICATION_JSON)
                        .retrieve().bodyToMono(String.class).subscribe(x -> { }, e -> { }));
            }
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (consumer.stats("w", "g").waitingPulls() < 2) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the two polls never waited: " + consumer.stats("w", "g"));
                }
                Thread.sleep(5);
            }
            client.get().uri("/subjects/w/groups/g/messages?timeoutMs=20000").exchange()
                    .expectStatus().isEqualTo(503)
                    .expectHeader().valueEquals(HttpHeaders.RETRY_AFTER, "1")
                    .expectBody()
                    .jsonPath("$.limit").isEqualTo("reactor.actor.pull.max-waiting-pulls")
                    .jsonPath("$.message").value(m -> {
                        if (!m.toString().contains("maxWaitingPulls = 2")) {
                            throw new AssertionError(m);
                        }
                    });
            // a pull-once never waits: it is not refused for the limit
            client.get().uri("/subjects/w/groups/g/messages?timeoutMs=0").exchange().expectStatus().isOk();
        } finally {
            waiting.forEach(Disposable::dispose);
        }
    }
}
