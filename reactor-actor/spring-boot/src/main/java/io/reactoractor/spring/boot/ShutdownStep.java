package io.reactoractor.spring.boot;

import org.springframework.context.SmartLifecycle;

/**
 * One step of {@link ReactorActorShutdown}: does its work once, when the closing context stops it in its
 * phase. The work is for good (a quiescence, a disposal), so only closing runs it:
 * <ul>
 *   <li>not pauseable: a context {@code pause()} (Spring's test context cache pauses the contexts a test
 *       class does not use) does not stop it;</li>
 *   <li>an explicit {@code context.stop()} stops it (it reports not running) without doing the work, so a
 *       later {@code start()} finds the consumer and the scheduler as they were: disposing them there left
 *       a restarted application with a disposed scheduler that its beans still held;</li>
 *   <li>closing a context that an explicit {@code stop()} left stopped does not stop the step again (Spring
 *       stops only running beans): {@link ReactorActorShutdown} runs it when the context announces its
 *       closing ({@code ContextClosedEvent}), before the lifecycle beans would have been stopped.</li>
 * </ul>
 */
abstract class ShutdownStep implements SmartLifecycle {

    private final int phase;
    private volatile boolean running;

    ShutdownStep(int phase) {
        this.phase = phase;
    }

    /** The step's work, on the thread closing the context. */
    abstract void shutDown();

    /** @return whether the context is closing (a stop is then the close's, not an explicit {@code stop()}) */
    abstract boolean closing();

    @Override
    public final void start() {
        running = true;
    }

    @Override
    public final void stop() {
        running = false;
        if (closing()) {
            shutDown();
        }
    }

    @Override
    public final boolean isRunning() {
        return running;
    }

    @Override
    public final boolean isPauseable() {
        return false;
    }

    @Override
    public final int getPhase() {
        return phase;
    }
}
