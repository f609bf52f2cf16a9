package io.reactoractor.samples.pull;

import java.time.Duration;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.InMemoryMessageStore;
import io.reactoractor.pull.PullConsumer;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

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
 * <p>Beans: one {@link ActorScheduler} (each consumer group's actors run in its scheduler group
 * {@code cg.<group>}, so groups share the CPU fairly) and one {@link PullConsumer} on an
 * {@link InMemoryMessageStore}. No Micrometer registry: Boot only provides one with the actuator,
 * which this sample does not use; {@code GET /status} shows the same figures.
 */
@SpringBootApplication
@EnableConfigurationProperties(PullServerProperties.class)
public class PullServerApplication {

    /** Name of the scheduler: its threads are {@code pull-1}, {@code pull-2}, ... */
    public static final String SCHEDULER_NAME = "pull";

    /**
     * Starts the server.
     *
     * @param args Spring Boot arguments, e.g. {@code --server.port=9090 --pull.ack-timeout=10s}
     */
    public static void main(String[] args) {
        SpringApplication.run(PullServerApplication.class, args);
    }

    /**
     * @param properties the settings
     * @return the scheduler running the consumer groups' actors (disposed by {@link #pullShutdown})
     */
    @Bean(destroyMethod = "dispose")
    ActorScheduler pullScheduler(PullServerProperties properties) {
        return ActorScheduler.builder().name(SCHEDULER_NAME).threads(properties.effectiveThreads()).build();
    }

    /**
     * @param scheduler  the scheduler
     * @param properties the settings
     * @return the consumer on a fresh embedded store
     */
    @Bean(destroyMethod = "dispose")
    PullConsumer pullConsumer(ActorScheduler scheduler, PullServerProperties properties) {
        return PullConsumer.builder(scheduler)
                .store(InMemoryMessageStore.builder().retention(properties.retention()).build())
                .ackTimeout(properties.ackTimeout())
                .maxWaitingPulls(properties.maxWaitingPulls())
                .maxMessagesPerPull(PullController.MAX_MESSAGES_PER_PULL)
                .maxBytesPerPull(properties.maxBytesPerPull().toBytes())
                .idleTimeout(properties.idleTimeout())
                .maxGroups(properties.maxGroups())
                .build();
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

    /**
     * Disposes the consumer, then the scheduler, <em>before</em> the web server's graceful shutdown:
     * otherwise the server would wait for every open long poll (up to its timeout) and every event
     * stream (forever) before stopping. Disposing the consumer answers waiting polls at once (503) and
     * ends the event streams, so the graceful shutdown that follows has nothing left to wait for.
     *
     * @param consumer  the consumer
     * @param scheduler the scheduler
     * @return the lifecycle bean
     */
    @Bean
    SmartLifecycle pullShutdown(PullConsumer consumer, ActorScheduler scheduler) {
        return new SmartLifecycle() {
            private volatile boolean running;

            @Override
            public void start() {
                running = true;
            }

            @Override
            public void stop() {
                running = false;
                consumer.dispose();
                // finish what the threads are doing (answering the polls just failed), bounded
                scheduler.disposeGracefully().timeout(Duration.ofSeconds(5))
                        .onErrorResume(e -> Mono.fromRunnable(scheduler::dispose))
                        .block();
            }

            @Override
            public boolean isRunning() {
                return running;
            }

            /**
             * Not pauseable: {@link #stop()} disposes the consumer and the scheduler for good, so a
             * context {@code pause()} (Spring's test context cache pauses the contexts a test class does
             * not use) must not call it; only the context's close does.
             */
            @Override
            public boolean isPauseable() {
                return false;
            }

            @Override
            public int getPhase() {
                // the highest phase stops first, ahead of the web server's graceful shutdown
                return SmartLifecycle.DEFAULT_PHASE;
            }
        };
    }
}
