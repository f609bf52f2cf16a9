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
 * {@code reactor.actor.pull.max-committed-offsets}: group names chosen by clients cannot grow the in-memory
 * store's committed offsets without limit. When the store holds the maximum, all used within the offset
 * retention, the acknowledgements of a new (subject, group) get {@code 503} naming the limit (they are
 * settled in the group, not recorded in the store); groups that already have an offset are unaffected. A context of its own, with room for one
 * offset.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"reactor.actor.threads=2", "reactor.actor.pull.max-committed-offsets=1"})
@AutoConfigureWebTestClient
class OffsetLimitTest {

    @Autowired
    WebTestClient autoConfigured;

    WebTestClient client;

    @BeforeEach
    void client() {
        client = autoConfigured.mutate().responseTimeout(Duration.ofSeconds(30))
                .clientConnector(PullServerTestSupport.connectionPerRequest()).build(); // see there
    }

    /** The store's epoch, which an acknowledgement names (every poll answer carries it). */
    String epoch;

    private WebTestClient.ResponseSpec ack(String group, long offset) {
        return client.post().uri("/subjects/s/groups/{g}/ack", group).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"epoch\": \"" + epoch + "\", \"offsets\": [" + offset + "]}").exchange();
    }

    private WebTestClient.ResponseSpec poll(String group) {
        return client.get().uri("/subjects/s/groups/{g}/messages?timeoutMs=0&max=1", group).exchange();
    }

    @Test
    @Timeout(60)
    void aNewGroupsCommitInAFullStoreAnswers503WithTheLimit() {
        for (int i = 0; i < 3; i++) {
            client.post().uri("/subjects/s/messages").contentType(MediaType.TEXT_PLAIN).bodyValue("m" + i).exchange()
                    .expectStatus().isCreated();
        }
        poll("first").expectStatus().isOk().expectBody().jsonPath("$.messages[0].offset").isEqualTo(0)
                .jsonPath("$.epoch").value(String.class, e -> epoch = e);
        ack("first", 0).expectStatus().isOk(); // the one offset the store holds
        poll("second").expectStatus().isOk().expectBody().jsonPath("$.messages[0].offset").isEqualTo(0);
        ack("second", 0).expectStatus().isEqualTo(503)
                .expectBody()
                .jsonPath("$.status").isEqualTo(503)
                .jsonPath("$.limit").isEqualTo("reactor.actor.pull.max-committed-offsets");
        // the refused acknowledgement is settled in the group all the same: its next poll goes on after it,
        // and each acknowledgement reports the refusal while the store has no room
        poll("second").expectStatus().isOk().expectBody().jsonPath("$.messages[0].offset").isEqualTo(1);
        ack("second", 1).expectStatus().isEqualTo(503)
                .expectBody().jsonPath("$.limit").isEqualTo("reactor.actor.pull.max-committed-offsets");
        // the group with an offset goes on
        poll("first").expectStatus().isOk().expectBody().jsonPath("$.messages[0].offset").isEqualTo(1);
        ack("first", 1).expectStatus().isOk();
    }
}
