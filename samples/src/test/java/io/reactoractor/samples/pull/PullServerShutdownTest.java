package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.PullConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Shutdown does not wait for long polls: closing the app answers a waiting poll at once (200,
 * {@code TIMED_OUT}, as at its timeout), ends open event streams, and disposes the scheduler once the server
 * stopped. Its own app instance, started and closed here.
 */
class PullServerShutdownTest {

    /**
     * Boot's default Reactor Netty resources are the JVM-wide ones, disposed when an app closes: that
     * would also stop the servers of the other test contexts still cached in this JVM.
     */
    @Configuration(proxyBeanMethods = false)
    static class PrivateNettyResources {
        @Bean
        ReactorResourceFactory reactorResourceFactory() {
            ReactorResourceFactory factory = new ReactorResourceFactory();
            factory.setUseGlobalResources(false);
            return factory;
        }
    }

    @Test
    @Timeout(60)
    void closingTheAppAnswersWaitingPollsAndDisposesTheScheduler() throws Exception {
        ConfigurableApplicationContext app = new SpringApplicationBuilder(PullServerApplication.class,
                PrivateNettyResources.class).run("--server.port=0", "--reactor.actor.threads=2");
        String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
        ActorScheduler scheduler = app.getBean(ActorScheduler.class);
        WebClient web = WebClient.create(base);

        var poll = web.get().uri("/subjects/quiet/groups/g/messages?timeoutMs=60000")
                .exchangeToMono(r -> r.bodyToMono(String.class).map(body -> r.statusCode() + " " + body)).toFuture();
        var stream = web.get().uri("/subjects/quiet/groups/s/stream").retrieve().bodyToFlux(String.class)
                .then(Mono.just("completed")).toFuture();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        PullConsumer consumer = app.getBean(PullConsumer.class);
        while (consumer.stats("quiet", "g").waitingPulls() < 1 || consumer.stats("quiet", "s").waitingPulls() < 1) {
            assertTrue(System.nanoTime() < deadline, "poll and stream never waited: " + consumer.stats());
            Thread.sleep(5);
        }

        long start = System.nanoTime();
        app.close();
        long closeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        String answer = poll.get(20, TimeUnit.SECONDS);
        assertTrue(answer.startsWith(HttpStatus.OK + " ") && answer.contains("TIMED_OUT"), answer);
        assertEquals("completed", stream.get(20, TimeUnit.SECONDS));
        assertTrue(scheduler.isDisposed());
        // far below the 60 s poll timeout and Boot's 30 s graceful-shutdown limit
        assertTrue(closeMs < Duration.ofSeconds(15).toMillis(), () -> "close took " + closeMs + " ms");
    }
}
