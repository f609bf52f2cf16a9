package io.reactoractor.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.PullConsumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Disposes the auto-configured pull consumer, then the auto-configured scheduler, when the application
 * context stops, in a phase ahead of the web server's graceful shutdown. Otherwise the server would wait
 * for every open long poll (up to its timeout) and every endless consumer stream before it stops:
 * disposing the consumer answers waiting pulls with an error at once and ends the streams, so the
 * graceful shutdown that follows has nothing left to wait for.
 *
 * <p>Only what the auto-configuration created is disposed here; an application's own scheduler or
 * consumer bean is the application's to dispose.
 */
final class ReactorActorShutdown implements SmartLifecycle {

    /**
     * Stops after the application's own lifecycle beans of the default phase (they may still use the
     * consumer while they stop) and before the web server's graceful shutdown
     * ({@code WebServerApplicationContext.GRACEFUL_SHUTDOWN_PHASE}, {@code DEFAULT_PHASE - 1024}): the
     * highest phase stops first.
     */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

    private static final Log log = LogFactory.getLog(ReactorActorShutdown.class);

    private final Duration timeout;
    private final List<PullConsumer> consumers = new ArrayList<>();
    private final List<ActorScheduler> schedulers = new ArrayList<>();
    private volatile boolean running;

    ReactorActorShutdown(Duration timeout) {
        this.timeout = timeout;
    }

    /** Registered by the bean method that created it: disposed before any scheduler. */
    synchronized void manage(PullConsumer consumer) {
        consumers.add(consumer);
    }

    /** Registered by the bean method that created it. */
    synchronized void manage(ActorScheduler scheduler) {
        schedulers.add(scheduler);
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public synchronized void stop() {
        running = false;
        // the consumers first: their answers to the waiting pulls still need the scheduler's threads
        for (PullConsumer consumer : consumers) {
            consumer.dispose();
        }
        for (ActorScheduler scheduler : schedulers) {
            disposeGracefully(scheduler);
        }
    }

    /** Lets queued work finish (the error answers just sent), bounded: past the timeout, disposes at once. */
    private void disposeGracefully(ActorScheduler scheduler) {
        try {
            scheduler.disposeGracefully().block(timeout);
        } catch (RuntimeException e) {
            // block(timeout) throws IllegalStateException when the wait ends first
            log.warn("ActorScheduler " + scheduler.name() + " did not terminate within " + timeout
                    + " (reactor.actor.shutdown-timeout); disposing it now: " + e);
            scheduler.dispose();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /**
     * Not pauseable: {@link #stop()} disposes for good, so a context {@code pause()} (Spring's test
     * context cache pauses the contexts a test class does not use) must not call it; only closing the
     * context does.
     */
    @Override
    public boolean isPauseable() {
        return false;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
