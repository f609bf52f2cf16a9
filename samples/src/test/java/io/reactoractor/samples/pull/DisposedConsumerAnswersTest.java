package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.InMemoryMessageStore;
import io.reactoractor.pull.PullConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.unit.DataSize;

/**
 * README, "Pull consumer over HTTP": once the consumer is disposed a call is a {@code 503}, and bad input a
 * {@code 400} whose JSON names the parameter. The controller alone (no server), on a consumer the test
 * disposes. Found by a black-box probe: an append after the dispose answered {@code 201} and stored the
 * message, a stream opened after it answered an empty {@code 200} (an SSE client reconnects at once, again
 * and again), and a stream's {@code 400} came wrapped as an SSE {@code data:} event when the request
 * accepted only {@code text/event-stream}, as SSE clients' do.
 */
class DisposedConsumerAnswersTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("disposed-answers").threads(1).build();
    private final InMemoryMessageStore store = InMemoryMessageStore.create();
    private final PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
    private final PullServerProperties properties = new PullServerProperties(Duration.ofMinutes(5),
            DataSize.ofMegabytes(1), 100, Duration.ofSeconds(60), Duration.ofSeconds(30), Duration.ofMinutes(2),
            "memory", new PullServerProperties.Redis("redis://localhost:6379", "pull:", "", 1000, 100_000,
                    Duration.ofDays(7)));
    private final WebTestClient client = WebTestClient
            .bindToController(new PullController(consumer, properties, tools.jackson.databind.json.JsonMapper.builder().build()))
            .controllerAdvice(new ApiErrors(properties)).build()
            .mutate().responseTimeout(Duration.ofSeconds(30)).build();

    @AfterEach
    void tearDown() {
        consumer.dispose();
        scheduler.dispose();
    }

    @Test
    void afterTheDisposeAppendsAndNewStreamsAre503AndNothingIsStored() {
        client.post().uri("/subjects/d/messages").contentType(MediaType.TEXT_PLAIN).bodyValue("before").exchange()
                .expectStatus().isCreated();
        consumer.dispose();
        client.post().uri("/subjects/d/messages").contentType(MediaType.TEXT_PLAIN).bodyValue("after").exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON);
        assertEquals(1, store.endOffset("d"), "nothing stored after the dispose");
        client.get().uri("/subjects/d/groups/g/stream").accept(MediaType.TEXT_EVENT_STREAM).exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON);
        client.get().uri("/subjects/d/groups/g/messages").exchange().expectStatus().isEqualTo(503);
    }

    /** Found by a black-box probe: while the consumer quiesced (shutting down) a new stream was an empty 200. */
    @Test
    void whileTheConsumerQuiescesANewStreamIs503() {
        consumer.quiesce();
        client.get().uri("/subjects/q/groups/g/stream").accept(MediaType.TEXT_EVENT_STREAM).exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON);
    }

    @Test
    void aStreamsBadRequestIsPlainJsonAlsoForAnEventStreamClient() {
        EntityExchangeResult<String> r = client.get().uri("/subjects/s/groups/g/stream?ack=sometimes")
                .accept(MediaType.TEXT_EVENT_STREAM).exchange()
                .expectStatus().isBadRequest()
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody(String.class).returnResult();
        assertTrue(r.getResponseBody().startsWith("{") && r.getResponseBody().contains("\"parameter\":\"ack\""),
                r.getResponseBody());
    }
}
