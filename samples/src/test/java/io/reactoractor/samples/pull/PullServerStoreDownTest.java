package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import io.reactoractor.pull.AsyncMessageStore;
import io.reactoractor.pull.MessageStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * A remote store that is down (every call fails, as Lettuce fails commands while Redis is unreachable):
 * appends and long polls are answered at once with 503 and a JSON error, never left waiting. Its own app
 * instance, with an {@link AsyncMessageStore} bean that always fails.
 */
class PullServerStoreDownTest {

    /** Every call fails at once. */
    static final class DownStore implements AsyncMessageStore {
        private static <T> Mono<T> down() {
            return Mono.error(new java.io.UncheckedIOException(new java.net.ConnectException("Connection refused")));
        }

        @Override
        public Mono<Long> append(String subject, byte[] payload) {
            return down();
        }

        @Override
        public Mono<List<io.reactoractor.pull.Message>> fetch(String subject, String group, long fromOffset,
                int maxMessages) {
            return down();
        }

        @Override
        public Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed) {
            return down();
        }

        @Override
        public Mono<Reclaimed> reclaim(String subject, String group, long cursor, Duration minIdle, int maxMessages) {
            return down();
        }

        @Override
        public Mono<Position> position(String subject, String group) {
            return down();
        }

        @Override
        public Disposable addAppendListener(MessageStore.AppendListener listener) {
            return () -> { };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Down {
        @Bean
        AsyncMessageStore downStore() {
            return new DownStore();
        }
    }

    @Test
    @Timeout(60)
    void appendsAndPollsFailFastWith503AndJson() {
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(PullServerApplication.class, Down.class,
                // not the JVM-wide Netty resources: closing this app must not stop other test contexts' servers
                PullServerShutdownTest.PrivateNettyResources.class)
                .run("--server.port=0", "--reactor.actor.threads=2")) {
            WebClient web = WebClient.create("http://localhost:" + app.getEnvironment().getProperty("local.server.port"));
            var append = web.post().uri("/subjects/orders/messages").bodyValue("hello")
                    .exchangeToMono(r -> r.bodyToMono(String.class).map(b -> r.statusCode().value() + " " + b))
                    .block(Duration.ofSeconds(20));
            assertTrue(append.startsWith("503 {"), append);
            assertTrue(append.contains("\"status\":503") && append.contains("Connection refused"), append);
            // a 60 s long poll: answered now, not after its timeout
            var poll = web.get().uri("/subjects/orders/groups/g/messages?timeoutMs=60000")
                    .exchangeToMono(r -> r.bodyToMono(String.class).map(b -> r.statusCode().value() + " " + b))
                    .block(Duration.ofSeconds(20));
            assertTrue(poll.startsWith("503 {"), poll);
            assertTrue(poll.contains("message store failed"), poll);
            // stats are published by the pair's actor after its change (eventually consistent): wait for it
            var consumer = app.getBean(io.reactoractor.pull.PullConsumer.class);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (consumer.stats("orders", "g").waitingPulls() != 0 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L);
            }
            assertEquals(0, consumer.stats("orders", "g").waitingPulls());
        }
    }
}
