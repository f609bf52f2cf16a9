package io.reactoractor.samples.pull;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code reactor.actor.pull.max-subjects}: subjects named by clients cannot grow the in-memory store
 * without limit. Empty subjects make room; when every subject holds messages, a new one gets {@code 503}
 * naming the limit, and nothing is created. A context of its own, with room for two subjects.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"reactor.actor.threads=2", "reactor.actor.pull.max-subjects=2"})
@AutoConfigureWebTestClient
class SubjectLimitTest {

    @Autowired
    WebTestClient autoConfigured;

    WebTestClient client;

    @BeforeEach
    void client() {
        client = autoConfigured.mutate().responseTimeout(Duration.ofSeconds(30))
                .clientConnector(PullServerTestSupport.connectionPerRequest()).build(); // see there
    }

    private WebTestClient.ResponseSpec append(String subject) {
        return client.post().uri("/subjects/{s}/messages", subject).contentType(MediaType.TEXT_PLAIN).bodyValue("m")
                .exchange();
    }

    @Test
    @Timeout(60)
    void emptySubjectsMakeRoomAndAStoreFullOfDataAnswers503WithTheLimit() {
        // a pull of an unknown subject creates it, empty: it makes room for data later
        client.get().uri("/subjects/probe/groups/g/messages?timeoutMs=0").exchange().expectStatus().isOk();
        append("a").expectStatus().isCreated();
        append("b").expectStatus().isCreated(); // "probe" was empty: removed to make room
        append("c").expectStatus().isEqualTo(503)
                .expectBody()
                .jsonPath("$.status").isEqualTo(503)
                .jsonPath("$.limit").isEqualTo("reactor.actor.pull.max-subjects");
        // the subjects with data are untouched
        append("a").expectStatus().isCreated();
        client.get().uri("/subjects/b/groups/g/messages?timeoutMs=0").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.messages.length()").isEqualTo(1);
    }
}
