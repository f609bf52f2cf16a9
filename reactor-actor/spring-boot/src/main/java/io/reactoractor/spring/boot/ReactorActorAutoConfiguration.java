package io.reactoractor.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.reactoractor.ActorMetrics;
import io.reactoractor.ActorScheduler;
import io.reactoractor.micrometer.MicrometerActorMetrics;
import io.reactoractor.pull.AsyncMessageStore;
import io.reactoractor.pull.InMemoryMessageStore;
import io.reactoractor.pull.MessageStore;
import io.reactoractor.pull.PullConsumer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Auto-configuration of reactor-actor from the {@code reactor.actor.*} properties
 * ({@link ReactorActorProperties}):
 * <ul>
 *   <li>an {@link ActorScheduler}, unless the application defines one;</li>
 *   <li>with {@code reactor.actor.pull.enabled=true}, a {@link PullConsumer} on it, on the application's
 *       {@link AsyncMessageStore} bean (a remote store, e.g. Redis), else its {@link MessageStore} bean,
 *       else an {@link InMemoryMessageStore}, unless the application defines
 *       a {@code PullConsumer};</li>
 *   <li>when Micrometer is on the class path and the context has one {@code MeterRegistry} (or a primary
 *       one), an {@link ActorMetrics} binding to it, so the {@code reactor.actor.*} meters are registered,
 *       unless the application defines an {@code ActorMetrics};</li>
 *   <li>two lifecycle beans that shut down what was created here: before the web server's graceful
 *       shutdown the consumer {@linkplain PullConsumer#quiesce() quiesces} (no long poll or stream holds the
 *       server up, requests are still served); once the server has stopped, the scheduler closes gracefully,
 *       given at most {@code reactor.actor.shutdown-timeout} for its queued work (the consumer's acknowledgements
 *       included), and then the consumer is disposed.</li>
 * </ul>
 * Ordered after Boot's Micrometer auto-configuration, so the registries it creates are known when the
 * metrics condition is evaluated.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.metrics.autoconfigure."
        + "CompositeMeterRegistryAutoConfiguration")
@EnableConfigurationProperties(ReactorActorProperties.class)
public class ReactorActorAutoConfiguration {

    /** Created by Spring. */
    public ReactorActorAutoConfiguration() {
    }

    @Bean
    ReactorActorShutdown reactorActorShutdown(ReactorActorProperties properties) {
        return new ReactorActorShutdown(properties.shutdownTimeout());
    }

    /** The first step of {@link ReactorActorShutdown}: a bean of its own for its own phase. */
    @Bean
    ReactorActorShutdown.Quiescence reactorActorQuiescence(ReactorActorShutdown shutdown) {
        return shutdown.quiescence();
    }

    /**
     * The scheduler (disposed on close even when the lifecycle never started, e.g. a refresh that failed
     * later; disposing again after the graceful shutdown does nothing).
     *
     * @param properties the settings
     * @param metrics    the metrics binding, if there is one
     * @param shutdown   disposes the scheduler once the web server has stopped
     * @return the started scheduler
     */
    @Bean(destroyMethod = "dispose")
    @ConditionalOnMissingBean
    public ActorScheduler actorScheduler(ReactorActorProperties properties, ObjectProvider<ActorMetrics> metrics,
            ReactorActorShutdown shutdown) {
        ActorScheduler.Builder builder = ActorScheduler.builder()
                .name(properties.name())
                .quota(properties.quota())
                .ordering(properties.ordering())
                .groupIdleTimeout(properties.groupIdleTimeout())
                .maxGroups(properties.maxGroups())
                .metrics(metrics.getIfAvailable(() -> ActorMetrics.NONE));
        if (properties.threads() != null) {
            builder.threads(properties.threads());
        }
        if (properties.preemptionGranularity() != null) {
            builder.preemptionGranularity(properties.preemptionGranularity());
        }
        if (properties.hogThreshold() != null) {
            builder.hogThreshold(properties.hogThreshold());
        }
        if (properties.maxCompensatingThreads() != null) {
            builder.maxCompensatingThreads(properties.maxCompensatingThreads());
        }
        ActorScheduler scheduler = builder.build();
        shutdown.manage(scheduler);
        return scheduler;
    }

    /**
     * The pull consumer and its store, only with {@code reactor.actor.pull.enabled=true} and no
     * {@code PullConsumer} of the application's.
     */
    @Configuration(proxyBeanMethods = false)
    @Conditional(PullEnabledCondition.class)
    @ConditionalOnMissingBean(PullConsumer.class)
    static class PullConsumerConfiguration {

