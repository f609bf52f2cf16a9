package io.reactoractor.samples.pull;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.InMemoryMessageStore;
import io.reactoractor.pull.PullConsumer;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;

/**
 * The long-polling pull consumer over HTTP: a Spring Boot WebFlux app on the embedded in-memory store,
 * started with one command and no other server.
 *
 * <pre>
 * mvn -B -q -pl samples -am -DskipTests package exec:java \
 *     -Ddemo.mainClass=io.reactoractor.samples.pull.PullServerApplication
 * </pre>
 *
 * <p>Endpoints (see {@link PullController}): {@code POST /subjects/{s}/messages},
 * {@code GET /subjects/{s}/groups/{g}/messages} (long poll), {@code POST /subjects/{s}/groups/{g}/ack},
 * {@code GET /subjects/{s}/groups/{g}/stream} (server-sent events), {@code GET /status}, and a status
 * page at {@code /}. Port 8080 unless {@code -Dserver.port=..}.
 *
 * <p>Beans: the {@link ActorScheduler} and the {@link PullConsumer} (on an {@link InMemoryMessageStore})
 * come from reactor-actor's Spring Boot auto-configuration ({@code reactor-actor-spring-boot}), set by
 * {@code reactor.actor.*} in {@code application.properties}: each consumer group's actors run in the
 * scheduler group {@code cg.<group>}, so groups share the CPU fairly; at shutdown the consumer quiesces
 * before the web server's graceful shutdown (open long polls are answered, streams end, requests are still
 * served), and the consumer and the scheduler are disposed after the server stopped. This class adds only the HTTP settings ({@code pull.*}). No Micrometer registry: Boot only provides
 * one with the actuator, which this sample does not use; {@code GET /status} shows the same figures.
 */
@SpringBootApplication
@EnableConfigurationProperties(PullServerProperties.class)
public class PullServerApplication {

    /**
     * Starts the server.
     *
     * @param args Spring Boot arguments, e.g. {@code --server.port=9090 --reactor.actor.pull.ack-timeout=10s}
     */
    public static void main(String[] args) {
        SpringApplication.run(PullServerApplication.class, args);
    }

    /**
     * Bounds what a client can hold on the server without sending a request: a connection idle between
     * requests ({@code pull.connection-idle-timeout}), a request whose headers or body stop arriving
     * ({@code pull.request-read-timeout}), a request that takes too long to arrive in full
     * ({@code pull.request-timeout}, e.g. {@code Content-Length: 10^12} and a trickle). Netty closes such
     * connections. None of them applies while the server prepares an answer, so long polls and event
     * streams are not cut.
     *
     * @param properties the settings
     * @return the Reactor Netty customizer Boot applies to its server
     */
    @Bean
    NettyServerCustomizer pullConnectionTimeouts(PullServerProperties properties) {
        return server -> server
                .idleTimeout(properties.connectionIdleTimeout())
                .readTimeout(properties.requestReadTimeout())
                .requestTimeout(properties.requestTimeout());
    }
}
