package io.reactoractor.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.pull.PullResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Closing the application shuts down what the auto-configuration created: the consumer quiesces before the
 * web server's graceful shutdown (phase {@code DEFAULT_PHASE - 1024}), consumer and scheduler are disposed
 * after the server stopped ({@code DEFAULT_PHASE - 2048}), the scheduler's wait bounded.
 */
@Timeout(60)
class ReactorActorShutdownTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ReactorActorAutoConfiguration.class))
            .withPropertyValues("reactor.actor.threads=1", "reactor.actor.pull.enabled=true");

    @Test
    void closingTheContextAnswersWaitingPollsAndDisposesConsumerAndScheduler() throws Exception {
        ActorScheduler[] scheduler = new ActorScheduler[1];
        PullConsumer[] consumer = new PullConsumer[1];
        @SuppressWarnings("unchecked")
        CompletableFuture<PullResult>[] poll = new CompletableFuture[1];
        runner.run(context -> {
            scheduler[0] = context.getBean(ActorScheduler.class);
            consumer[0] = context.getBean(PullConsumer.class);
            poll[0] = aWaitingPoll(consumer[0]);
            assertThat(scheduler[0].isDisposed()).isFalse();
        });
        // the runner closed the context: the five-minute poll was answered long before, as at its timeout
        assertThat(poll[0]).succeedsWithin(Duration.ofSeconds(10))
                .extracting(PullResult::status).isEqualTo(PullResult.Status.TIMED_OUT);
        assertThat(consumer[0].isDisposed()).isTrue();
        assertThat(scheduler[0].isDisposed()).isTrue();
    }

    /** A five-minute long poll of {@code consumer}, returned once it waits. */
    private static CompletableFuture<PullResult> aWaitingPoll(PullConsumer consumer) throws InterruptedException {
        CompletableFuture<PullResult> poll = consumer.pull("quiet", "g", 1, Duration.ofMinutes(5)).toFuture();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (consumer.stats("quiet", "g").waitingPulls() < 1) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            Thread.sleep(5);
        }
        return poll;
    }

    /** Stands for the web server's two lifecycle beans: its graceful shutdown, then its stop. */
    static final class WebServerPhase implements org.springframework.context.SmartLifecycle {
        final int phase;
        final Runnable atStop;
        volatile boolean running;

        WebServerPhase(int phase, Runnable atStop) {
            this.phase = phase;
            this.atStop = atStop;
        }

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            running = false;
            atStop.run();
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return phase;
        }
    }

    @Test
    void theConsumerQuiescesBeforeTheGracefulShutdownAndAllIsDisposedAfterTheServerStopped() {
        java.util.List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        ActorScheduler[] scheduler = new ActorScheduler[1];
        PullConsumer[] consumer = new PullConsumer[1];
        runner.withBean("gracefulShutdown", WebServerPhase.class,
                        () -> new WebServerPhase(org.springframework.context.SmartLifecycle.DEFAULT_PHASE - 1024, () -> {
                            // requests the graceful shutdown lets finish are served: nothing is disposed yet
                            seen.add("graceful: quiescing " + consumer[0].isQuiescing() + ", disposed "
                                    + consumer[0].isDisposed() + "/" + scheduler[0].isDisposed() + ", pull-once "
                                    + consumer[0].pullOnce("s", "g", 1).block(Duration.ofSeconds(10)).status());
                        }))
                .withBean("webServerStop", WebServerPhase.class,
                        () -> new WebServerPhase(org.springframework.context.SmartLifecycle.DEFAULT_PHASE - 2048, () ->
                                seen.add("server stop: disposed " + consumer[0].isDisposed() + "/"
                                        + scheduler[0].isDisposed())))
                .run(context -> {
                    scheduler[0] = context.getBean(ActorScheduler.class);
                    consumer[0] = context.getBean(PullConsumer.class);
                    assertThat(consumer[0].isQuiescing()).isFalse();
                });
        assertThat(seen).containsExactly("graceful: quiescing true, disposed false/false, pull-once EMPTY",
                "server stop: disposed false/false");
        assertThat(consumer[0].isDisposed()).isTrue();
        assertThat(scheduler[0].isDisposed()).isTrue();
        assertThat(ReactorActorShutdown.Quiescence.PHASE)
                .isGreaterThan(org.springframework.context.SmartLifecycle.DEFAULT_PHASE - 1024);
        assertThat(ReactorActorShutdown.PHASE).isLessThan(org.springframework.context.SmartLifecycle.DEFAULT_PHASE - 2048);
    }

    @Test
    void anApplicationsOwnConsumerIsLeftToTheApplication() {
        ActorScheduler own = ActorScheduler.builder().name("own-consumer").threads(1).build();
        PullConsumer ownConsumer = PullConsumer.builder(own).build();
        try {
            runner.withBean(PullConsumer.class, () -> ownConsumer).run(context ->
                    assertThat(context.getBean(PullConsumer.class)).isSameAs(ownConsumer));
            assertThat(ownConsumer.isQuiescing()).isFalse();
            assertThat(ownConsumer.isDisposed()).isFalse();
        } finally {
            ownConsumer.dispose();
            own.dispose();
        }
    }

    @Test
    void aSchedulerThatDoesNotFinishWithinTheShutdownTimeoutIsDisposedAtOnce() throws Exception {
        ActorScheduler[] scheduler = new ActorScheduler[1];
        CountDownLatch started = new CountDownLatch(1);
        long[] closeMillis = new long[1];
        runner.withPropertyValues("reactor.actor.shutdown-timeout=200ms").run(context -> {
            scheduler[0] = context.getBean(ActorScheduler.class);
            // a task busy for 3 s, then queued work behind it: a graceful dispose would wait for both
            scheduler[0].schedule(() -> {
                started.countDown();
                sleep(3_000);
            });
            scheduler[0].schedule(() -> sleep(3_000));
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            long start = System.nanoTime();
            context.close();
            closeMillis[0] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        });
        assertThat(scheduler[0].isDisposed()).isTrue();
        assertThat(closeMillis[0]).isLessThan(2_000);
    }

    /** Spring's test context cache pauses contexts it keeps for later: they must come back usable. */
    @Test
    void pausingTheContextDisposesNothing() {
        runner.run(context -> {
            ConfigurableApplicationContext source = context.getSourceApplicationContext();
            source.pause();
            assertThat(context.getBean(ActorScheduler.class).isDisposed()).isFalse();
            assertThat(context.getBean(PullConsumer.class).isDisposed()).isFalse();
            source.restart();
            assertThat(context.getBean(PullConsumer.class).pullOnce("s", "g", 1).block(Duration.ofSeconds(10)))
                    .isNotNull();
        });
    }

    /**
     * An explicit {@code stop()} is not a close: a restarted context finds the consumer and the scheduler
     * usable (they used to be disposed by the stop while the restarted context still handed them out).
     */
    @Test
    void stoppingAndRestartingTheContextDisposesNothing() {
        ActorScheduler[] scheduler = new ActorScheduler[1];
        PullConsumer[] consumer = new PullConsumer[1];
        runner.run(context -> {
            ConfigurableApplicationContext source = context.getSourceApplicationContext();
            scheduler[0] = context.getBean(ActorScheduler.class);
            consumer[0] = context.getBean(PullConsumer.class);
            source.stop();
            assertThat(source.isRunning()).isFalse();
            assertThat(scheduler[0].isDisposed()).isFalse();
            assertThat(consumer[0].isDisposed()).isFalse();
            assertThat(consumer[0].isQuiescing()).isFalse();
            source.start();
            CountDownLatch ran = new CountDownLatch(1);
            scheduler[0].schedule(ran::countDown);
            assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(consumer[0].pullOnce("s", "g", 1).block(Duration.ofSeconds(10)).status())
                    .isEqualTo(PullResult.Status.EMPTY);
        });
        // the close after the restart shuts down as usual
        assertThat(consumer[0].isDisposed()).isTrue();
        assertThat(scheduler[0].isDisposed()).isTrue();
    }

    /**
     * A context closed while an explicit {@code stop()} left it stopped: Spring stops only running lifecycle
     * beans, so the steps run when the close is announced, in order (a waiting poll is answered by the
     * quiescence, not failed by the disposal).
     */
    @Test
    void closingAStoppedContextStillQuiescesThenDisposes() throws Exception {
        ActorScheduler[] scheduler = new ActorScheduler[1];
        PullConsumer[] consumer = new PullConsumer[1];
        @SuppressWarnings("unchecked")
        CompletableFuture<PullResult>[] poll = new CompletableFuture[1];
        runner.run(context -> {
            scheduler[0] = context.getBean(ActorScheduler.class);
            consumer[0] = context.getBean(PullConsumer.class);
            context.getSourceApplicationContext().stop();
            poll[0] = aWaitingPoll(consumer[0]);
        });
        assertThat(poll[0]).succeedsWithin(Duration.ofSeconds(10))
                .extracting(PullResult::status).isEqualTo(PullResult.Status.TIMED_OUT);
        assertThat(consumer[0].isDisposed()).isTrue();
        assertThat(scheduler[0].isDisposed()).isTrue();
    }

    /**
     * A child context's close reaches the parent's listeners: it must not shut down the parent's beans, also
     * while the parent is stopped (its steps not running, which is when the announced close runs them).
     */
    @Test
    void closingAChildContextShutsDownNothingOfTheParent() {
        runner.run(parent -> {
            parent.getSourceApplicationContext().stop();
            try (org.springframework.context.annotation.AnnotationConfigApplicationContext child =
                    new org.springframework.context.annotation.AnnotationConfigApplicationContext()) {
                child.setParent(parent.getSourceApplicationContext());
                child.refresh();
            }
            ActorScheduler scheduler = parent.getBean(ActorScheduler.class);
            PullConsumer consumer = parent.getBean(PullConsumer.class);
            assertThat(consumer.isQuiescing()).isFalse();
            assertThat(consumer.isDisposed()).isFalse();
            assertThat(scheduler.isDisposed()).isFalse();
        });
    }

    @Test
    void anApplicationsOwnSchedulerIsLeftToTheApplication() {
        ActorScheduler own = ActorScheduler.builder().name("own").threads(1).build();
        try {
            runner.withBean(ActorScheduler.class, () -> own).run(context ->
                    assertThat(context.getBean(PullConsumer.class).scheduler()).isSameAs(own));
            assertThat(own.isDisposed()).isFalse();
        } finally {
            own.dispose();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
