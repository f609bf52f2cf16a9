package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;

import io.reactoractor.pull.GroupStats;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.samples.pull.HttpViews.MessageView;
import io.reactoractor.samples.pull.HttpViews.Pulled;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code ack=explicit}: a message not acknowledged within the ack timeout is delivered again; an
 * acknowledged one, or one pulled with {@code ack=auto}, is not. A context of its own, with a 1 s ack
 * timeout.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"reactor.actor.threads=2", "reactor.actor.pull.ack-timeout=1s"})
@AutoConfigureWebTestClient
class AckTimeoutTest {

    @Autowired
    WebTestClient autoConfigured;

    @Autowired
    PullConsumer consumer;

    WebTestClient client;

    @BeforeEach
    void client() {
        client = autoConfigured.mutate().responseTimeout(Duration.ofSeconds(30))
                .clientConnector(PullServerTestSupport.connectionPerRequest()).build(); // see there
    }

    @Test
    @Timeout(60)
    void unacknowledgedMessagesAreRedeliveredAfterTheAckTimeoutAndAcknowledgedOnesAreNot() {
        String subject = "ack-timeout";
        for (int i = 0; i < 3; i++) {
            client.post().uri("/subjects/{s}/messages", subject).contentType(MediaType.TEXT_PLAIN).bodyValue("m" + i)
                    .exchange().expectStatus().isCreated();
        }
        Pulled first = pull(subject, "g", "ack=explicit&timeoutMs=0");
        assertEquals(List.of(0L, 1L, 2L), offsets(first));

        // not acknowledged: the next poll waits for the redelivery (about 1 s later), not for its timeout
        Pulled second = pull(subject, "g", "ack=explicit&timeoutMs=20000");
        assertEquals(List.of(0L, 1L, 2L), offsets(second));
        assertEquals(List.of(1, 1, 1), first.messages().stream().map(MessageView::attempt).toList());
        assertEquals(first.messages().stream()
                        .map(m -> new MessageView(m.offset(), m.payload(), m.timestamp(), 2, m.epoch())).toList(),
                second.messages(), "the same messages, payloads and timestamps, at their second attempt");

        client.post().uri("/subjects/{s}/groups/g/ack", subject).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"epoch\":\"" + second.epoch() + "\",\"offsets\":[0,1,2]}").exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.committedOffset").isEqualTo(3);
        // acknowledged: nothing comes back, even well past the ack timeout
        assertEquals("TIMED_OUT", pull(subject, "g", "timeoutMs=2500").status().name());
        GroupStats s = consumer.stats(subject, "g");
        assertEquals(3, s.redelivered(), s::toString);
        assertEquals(3, s.committedOffset(), s::toString);
    }

    @Test
    @Timeout(60)
    void autoAcknowledgedMessagesAreNeverRedelivered() {
        String subject = "auto-ack";
        consumer.append(subject, new byte[] {'x'});
        assertEquals(List.of(0L), offsets(pull(subject, "g", "ack=auto&timeoutMs=0")));
        assertEquals("TIMED_OUT", pull(subject, "g", "timeoutMs=2500").status().name());
        assertEquals(0, consumer.stats(subject, "g").redelivered());
        assertEquals(1, consumer.stats(subject, "g").committedOffset());
    }

    private Pulled pull(String subject, String group, String query) {
        return client.get().uri("/subjects/" + subject + "/groups/" + group + "/messages?" + query).exchange()
                .expectStatus().isOk().expectBody(Pulled.class).returnResult().getResponseBody();
    }

    private static List<Long> offsets(Pulled p) {
        return p.messages().stream().map(MessageView::offset).toList();
    }
}
