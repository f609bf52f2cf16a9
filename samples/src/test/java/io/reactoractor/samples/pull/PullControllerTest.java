package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.reactoractor.pull.GroupStats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * Every endpoint through {@link WebTestClient} against the running app: answers, defaults, and each
 * 400 (which must name the parameter; no bad input may give a 500).
 */
class PullControllerTest extends PullServerTestSupport {

    @Autowired
    WebTestClient autoConfigured;

    WebTestClient client;

    @BeforeEach
    void client() {
        // the default 5 s response timeout is too tight for a loaded 2-core machine
        client = autoConfigured.mutate().responseTimeout(Duration.ofSeconds(30))
                .clientConnector(PullServerTestSupport.connectionPerRequest()).build(); // see there
    }

    // ------------------------------------------------------------------ POST /subjects/{s}/messages

    @Test
    void appendAnswers201WithConsecutiveOffsetsWhateverTheContentType() {
        String subject = unique("append");
        append(subject, MediaType.TEXT_PLAIN, "a").jsonPath("$.subject").isEqualTo(subject)
                .jsonPath("$.offset").isEqualTo(0);
        append(subject, MediaType.APPLICATION_FORM_URLENCODED, "b=1").jsonPath("$.offset").isEqualTo(1);
        append(subject, MediaType.APPLICATION_OCTET_STREAM, "c").jsonPath("$.offset").isEqualTo(2);
        append(subject, MediaType.APPLICATION_JSON, "{\"d\":1}").jsonPath("$.offset").isEqualTo(3);

        assertEquals(List.of("a", "b=1", "c", "{\"d\":1}"),
                consumer.store().read(subject, 0, 10).stream().map(m -> m.payloadAsString()).toList());
    }

    @Test
    void appendWithoutBodyStoresAnEmptyPayload() {
        String subject = unique("empty");
        client.post().uri("/subjects/{s}/messages", subject).exchange()
                .expectStatus().isCreated().expectBody().jsonPath("$.offset").isEqualTo(0);
        assertEquals(0, consumer.store().read(subject, 0, 1).get(0).payload().length);
    }

    @Test
    void appendKeepsUtf8Payloads() {
        String subject = unique("utf8");
        append(subject, MediaType.TEXT_PLAIN, "héllo wörld ✓");
        pull(subject, "g", "timeoutMs=0").jsonPath("$.messages[0].payload").isEqualTo("héllo wörld ✓");
    }

    @Test
    void appendRejectsBadSubjectsAndOversizedBodies() {
        expect400(client.post().uri("/subjects/{s}/messages", "bad subject").bodyValue("x").exchange(), "subject");
        expect400(client.post().uri("/subjects/{s}/messages", "a".repeat(129)).bodyValue("x").exchange(), "subject");
        client.post().uri("/subjects/{s}/messages", unique("big"))
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .bodyValue(new byte[1024 * 1024 + 1]).exchange()
                .expectStatus().isEqualTo(HttpStatus.CONTENT_TOO_LARGE)
                .expectBody().jsonPath("$.parameter").isEqualTo("body");
    }

    // ------------------------------------------------------------------ GET .../messages (long poll)

    /** Before: WebFlux served the HEAD through the GET, which pulled the messages and threw the answer away. */
    @Test
    void aHeadOfTheLongPollIs405AndTakesNoMessage() {
        String subject = unique("head");
        append(subject, MediaType.TEXT_PLAIN, "m0");
        append(subject, MediaType.TEXT_PLAIN, "m1");
        client.method(org.springframework.http.HttpMethod.HEAD)
                .uri("/subjects/{s}/groups/g/messages?timeoutMs=0&ack=auto", subject).exchange()
                .expectStatus().isEqualTo(HttpStatus.METHOD_NOT_ALLOWED)
                .expectHeader().valueEquals("Allow", "GET");
        assertEquals(0, consumer.stats(subject, "g").delivered());
        pull(subject, "g", "timeoutMs=0").jsonPath("$.messages.length()").isEqualTo(2);
    }

