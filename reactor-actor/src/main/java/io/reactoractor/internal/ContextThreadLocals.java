package io.reactoractor.internal;

import reactor.core.publisher.Hooks;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.ContextView;

/**
 * Reactor's automatic context propagation inside the library's turns: with
 * {@code Hooks.enableAutomaticContextPropagation()} (and Micrometer's {@code context-propagation} library,
 * which Reactor's mode requires), the thread locals registered with its {@code ContextRegistry} (a trace
 * id, an MDC entry) are set from a subscriber's Reactor {@code Context} around user code that runs on a
 * carrier: an actor's behaviour, a ring consumer's handler. Reactor does the same for the user code of its
 * own operators after a thread hop ({@code publishOn(..).map(..)} sees them); without this, the turn ran
 * inside the schedule hook Reactor installs for that mode, which captured the carrier's (empty) thread
 * locals when the turn started. Not API.
 *
 * <p>Costs a read of one static field per turn when the mode is off. The library is optional: its types
 * appear only in {@link Snapshots}, which is loaded the first time the mode is on (Reactor turns it on
 * only when the library is on the class path); a class path with a version that lacks the API
 * turns this off for good, with one warning.
 */
public final class ContextThreadLocals {

    private static final Logger LOG = Loggers.getLogger(ContextThreadLocals.class);

    /** What {@link #open} returns; closing it puts back the thread locals it replaced. */
    @FunctionalInterface
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    private static final Scope NONE = () -> { };

    /** Set once the library's API was found missing: no further attempt. */
    private static volatile boolean unavailable;

    private ContextThreadLocals() {
    }

    /**
     * Sets the thread locals from {@code context} if Reactor's automatic context propagation is on.
     *
     * @param context the subscriber's context
     * @return the scope to close once the user code returned (a no-op one when the mode is off, the context
     *         is empty or the library is unusable)
     */
    public static Scope open(ContextView context) {
        if (!Hooks.isAutomaticContextPropagationEnabled() || context.isEmpty() || unavailable) {
            return NONE;
        }
        try {
            return Snapshots.open(context);
        } catch (LinkageError e) {
            unavailable = true;
            LOG.warn("Reactor's automatic context propagation is on, but io.micrometer:context-propagation's "
                    + "ContextSnapshotFactory is not usable here ({}); thread locals are not restored inside "
                    + "actor turns", e.toString());
            return NONE;
        }
    }

    /**
     * {@link #open(ContextView)} with {@code subscriber}'s context, asked for only when the mode is on (a chain of
     * operators answers {@code currentContext()} by asking down the chain: nothing to pay per turn when it is off).
     *
     * @param subscriber the subscriber whose context holds the values
     * @return the scope to close once the user code returned
     */
    public static Scope open(reactor.core.CoreSubscriber<?> subscriber) {
        if (!Hooks.isAutomaticContextPropagationEnabled() || unavailable) {
            return NONE;
        }
        return open(subscriber.currentContext());
    }

    /**
     * {@link #open(ContextView)} with a context asked for only when the mode is on (it may cost a walk down a
     * subscriber chain).
     *
     * @param context where the context comes from
     * @return the scope to close after the user code
     */
    public static Scope open(java.util.function.Supplier<? extends ContextView> context) {
        if (!Hooks.isAutomaticContextPropagationEnabled() || unavailable) {
            return NONE;
        }
        return open(context.get());
    }

    /** The only place the optional library's types appear. */
    private static final class Snapshots {

        /** Sets what the context holds and leaves other thread locals alone, as Reactor's own restoring does. */
        private static final io.micrometer.context.ContextSnapshotFactory FACTORY =
                io.micrometer.context.ContextSnapshotFactory.builder().build();

        static Scope open(ContextView context) {
            io.micrometer.context.ContextSnapshot.Scope scope = FACTORY.setThreadLocalsFrom(context);
            return scope::close;
        }
    }
}
