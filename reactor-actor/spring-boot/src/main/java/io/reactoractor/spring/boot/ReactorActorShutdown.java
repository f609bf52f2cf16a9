package io.reactoractor.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.reactoractor.ActorScheduler;
import io.reactoractor.internal.Internals;
import io.reactoractor.pull.PullConsumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.ContextClosedEvent;

/**
 * Shuts down what the auto-configuration created, in two steps around the web server's graceful shutdown
 * (Spring stops the highest phase first):
 * <ol>
 *   <li>{@link Quiescence#PHASE} ({@code DEFAULT_PHASE - 512}), before the graceful shutdown
 *       ({@code DEFAULT_PHASE - 1024}): the pull consumers {@linkplain PullConsumer#quiesce() quiesce}.
 *       Their waiting long polls are answered at once (no message, as at their timeout), later ones do
 *       not wait, their streams complete; otherwise the graceful shutdown would wait for every open long
 *       poll (up to its timeout) and every endless stream. Nothing is disposed yet: requests still
 *       arriving, and those the graceful shutdown lets finish, are served as usual.</li>
 *   <li>{@link #PHASE} ({@code DEFAULT_PHASE - 4096}), after the web server stopped
 *       ({@code DEFAULT_PHASE - 2048}): the schedulers close gracefully, each given at most
 *       {@code reactor.actor.shutdown-timeout} to finish its queued work (the consumers' queued
 *       acknowledgements included, and with an asynchronous store until the store recorded them), then the
 *       pull consumers are disposed. All of it before Spring destroys any bean, so an application's store
 *       bean is still open while the acknowledgements reach it.</li>
 * </ol>
 * Without a web server the two steps simply follow each other. Only what the auto-configuration created is
 * shut down here; an application's own scheduler or consumer bean is the application's to shut down.
 *
 * <p>Only closing the context runs the steps ({@link ShutdownStep}): an explicit {@code context.stop()}
 * leaves consumer and scheduler as they are, so {@code context.start()} finds them usable. The context is
 * closing once {@link ConfigurableApplicationContext#isClosed()} says so, which Spring sets before it
 * announces the close and stops the lifecycle beans. A context closed while an explicit {@code stop()}
 * left the steps stopped does not stop them again, so they run when the close is announced
 * ({@link ContextClosedEvent}), in their order.
 *
 * <p>This bean is the second step, and the first is a bean made from it ({@link #quiescence()}), not the
 * other way round: Spring stops a lifecycle bean's dependents before the bean itself, whatever their
 * phases, so the step the other depends on must be the later one.
 */
