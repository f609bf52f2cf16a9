package io.reactoractor.spring.boot;

import org.springframework.context.SmartLifecycle;

/**
 * One step of {@link ReactorActorShutdown}: does its work once, when the context stops it in its phase.
 * Not pauseable: the work is for good (a quiescence, a disposal), so a context {@code pause()} (Spring's
 * test context cache pauses the contexts a test class does not use) must not run it; only closing does.
 */
abstract class ShutdownStep implements SmartLifecycle {

    private final int phase;
    private volatile boolean running;

    ShutdownStep(int phase) {
        this.phase = phase;
    }

    /** The step's work, on the thread closing the context. */
    abstract void shutDown();

    @Override
    public final void start() {
        running = true;
    }

    @Override
    public final void stop() {
        running = false;
        shutDown();
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