    @Test
    void pullReturnsMessagesInOrderWithOffsetPayloadAndTimestamp() {
        String subject = unique("pull");
        long before = System.currentTimeMillis();
        for (int i = 0; i < 3; i++) {
            append(subject, MediaType.TEXT_PLAIN, "m" + i);
        }
        pull(subject, "g", "max=10&timeoutMs=1000")
                .jsonPath("$.status").isEqualTo("MESSAGES")
                .jsonPath("$.messages.length()").isEqualTo(3)
                .jsonPath("$.messages[0].offset").isEqualTo(0)
                .jsonPath("$.messages[2].offset").isEqualTo(2)
                .jsonPath("$.messages[1].payload").isEqualTo("m1")
                .jsonPath("$.messages[0].timestamp").value(Long.class,
                        t -> assertTrue(t >= before - 1000 && t <= System.currentTimeMillis(), "timestamp " + t));
    }

    @Test
    void pullDefaultsToAtMost100Messages() {
        String subject = unique("default-max");
        for (int i = 0; i < 150; i++) {
            consumer.append(subject, ("m" + i).getBytes(StandardCharsets.UTF_8));
        }
        pull(subject, "g", "").jsonPath("$.messages.length()").isEqualTo(100);
        pull(subject, "g", "max=1000&timeoutMs=0").jsonPath("$.messages.length()").isEqualTo(50);
    }

    @Test
    void pullOnceOnAnEmptySubjectIsEmptyAndAShortPollTimesOut() {
        String subject = unique("nothing");
        pull(subject, "g", "timeoutMs=0").jsonPath("$.status").isEqualTo("EMPTY").jsonPath("$.messages.length()")
                .isEqualTo(0);
        pull(subject, "g", "timeoutMs=200").jsonPath("$.status").isEqualTo("TIMED_OUT")
                .jsonPath("$.messages.length()").isEqualTo(0);
    }

    @Test
    void groupsReadTheSubjectIndependently() {
        String subject = unique("groups");
        append(subject, MediaType.TEXT_PLAIN, "x");
        pull(subject, "g1", "timeoutMs=0").jsonPath("$.messages[0].payload").isEqualTo("x");
        pull(subject, "g2", "timeoutMs=0").jsonPath("$.messages[0].payload").isEqualTo("x");
        // within one group a message in flight is not handed out twice
        pull(subject, "g1", "timeoutMs=0").jsonPath("$.status").isEqualTo("EMPTY");
    }

    @Test
    void explicitAckCommitsAndAutoAckNeedsNone() {
        String subject = unique("acks");
        for (int i = 0; i < 4; i++) {
            append(subject, MediaType.TEXT_PLAIN, "m" + i);
        }
        pull(subject, "explicit", "max=2&timeoutMs=0&ack=explicit").jsonPath("$.messages.length()").isEqualTo(2);
        assertEquals(0, consumer.stats(subject, "explicit").committedOffset());
        assertEquals(2, consumer.stats(subject, "explicit").inFlight());
        ack(subject, "explicit", "{\"offsets\":[1]}").jsonPath("$.committedOffset").isEqualTo(0);
        ack(subject, "explicit", "{\"offsets\":[0]}").jsonPath("$.committedOffset").isEqualTo(2);
        // unknown, not yet delivered and already acknowledged offsets are ignored
        ack(subject, "explicit", "{\"offsets\":[0, 3, 99]}").jsonPath("$.committedOffset").isEqualTo(2);
        ack(subject, "explicit", "{\"offsets\":[]}").jsonPath("$.committedOffset").isEqualTo(2);

        pull(subject, "auto", "max=3&timeoutMs=0&ack=auto").jsonPath("$.messages.length()").isEqualTo(3);
        GroupStats auto = consumer.stats(subject, "auto");
        assertEquals(3, auto.committedOffset(), auto::toString);
        assertEquals(0, auto.inFlight(), auto::toString);
    }

    @ParameterizedTest(name = "{0} -> 400 naming {1}")
    @CsvSource(delimiter = '|', value = {
        "max=0                | max",
        "max=1001             | max",
        "max=-5               | max",
        "max=abc              | max",
        "max=1.5              | max",
        "max=                 | max",
        "max=99999999999999999999 | max",
        "timeoutMs=-1         | timeoutMs",
        "timeoutMs=abc        | timeoutMs",
        "timeoutMs=2.5        | timeoutMs",
        "timeoutMs=300001     | timeoutMs",
        "timeoutMs=99999999999999999999 | timeoutMs",
        "ack=maybe            | ack",
        "ack=                 | ack"})
    void pullRejectsBadQueryParameters(String query, String parameter) {
        expect400(client.get().uri(baseUrl() + "/subjects/" + unique("q") + "/groups/g/messages?" + query)
                .exchange(), parameter);
    }