final class ReactorActorShutdown extends ShutdownStep
        implements ApplicationContextAware, ApplicationListener<ContextClosedEvent> {

    /** After the web server stopped ({@code WebServerApplicationContext}'s stop phase, {@code DEFAULT_PHASE - 2048}). */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

    private static final Log log = LogFactory.getLog(ReactorActorShutdown.class);

    private final Duration timeout;
    private final List<PullConsumer> consumers = new ArrayList<>();
    private final List<ActorScheduler> schedulers = new ArrayList<>();
    private final Quiescence quiescence = new Quiescence();
    /** The context whose close runs the steps; {@code null} outside a context (then every stop runs them). */
    private volatile ApplicationContext context;

    ReactorActorShutdown(Duration timeout) {
        super(PHASE);
        this.timeout = timeout;
    }

    /** Registered by the bean method that created it: quiesced first, disposed before any scheduler. */
    synchronized void manage(PullConsumer consumer) {
        consumers.add(consumer);
    }

    /** Registered by the bean method that created it. */
    synchronized void manage(ActorScheduler scheduler) {
        schedulers.add(scheduler);
    }

    /** @return whether {@code scheduler} was created by the auto-configuration (and is shut down here) */
    synchronized boolean manages(ActorScheduler scheduler) {
        return schedulers.contains(scheduler);
    }

    @Override
    public void setApplicationContext(ApplicationContext applicationContext) {
        this.context = applicationContext;
    }

    @Override
    boolean closing() {
        ApplicationContext c = context;
        // a context that cannot say (not a ConfigurableApplicationContext) stops its beans only to close
        return !(c instanceof ConfigurableApplicationContext configurable) || configurable.isClosed();
    }

    /**
     * The close is announced, before the lifecycle beans are stopped: a step that is not running (an
     * explicit {@code stop()} stopped it) would not be stopped by the close, so it runs now; running steps
     * are left to the close, in their phases.
     *
     * @param event the close of a context: this one's, or a child's (ignored)
     */
    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        if (event.getApplicationContext() != context) {
            return; // a child context's events reach its parent's listeners too
        }
        if (!quiescence.isRunning()) {
            quiescence.shutDown();
        }
        if (!isRunning()) {
            shutDown();
        }
    }

    /** @return the first step, a lifecycle bean of its own (it needs a phase of its own) */
    Quiescence quiescence() {
        return quiescence;
    }

    /**
     * The second step: closes the schedulers gracefully, each bounded by the timeout, then disposes the
     * consumers. In that order because the consumers quiesced in the first step (no pull waits any more,
     * their streams completed), while acknowledgements handed in before the close may still be queued on a
     * consumer's actors or, with an asynchronous store, be on their way to it: a graceful close runs them and
     * waits until the store recorded them (a dead letter's copy and its acknowledgement too); a consumer
     * disposed first dropped them, and an application's store bean destroyed next cut the calls in flight,
     * so their messages came again.
     */
    @Override
    synchronized void shutDown() {
        Thread current = Thread.currentThread();
        for (ActorScheduler scheduler : schedulers) {
            if (Internals.engine(scheduler.defaultGroup()).isCarrier(current)) {
                closeAfterThisTask(scheduler);
                return;
            }
        }
        for (ActorScheduler scheduler : schedulers) {
            disposeGracefully(scheduler);
        }
        for (PullConsumer consumer : consumers) {
            consumer.dispose();
        }
    }

    /**
     * The context closes from a task of a scheduler created here: that scheduler's graceful close waits for the
     * task in progress, this one, so waiting for it here could only time out. The close goes on once this task
     * returns, off this thread: each scheduler gracefully (bounded by the timeout), then the consumers disposed.
     * Spring destroys the application's beans meanwhile (an asynchronous store among them), so acknowledgements
     * still on their way to such a store may be cut off; closing from any other thread waits for them.
     */
    private void closeAfterThisTask(ActorScheduler own) {
        log.warn("the context is closed from a thread of ActorScheduler " + own.name() + ", whose graceful close "
                + "waits for that thread's task: it goes on after the task returns, without waiting here");
        List<ActorScheduler> toClose = List.copyOf(schedulers);
        List<PullConsumer> toDispose = List.copyOf(consumers);
        reactor.core.publisher.Flux.fromIterable(toClose)
                .concatMap(s -> s.disposeGracefully().timeout(timeout).onErrorResume(e -> {
                    log.warn("ActorScheduler " + s.name() + " did not terminate gracefully within " + timeout
                            + " (reactor.actor.shutdown-timeout); disposing it now", e);
                    s.dispose();
                    return reactor.core.publisher.Mono.empty();
                }))
                .doFinally(signal -> toDispose.forEach(PullConsumer::dispose))
                .subscribe();
    }

    /** The first step: the consumers quiesce before the web server's graceful shutdown. */
    final class Quiescence extends ShutdownStep {

        /**
         * Stops after the application's own lifecycle beans of the default phase (they may still use the
         * consumer while they stop) and before the web server's graceful shutdown
         * ({@code WebServerApplicationContext.GRACEFUL_SHUTDOWN_PHASE}, {@code DEFAULT_PHASE - 1024}).
         */
        static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

        private Quiescence() {
            super(PHASE);
        }

        @Override
        boolean closing() {
            return ReactorActorShutdown.this.closing();
        }

        @Override
        void shutDown() {
            synchronized (ReactorActorShutdown.this) {
                for (PullConsumer consumer : consumers) {
                    consumer.quiesce();
                }
            }
        }
    }

    /**
     * Lets queued work finish (the answers just sent), bounded: past the timeout, disposes at once. Waits on a future,
     * not with {@code block()}: closing a context is a blocking call wherever it is made, and {@code block()} refuses
     * a thread Reactor marks non-blocking (its {@code parallel()} workers, a Netty event loop) at once, which read as
     * the timeout: the scheduler was disposed without its graceful close.
     */
    private void disposeGracefully(ActorScheduler scheduler) {
        try {
            scheduler.disposeGracefully().toFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException timedOut) {
            log.warn("ActorScheduler " + scheduler.name() + " did not terminate within " + timeout
                    + " (reactor.actor.shutdown-timeout); disposing it now");
            scheduler.dispose();
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt(); // the closing thread was interrupted: stop waiting, keep the flag
            log.warn("interrupted while ActorScheduler " + scheduler.name() + " shut down gracefully; disposing it now");
            scheduler.dispose();
        } catch (ExecutionException | RuntimeException e) {
            log.warn("ActorScheduler " + scheduler.name() + " failed to shut down gracefully; disposing it now",
                    e instanceof ExecutionException ? e.getCause() : e);
            scheduler.dispose();
        }
    }
}
