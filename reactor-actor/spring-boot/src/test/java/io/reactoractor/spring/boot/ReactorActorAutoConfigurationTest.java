package io.reactoractor.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.ActorMetrics;
import io.reactoractor.ActorScheduler;
import io.reactoractor.micrometer.MicrometerActorMetrics;
import io.reactoractor.pull.InMemoryMessageStore;
import io.reactoractor.pull.MessageStore;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.pull.PullResult;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import reactor.core.Scannable;

/** What {@link ReactorActorAutoConfiguration} creates, from which properties, and when it backs off. */
class ReactorActorAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ReactorActorAutoConfiguration.class));

    @Test
    void defaultsCreateASchedulerWithTheLibrarysDefaultsAndNoConsumer() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(ActorScheduler.class)
                    .doesNotHaveBean(PullConsumer.class)
                    .doesNotHaveBean(MessageStore.class)
                    .doesNotHaveBean(ActorMetrics.class);
            ActorScheduler scheduler = context.getBean(ActorScheduler.class);
            ActorScheduler library = ActorScheduler.builder().build();
            try {
                assertThat(scheduler.name()).isEqualTo(library.name());
                assertThat(scheduler.threads()).isEqualTo(library.threads());
                assertThat(scheduler.quota()).isEqualTo(library.quota());
                assertThat(scheduler.ordering()).isEqualTo(library.ordering());
                assertThat(scheduler.groupIdleTimeout()).isEqualTo(library.groupIdleTimeout());
                assertThat(scheduler.maxGroups()).isEqualTo(library.maxGroups());
            } finally {
                library.dispose();
            }
            assertThat(scheduler.metrics()).isSameAs(ActorMetrics.NONE);
        });
    }

    @Test
    void pullEnabledCreatesAConsumerWithTheLibrarysDefaultsOnAnInMemoryStore() {
        runner.withPropertyValues("reactor.actor.threads=1", "reactor.actor.pull.enabled=true").run(context -> {
            assertThat(context).hasSingleBean(PullConsumer.class).hasSingleBean(InMemoryMessageStore.class);
            PullConsumer consumer = context.getBean(PullConsumer.class);
            assertThat(consumer.scheduler()).isSameAs(context.getBean(ActorScheduler.class));
            assertThat(consumer.store()).isSameAs(context.getBean(MessageStore.class));
            assertThat(((InMemoryMessageStore) consumer.store()).retention())
                    .isEqualTo(InMemoryMessageStore.DEFAULT_RETENTION);
            assertThat(((InMemoryMessageStore) consumer.store()).maxSubjects())
                    .isEqualTo(InMemoryMessageStore.DEFAULT_MAX_SUBJECTS);
            assertThat(((InMemoryMessageStore) consumer.store()).maxCommittedOffsets())
                    .isEqualTo(InMemoryMessageStore.DEFAULT_MAX_COMMITTED_OFFSETS);
            assertThat(((InMemoryMessageStore) consumer.store()).offsetRetention())
                    .isEqualTo(InMemoryMessageStore.DEFAULT_OFFSET_RETENTION);
            PullConsumer library = PullConsumer.builder(consumer.scheduler()).build();
            try {
                assertThat(consumer.ackTimeout()).isEqualTo(library.ackTimeout());
                assertThat(consumer.maxWaitingPulls()).isEqualTo(library.maxWaitingPulls());
                assertThat(consumer.maxMessagesPerPull()).isEqualTo(library.maxMessagesPerPull());
                assertThat(consumer.maxBytesPerPull()).isEqualTo(library.maxBytesPerPull());
                assertThat(consumer.idleTimeout()).isEqualTo(library.idleTimeout());
                assertThat(consumer.maxGroups()).isEqualTo(library.maxGroups());
            } finally {
                library.dispose();
            }

            consumer.append("orders", new byte[] {1});
            PullResult result = consumer.pullOnce("orders", "billing", 10).block(Duration.ofSeconds(10));
            assertThat(result.messages()).hasSize(1);
        });
    }

    @Test
    void pullDisabledExplicitlyCreatesNoConsumer() {
        runner.withPropertyValues("reactor.actor.pull.enabled=false").run(context ->
                assertThat(context).hasSingleBean(ActorScheduler.class).doesNotHaveBean(PullConsumer.class));
    }

    @Test
    void pullEnabledIsReadAsItsPropertyBinds() {
        // Spring's boolean conversion: the bound setting and the consumer's existence never disagree
        for (String on : new String[] {"true", "TRUE", "on", "yes", "1"}) {
            runner.withPropertyValues("reactor.actor.threads=1", "reactor.actor.pull.enabled=" + on).run(context -> {
                assertThat(context.getBean(ReactorActorProperties.class).pull().enabled()).as(on).isTrue();
                assertThat(context).as(on).hasSingleBean(PullConsumer.class);
            });
        }
        for (String off : new String[] {"false", "off", "no", "0"}) {
            runner.withPropertyValues("reactor.actor.threads=1", "reactor.actor.pull.enabled=" + off).run(context -> {
                assertThat(context.getBean(ReactorActorProperties.class).pull().enabled()).as(off).isFalse();
                assertThat(context).as(off).doesNotHaveBean(PullConsumer.class);
            });
        }
        runner.withPropertyValues("reactor.actor.pull.enabled=maybe").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("reactor.actor.pull.enabled");
        });
    }

    @Test
    void propertiesAreApplied() {
        runner.withBean(SimpleMeterRegistry.class).withPropertyValues(
                "reactor.actor.name=tenants",
                "reactor.actor.threads=1",
                "reactor.actor.quota=2ms",
                "reactor.actor.preemption-granularity=1ms",
                "reactor.actor.max-compensating-threads=3",
                "reactor.actor.ordering=fifo",
                "reactor.actor.group-idle-timeout=90s",
                "reactor.actor.max-groups=17",
                "reactor.actor.pull.enabled=true",
                "reactor.actor.pull.retention=50",
                "reactor.actor.pull.ack-timeout=7s",
                "reactor.actor.pull.max-waiting-pulls=11",
                "reactor.actor.pull.max-messages-per-pull=12",
                "reactor.actor.pull.max-bytes-per-pull=2KB",
                "reactor.actor.pull.idle-timeout=0",
                "reactor.actor.pull.max-groups=13",
                "reactor.actor.pull.max-subjects=14",
                "reactor.actor.pull.max-committed-offsets=15",
                "reactor.actor.pull.offset-retention=16h").run(context -> {
                    ActorScheduler scheduler = context.getBean(ActorScheduler.class);
                    assertThat(scheduler.name()).isEqualTo("tenants");
                    assertThat(Scannable.from(scheduler).name()).isEqualTo("tenants");
                    assertThat(scheduler.threads()).isEqualTo(1);
                    assertThat(scheduler.quota()).isEqualTo(Duration.ofMillis(2));
                    assertThat(scheduler.preemptionGranularity()).isEqualTo(Duration.ofMillis(1));
                    assertThat(scheduler.ordering()).isEqualTo(ActorScheduler.Ordering.FIFO);
                    assertThat(scheduler.groupIdleTimeout()).isEqualTo(Duration.ofSeconds(90));
                    assertThat(scheduler.maxGroups()).isEqualTo(17);
                    // no getter for it: the pool's maximum is the permanent plus the compensating threads
                    assertThat(context.getBean(MeterRegistry.class).get("reactor.actor.pool.max")
                            .tag("scheduler", "tenants").gauge().value()).isEqualTo(1 + 3);

                    PullConsumer consumer = context.getBean(PullConsumer.class);
                    assertThat(((InMemoryMessageStore) consumer.store()).retention()).isEqualTo(50);
                    assertThat(((InMemoryMessageStore) consumer.store()).maxSubjects()).isEqualTo(14);
                    assertThat(((InMemoryMessageStore) consumer.store()).maxCommittedOffsets()).isEqualTo(15);
                    assertThat(((InMemoryMessageStore) consumer.store()).offsetRetention()).isEqualTo(Duration.ofHours(16));
                    assertThat(consumer.ackTimeout()).isEqualTo(Duration.ofSeconds(7));
                    assertThat(consumer.maxWaitingPulls()).isEqualTo(11);
                    assertThat(consumer.maxMessagesPerPull()).isEqualTo(12);
                    assertThat(consumer.maxBytesPerPull()).isEqualTo(2048);
                    assertThat(consumer.idleTimeout()).isEqualTo(Duration.ZERO);
                    assertThat(consumer.maxGroups()).isEqualTo(13);
                });
    }

    /**
     * The hog threshold has no getter: a 300 ms task is a hog at the default (10 × quota = 50 ms), and
     * not with {@code hog-threshold=10s} (checked every 2.5 s, so not even looked at).
     */
    @Test
    void hogThresholdIsApplied() {
        ApplicationContextRunner oneThread = runner.withPropertyValues("reactor.actor.threads=1");
        oneThread.run(context -> assertThat(hogsAfterA300msTask(context.getBean(ActorScheduler.class))).isPositive());
        oneThread.withPropertyValues("reactor.actor.hog-threshold=10s")
                .run(context -> assertThat(hogsAfterA300msTask(context.getBean(ActorScheduler.class))).isZero());
    }

    private static long hogsAfterA300msTask(ActorScheduler scheduler) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        scheduler.schedule(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            done.countDown();
        });
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        return scheduler.stats().hogsDetected();
    }

    /** A quota under the granularity's default, set alone, is valid: the default follows it (a probe found it failing). */
    @Test
    void aShortQuotaAloneIsValidTheGranularityDefaultFollowsIt() {
        runner.withPropertyValues("reactor.actor.quota=200us").run(context -> {
            assertThat(context).hasNotFailed();
            ActorScheduler scheduler = context.getBean(ActorScheduler.class);
            assertThat(scheduler.quota()).isEqualTo(Duration.ofNanos(200_000));
            assertThat(scheduler.preemptionGranularity()).isEqualTo(Duration.ofNanos(200_000));
        });
        runner.run(context -> assertThat(context.getBean(ActorScheduler.class).preemptionGranularity())
                .isEqualTo(Duration.ofNanos(500_000)));
    }

    @Test
    void invalidValuesFailAtStartUpNamingTheProperty() {
        assertStartUpFails("reactor.actor.threads must be >= 1 but was 0", "reactor.actor.threads=0");
        assertStartUpFails("reactor.actor.name must have 1 to 64 characters", "reactor.actor.name= ");
        // (the runner trims values, as a properties file does not trim a trailing '\r': the control is inside)
        assertStartUpFails("reactor.actor.name must not contain control characters but was 'app\\r1'",
                "reactor.actor.name=app\r1");
        assertStartUpFails("reactor.actor.name must not contain control characters", "reactor.actor.name=a\tb");
        assertStartUpFails("reactor.actor.quota must be positive but was PT0S", "reactor.actor.quota=0ms");
        assertStartUpFails("reactor.actor.preemption-granularity must not exceed reactor.actor.quota",
                "reactor.actor.preemption-granularity=6ms");
        assertStartUpFails("reactor.actor.hog-threshold must be at least reactor.actor.quota",
                "reactor.actor.hog-threshold=1ms");
        assertStartUpFails("reactor.actor.max-compensating-threads must be >= 0 but was -1",
                "reactor.actor.max-compensating-threads=-1");
        runner.withPropertyValues("reactor.actor.threads=2", "reactor.actor.max-compensating-threads=32766")
                .run(context -> assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                        .hasMessageStartingWith("reactor.actor.max-compensating-threads must be at most 32767 minus"
                                + " reactor.actor.threads (2) but was 32766"));
        assertStartUpFails("reactor.actor.quota must be at most 1 day", "reactor.actor.quota=2d");
        assertStartUpFails("reactor.actor.hog-threshold must be at most 1 day", "reactor.actor.hog-threshold=25h");
        assertStartUpFails("reactor.actor.shutdown-timeout must be positive", "reactor.actor.shutdown-timeout=-1s");
        assertStartUpFails("reactor.actor.shutdown-timeout must be at most 1 day", "reactor.actor.shutdown-timeout=300000d");
        assertStartUpFails("reactor.actor.group-idle-timeout must be >= 0", "reactor.actor.group-idle-timeout=-1s");
        assertStartUpFails("reactor.actor.group-idle-timeout must be at most 1 day", "reactor.actor.group-idle-timeout=2d");
        assertStartUpFails("reactor.actor.max-groups must be >= 1 but was 0", "reactor.actor.max-groups=0");
        assertStartUpFails("reactor.actor.pull.max-groups must be >= 1 but was 0", "reactor.actor.pull.max-groups=0");
        assertStartUpFails("reactor.actor.pull.max-subjects must be >= 1 but was 0", "reactor.actor.pull.max-subjects=0");
        assertStartUpFails("reactor.actor.pull.max-committed-offsets must be >= 1 but was 0",
                "reactor.actor.pull.max-committed-offsets=0");
        assertStartUpFails("reactor.actor.pull.offset-retention must be positive", "reactor.actor.pull.offset-retention=0s");
        assertStartUpFails("reactor.actor.pull.offset-retention must be at most 73 years",
                "reactor.actor.pull.offset-retention=36500d");
        assertStartUpFails("reactor.actor.pull.ack-timeout must be positive", "reactor.actor.pull.ack-timeout=0s");
        assertStartUpFails("reactor.actor.pull.idle-timeout must be >= 0", "reactor.actor.pull.idle-timeout=-1s");
        assertStartUpFails("reactor.actor.pull.max-bytes-per-pull must be >= 1B",
                "reactor.actor.pull.max-bytes-per-pull=0B");
    }

    /**
     * Each consumer group runs in a scheduler group {@code cg.<group>}: with no more scheduler groups than pairs, a
     * client met the scheduler's cap (a 503 naming neither setting) before {@code pull.max-groups} was reached.
     */
    @Test
    void aPullGroupCapTheSchedulersGroupCapCannotHoldFailsAtStartUpNamingBoth() {
        runner.withPropertyValues("reactor.actor.pull.enabled=true", "reactor.actor.max-groups=3",
                "reactor.actor.pull.max-groups=3").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessageStartingWith("reactor.actor.pull.max-groups must be below the scheduler's"
                                    + " maxGroups (reactor.actor.max-groups, 3) but was 3");
                });
        runner.withPropertyValues("reactor.actor.pull.enabled=true", "reactor.actor.max-groups=4",
                "reactor.actor.pull.max-groups=3").run(context -> assertThat(context).hasNotFailed());
        runner.withPropertyValues("reactor.actor.pull.enabled=false", "reactor.actor.max-groups=3",
                "reactor.actor.pull.max-groups=3").run(context -> assertThat(context).hasNotFailed());
    }

    /** With the application's own scheduler, the cap that is too small is its builder's: the message says so. */
    @Test
    void aPullGroupCapTheApplicationsSchedulerCannotHoldNamesThatScheduler() {
        io.reactoractor.ActorScheduler own = io.reactoractor.ActorScheduler.builder().name("own-cap").threads(1)
                .maxGroups(100).build();
        try {
            runner.withBean(io.reactoractor.ActorScheduler.class, () -> own)
                    .withPropertyValues("reactor.actor.pull.enabled=true", "reactor.actor.max-groups=1000000",
                            "reactor.actor.pull.max-groups=500")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                                .isInstanceOf(IllegalArgumentException.class)
                                .hasMessageStartingWith("reactor.actor.pull.max-groups must be below the scheduler's"
                                        + " maxGroups (the maxGroups of the ActorScheduler bean own-cap, not made from"
                                        + " reactor.actor.max-groups: 100) but was 500");
                    });
        } finally {
            own.dispose();
        }
    }

    private void assertStartUpFails(String message, String property) {
        runner.withPropertyValues(property).run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith(message);
        });
    }

    @Test
    void applicationBeansWin() {
        runner.withUserConfiguration(OwnBeans.class).withPropertyValues("reactor.actor.pull.enabled=true")
                .run(context -> {
                    assertThat(context).hasSingleBean(ActorScheduler.class).hasSingleBean(PullConsumer.class)
                            .doesNotHaveBean(InMemoryMessageStore.class);
                    assertThat(context.getBean(ActorScheduler.class).name()).isEqualTo("own");
                    assertThat(context.getBean(PullConsumer.class).maxGroups()).isEqualTo(7);
                });
    }

    @Test
    void aConsumerIsBuiltOnTheApplicationsSchedulerAndStore() {
        runner.withPropertyValues("reactor.actor.pull.enabled=true")
                .withBean(ActorScheduler.class, () -> ActorScheduler.builder().name("own").threads(1).build())
                .withBean(MessageStore.class, () -> InMemoryMessageStore.builder().retention(3).build())
                .run(context -> {
                    PullConsumer consumer = context.getBean(PullConsumer.class);
                    assertThat(consumer.scheduler().name()).isEqualTo("own");
                    assertThat(consumer.store()).isSameAs(context.getBean(MessageStore.class));
                    assertThat(((InMemoryMessageStore) consumer.store()).retention()).isEqualTo(3);
                    context.getBean(ActorScheduler.class).dispose();
                });
    }

    @Test
    void anAsynchronousStoreOfTheApplicationsIsUsedAndNoInMemoryStoreIsMade() {
        io.reactoractor.pull.AsyncMessageStore remote =
                io.reactoractor.pull.AsyncMessageStore.of(InMemoryMessageStore.builder().retention(5).build());
        runner.withPropertyValues("reactor.actor.pull.enabled=true")
                .withBean(io.reactoractor.pull.AsyncMessageStore.class, () -> remote)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(InMemoryMessageStore.class);
                    PullConsumer consumer = context.getBean(PullConsumer.class);
                    assertThat(consumer.asyncStore()).isSameAs(remote);
                    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, consumer::store);
                });
    }

    /** Two asynchronous stores and no {@code @Primary}: Spring's ambiguity error, not "no MessageStore". */
    @Test
    void twoAsynchronousStoresWithoutAPrimaryFailNamingTheAmbiguity() {
        runner.withPropertyValues("reactor.actor.pull.enabled=true")
                .withBean("remoteA", io.reactoractor.pull.AsyncMessageStore.class,
                        () -> io.reactoractor.pull.AsyncMessageStore.of(InMemoryMessageStore.builder().build()))
                .withBean("remoteB", io.reactoractor.pull.AsyncMessageStore.class,
                        () -> io.reactoractor.pull.AsyncMessageStore.of(InMemoryMessageStore.builder().build()))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(org.springframework.beans.factory.NoUniqueBeanDefinitionException.class)
                            .hasMessageContaining("remoteA").hasMessageContaining("remoteB");
                });
    }

    @Test
    void metricsAreBoundToTheApplicationsRegistry() {
        runner.withBean(SimpleMeterRegistry.class)
                .withPropertyValues("reactor.actor.name=metered", "reactor.actor.threads=1",
                        "reactor.actor.pull.enabled=true")
                .run(context -> {
                    assertThat(context).hasSingleBean(ActorMetrics.class);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("reactor.actor.pool.core").tag("scheduler", "metered").gauge().value())
                            .isEqualTo(1);
                    PullConsumer consumer = context.getBean(PullConsumer.class);
                    consumer.pullOnce("orders", "billing", 1).block(Duration.ofSeconds(10));
                    assertThat(registry.get("reactor.actor.pull.requests").tag("subject", "orders")
                            .tag("group", "billing").functionCounter().count()).isEqualTo(1);
                });
    }

    /**
     * With Boot's own Micrometer auto-configuration (as an application with the actuator has it): the binding
     * is ordered after it, so it finds the registry Boot made, and the application's {@code MeterFilter} beans
     * (Boot applies them to its registries) reach the library's meters. A wrong {@code afterName} would
     * leave the scheduler unmetered here.
     */
    @Test
    void metricsAreBoundToTheRegistryOfBootsMicrometerAutoConfiguration() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
                        org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration.class,
                        org.springframework.boot.micrometer.metrics.autoconfigure.export.simple
                                .SimpleMetricsExportAutoConfiguration.class,
                        ReactorActorAutoConfiguration.class))
                .withBean(io.micrometer.core.instrument.config.MeterFilter.class,
                        () -> io.micrometer.core.instrument.config.MeterFilter.commonTags(
                                java.util.List.of(io.micrometer.core.instrument.Tag.of("app", "billing"))))
                .withPropertyValues("reactor.actor.name=booted", "reactor.actor.threads=1")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(ActorMetrics.class);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("reactor.actor.pool.core").tag("scheduler", "booted").tag("app", "billing")
                            .gauge().value()).isEqualTo(1);
                });
    }

    @Test
    void withoutMicrometerTheContextStartsUnmetered() {
        // a registry bean is there, but its classes are hidden from the auto-configuration's condition
        runner.withBean(SimpleMeterRegistry.class).withClassLoader(new FilteredClassLoader("io.micrometer"))
                .withPropertyValues("reactor.actor.threads=1", "reactor.actor.pull.enabled=true")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(PullConsumer.class)
                            .doesNotHaveBean(ActorMetrics.class);
                    assertThat(context.getBean(ActorScheduler.class).metrics()).isSameAs(ActorMetrics.NONE);
                    assertThat(context.getBean(MeterRegistry.class).find("reactor.actor.pool.core").meters())
                            .isEmpty();
                });
    }

    @Test
    void anApplicationsMetricsBindingWins() {
        ActorMetrics own = MicrometerActorMetrics.of(new SimpleMeterRegistry());
        runner.withBean(SimpleMeterRegistry.class).withBean(ActorMetrics.class, () -> own)
                .withPropertyValues("reactor.actor.threads=1")
                .run(context -> assertThat(context.getBean(ActorScheduler.class).metrics()).isSameAs(own));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBeans {
        @Bean(destroyMethod = "dispose")
        ActorScheduler ownScheduler() {
            return ActorScheduler.builder().name("own").threads(1).build();
        }

        @Bean(destroyMethod = "dispose")
        PullConsumer ownConsumer(ActorScheduler scheduler) {
            return PullConsumer.builder(scheduler).maxGroups(7).build();
        }
    }
}