    @ParameterizedTest(name = "subject {0}, group {1} -> 400 naming {2}")
    @CsvSource({
        "bad subject, g,       subject",
        "a@b,         g,       subject",
        "ok,          bad:grp, group",
        "ok,          g%,      group"})
    void pullRejectsBadNames(String subject, String group, String parameter) {
        expect400(client.get().uri("/subjects/{s}/groups/{g}/messages?timeoutMs=0", subject, group).exchange(),
                parameter);
    }

    @Test
    void pullRejectsTooLongNames() {
        expect400(client.get().uri("/subjects/{s}/groups/g/messages?timeoutMs=0", "s".repeat(129)).exchange(),
                "subject");
        expect400(client.get().uri("/subjects/s/groups/{g}/messages?timeoutMs=0", "g".repeat(121)).exchange(),
                "group");
        // the longest legal names work
        pull("s".repeat(128), "g".repeat(120), "timeoutMs=0").jsonPath("$.status").isEqualTo("EMPTY");
    }

    // ------------------------------------------------------------------ POST .../ack

    @ParameterizedTest(name = "ack body {0} -> 400")
    @CsvSource(delimiter = '|', value = {
        "''",
        "{",
        "not json",
        "[1, 2]",
        "42",
        "{}",
        "{\"offset\": [1]}",
        "{\"offsets\": 1}",
        "{\"offsets\": null}",
        "{\"offsets\": [-1]}",
        "{\"offsets\": [1.5]}",
        "{\"offsets\": [\"1\"]}",
        "{\"offsets\": [null]}",
        "{\"offsets\": [1e3]}",
        "{\"offsets\": [99999999999999999999]}",
        "{\"offsets\": [1,]}"})
    void ackRejectsMalformedBodies(String body) {
        expect400(client.post().uri("/subjects/{s}/groups/g/ack", unique("ack"))
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange(), "offsets");
    }

