package io.reactoractor.samples.pull;

import java.time.Duration;

import io.reactoractor.pull.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code pull.redis.max-subjects} and {@code pull.redis.max-groups-per-subject}: subject and group names chosen
 * by clients cannot grow Redis without limit. An append that would create one stream more, and a poll of one
 * group more on a stream, get {@code 503} naming the limit and create nothing; a poll never creates a stream.
 * A context of its own on a real redis-server, with room for one subject and one group per subject.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"reactor.actor.threads=2", "pull.store=redis", "pull.redis.max-subjects=1",
                "pull.redis.max-groups-per-subject=1"})
@AutoConfigureWebTestClient
class RedisLimitsTest {

    private static TestRedis redis;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) throws Exception {
        redis = TestRedis.start(false);
        registry.add("pull.redis.uri", redis::uri);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        if (redis != null) {
            redis.close();
        }
    }

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

    private WebTestClient.ResponseSpec poll(String subject, String group) {
        return client.get().uri("/subjects/{s}/groups/{g}/messages?timeoutMs=0", subject, group).exchange();
    }

    @Test
    @Timeout(60)
    void newSubjectsAndGroupsPastTheLimitsAnswer503AndCreateNothing() throws Exception {
        poll("ghost", "g").expectStatus().isOk(); // a poll of a subject nobody appended to: creates nothing
        append("a").expectStatus().isCreated();
        append("b").expectStatus().isEqualTo(503)
                .expectBody()
                .jsonPath("$.status").isEqualTo(503)
                .jsonPath("$.limit").isEqualTo("pull.redis.max-subjects");
        append("a").expectStatus().isCreated(); // the existing subject goes on
        poll("a", "g1").expectStatus().isOk().expectBody().jsonPath("$.messages.length()").isEqualTo(2);
        poll("a", "g2").expectStatus().isEqualTo(503)
                .expectBody().jsonPath("$.limit").isEqualTo("pull.redis.max-groups-per-subject");
        org.junit.jupiter.api.Assertions.assertEquals(":0", redis.command("EXISTS pull:ghost"));
        org.junit.jupiter.api.Assertions.assertEquals(":0", redis.command("EXISTS pull:b"));
    }
}