        @Bean
        @ConditionalOnMissingBean({MessageStore.class, AsyncMessageStore.class})
        InMemoryMessageStore reactorActorMessageStore(ReactorActorProperties properties) {
            return InMemoryMessageStore.builder().retention(properties.pull().retention())
                    .maxSubjects(properties.pull().maxSubjects())
                    .maxCommittedOffsets(properties.pull().maxCommittedOffsets())
                    .offsetRetention(properties.pull().offsetRetention()).build();
        }

        @Bean(destroyMethod = "dispose")
        PullConsumer pullConsumer(ActorScheduler scheduler, ObjectProvider<MessageStore> store,
                ObjectProvider<AsyncMessageStore> asyncStore, ReactorActorProperties properties,
                ReactorActorShutdown shutdown) {
            ReactorActorProperties.Pull pull = properties.pull();
            if (pull.maxGroups() >= scheduler.maxGroups()) {
                // each consumer group's pairs run in a scheduler group cg.<group>, next to the default group: with
                // fewer scheduler groups than pairs a client met the scheduler's cap first, a 503 that named
                // neither setting, and pull.max-groups was never reached
                // the scheduler's cap is reactor.actor.max-groups only for the scheduler made here: an application's
                // own ActorScheduler bean (or a parent context's) has its builder's, which that property cannot change
                String cap = shutdown.manages(scheduler) ? "reactor.actor.max-groups, " + scheduler.maxGroups()
                        : "the maxGroups of the ActorScheduler bean " + scheduler.name() + ", not made from"
                                + " reactor.actor.max-groups: " + scheduler.maxGroups();
                throw new IllegalArgumentException("reactor.actor.pull.max-groups must be below the scheduler's"
                        + " maxGroups (" + cap + ") but was "
                        + pull.maxGroups() + ": each consumer group runs in a scheduler group of its own, next to the"
                        + " default group");
            }
            PullConsumer.Builder builder = PullConsumer.builder(scheduler);
            // an application's asynchronous (remote) store wins; else its MessageStore or the in-memory one.
            // getIfAvailable, not getIfUnique: two candidates without a @Primary fail with Spring's
            // NoUniqueBeanDefinitionException naming them, rather than falling through to the other kind
            AsyncMessageStore remote = asyncStore.getIfAvailable();
            if (remote != null) {
                builder.asyncStore(remote);
            } else {
                builder.store(store.getObject());
            }
            PullConsumer consumer = builder
                    .ackTimeout(pull.ackTimeout())
                    .maxWaitingPulls(pull.maxWaitingPulls())
                    .maxMessagesPerPull(pull.maxMessagesPerPull())
                    .maxBytesPerPull(pull.maxBytesPerPull().toBytes())
                    .idleTimeout(pull.idleTimeout())
                    .maxGroups(pull.maxGroups())
                    .build();
            shutdown.manage(consumer);
            return consumer;
        }
    }

    /**
     * The Micrometer binding. A class of its own, guarded by a condition on the class name: its bean
     * method names Micrometer types, so it is loaded only when Micrometer is on the class path.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    @ConditionalOnSingleCandidate(type = "io.micrometer.core.instrument.MeterRegistry")
    static class MicrometerConfiguration {

        @Bean
        @ConditionalOnMissingBean
        ActorMetrics reactorActorMetrics(MeterRegistry registry) {
            return MicrometerActorMetrics.of(registry);
        }
    }
    /**
     * {@code reactor.actor.pull.enabled} read as {@link ReactorActorProperties} binds it: Spring's boolean
     * conversion, so {@code true}, {@code on}, {@code yes} and {@code 1} (any case) create the consumer and
     * {@code false}, {@code off}, {@code no} and {@code 0} do not. {@code @ConditionalOnBooleanProperty} matches
     * only {@code true}, so with {@code yes} the bound setting said enabled while no consumer was created, and
     * the application's injection failed without naming the property. A value that is no boolean fails
     * start-up, naming the property, as its binding does.
     */
    static final class PullEnabledCondition extends SpringBootCondition {

        private static final String PROPERTY = ReactorActorProperties.PREFIX + ".pull.enabled";

        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            boolean enabled = Binder.get(context.getEnvironment()).bind(PROPERTY, Boolean.class).orElse(false);
            ConditionMessage.Builder message = ConditionMessage.forCondition("reactor-actor pull consumer");
            return enabled ? ConditionOutcome.match(message.because(PROPERTY + " is true"))
                    : ConditionOutcome.noMatch(message.because(PROPERTY + " is false or unset"));
        }
    }
}