    @Test
    void ackRejectsTooManyOffsetsAndBadNames() {
        StringBuilder many = new StringBuilder("{\"offsets\":[0");
        for (int i = 1; i <= RequestParams.MAX_ACK_OFFSETS; i++) {
            many.append(',').append(i);
        }
        expect400(client.post().uri("/subjects/{s}/groups/g/ack", unique("many"))
                .contentType(MediaType.APPLICATION_JSON).bodyValue(many.append("]}").toString()).exchange(), "offsets");
        expect400(client.post().uri("/subjects/{s}/groups/g/ack", "bad!").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"offsets\":[0]}").exchange(), "subject");
        expect400(client.post().uri("/subjects/s/groups/{g}/ack", "bad!").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"offsets\":[0]}").exchange(), "group");
    }

    @Test
    void ackAcceptsAnyContentType() {
        String subject = unique("ack-ct");
        append(subject, MediaType.TEXT_PLAIN, "x");
        pull(subject, "g", "timeoutMs=0");
        client.post().uri("/subjects/{s}/groups/g/ack", subject).contentType(MediaType.APPLICATION_FORM_URLENCODED)
                .bodyValue(withEpoch("{\"offsets\":[0]}")).exchange()
                .expectStatus().isOk().expectBody().jsonPath("$.committedOffset").isEqualTo(1);
    }

    // ------------------------------------------------------------------ GET .../stream

    @Test
    void streamIsServerSentEventsAndRejectsBadParameters() {
        expect400(client.get().uri("/subjects/{s}/groups/g/stream?ack=sometimes", unique("sse")).exchange(), "ack");
        expect400(client.get().uri("/subjects/{s}/groups/g/stream", "bad subject").exchange(), "subject");
        expect400(client.get().uri("/subjects/s/groups/{g}/stream", "bad group").exchange(), "group");

        String subject = unique("sse");
        append(subject, MediaType.TEXT_PLAIN, "first");
        var events = client.get().uri("/subjects/{s}/groups/g/stream", subject).accept(MediaType.TEXT_EVENT_STREAM)
                .exchange()
                .expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .returnResult(String.class).getResponseBody();
        // the body decoded as String gives each event's data line
        // the data line: the message, and the delivery epoch an explicit ack needs
        assertEquals("{\"offset\":0,\"payload\":\"first\",\"timestamp\":,\"attempt\":1,\"epoch\":\"" + consumer.store().epoch() + "\"}",
                events.blockFirst(Duration.ofSeconds(30)).replaceAll("\"timestamp\":\\d+", "\"timestamp\":"));
    }

    // ------------------------------------------------------------------ GET /status and /

    @Test
    void statusReportsGroupsAndConsumerGroupCpuShares() {
        String subject = unique("status");
        append(subject, MediaType.TEXT_PLAIN, "x");
        append(subject, MediaType.TEXT_PLAIN, "y");
        pull(subject, "status-a", "max=1&timeoutMs=0");
        pull(subject, "status-b", "timeoutMs=0&ack=auto");

        StatusReport report = client.get().uri("/status").exchange()
                .expectStatus().isOk().expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody(StatusReport.class).returnResult().getResponseBody();
        assertEquals("pull", report.scheduler().name()); // reactor.actor.name in application.properties
        assertEquals(2, report.scheduler().threads());
        StatusReport.GroupView a = group(report, subject, "status-a");
        assertEquals(2, a.endOffset());
        assertEquals(0, a.committedOffset());
        assertEquals(2, a.lag());
        assertEquals(1, a.inFlight());
        assertEquals(1, a.counters().delivered());
        assertEquals(1, a.counters().pulls());
        StatusReport.GroupView b = group(report, subject, "status-b");
        assertEquals(2, b.committedOffset());
        assertEquals(0, b.lag());
        assertEquals(2, b.counters().acknowledged());

        double sum = 0;
        for (StatusReport.ConsumerGroupCpu c : report.consumerGroups()) {
            assertEquals("cg." + c.group(), c.schedulingGroup());
            assertTrue(c.cpuShare() >= 0 && c.cpuShare() <= 1, c::toString);
            sum += c.cpuShare();
        }
        assertTrue(report.consumerGroups().stream().anyMatch(c -> c.group().equals("status-a")));
        assertEquals(1.0, sum, 1e-9, () -> "shares of all consumer groups add up to 1: " + report.consumerGroups());
    }

    @Test
    void statusPageIsServedAtTheRoot() {
        String html = client.get().uri("/").exchange()
                .expectStatus().isOk().expectHeader().contentTypeCompatibleWith(MediaType.TEXT_HTML)
                .expectBody(String.class).returnResult().getResponseBody();
        assertTrue(html.contains("fetch('/status')"), html);
    }

    // ------------------------------------------------------------------ helpers

    private WebTestClient.BodyContentSpec append(String subject, MediaType type, String body) {
        return client.post().uri("/subjects/{s}/messages", subject).contentType(type).bodyValue(body).exchange()
                .expectStatus().isCreated().expectBody();
    }

    private WebTestClient.BodyContentSpec pull(String subject, String group, String query) {
        return client.get().uri(baseUrl() + "/subjects/" + subject + "/groups/" + group + "/messages?" + query)
                .exchange().expectStatus().isOk().expectBody();
    }

    /** Acks with the store's current epoch, added to {@code body} ({@code {"offsets": ..}}). */
    private WebTestClient.BodyContentSpec ack(String subject, String group, String body) {
        return client.post().uri("/subjects/{s}/groups/{g}/ack", subject, group)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(withEpoch(body)).exchange()
                .expectStatus().isOk().expectBody();
    }

    private static void expect400(WebTestClient.ResponseSpec response, String parameter) {
        response.expectStatus().isBadRequest()
                .expectHeader().contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody()
                .jsonPath("$.status").isEqualTo(400)
                .jsonPath("$.parameter").isEqualTo(parameter)
                .jsonPath("$.message").value(String.class,
                        m -> assertTrue(m.startsWith(parameter), () -> "message names the parameter: " + m));
    }

    private static StatusReport.GroupView group(StatusReport report, String subject, String group) {
        return report.groups().stream().filter(g -> g.subject().equals(subject) && g.group().equals(group))
                .findFirst().orElseThrow(() -> new AssertionError(subject + "/" + group + " not in " + report));
    }
}
