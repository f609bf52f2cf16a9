package io.reactoractor.internal;

import java.util.function.Supplier;

import org.reactivestreams.Subscription;
import reactor.core.Exceptions;
import reactor.util.context.Context;

/**
 * Calls into an upstream {@link Subscription} that may break rule 3.15 or 3.16 ({@code cancel()} and
 * {@code request(n)} must return normally). The library's stages cancel their upstream in the middle of
 * their own termination (the actor leaves its group, a ring wakes its consumers to deliver the end, a
 * {@code publishOn} drains its queue): an exception thrown there would cut that termination short and
 * leave a stage that is neither live nor ended (counted in its group for ever, its subscriber never
 * signalled). Reactor's operators let such an exception propagate to whoever cancelled; these stages
 * finish their own termination first and report it to {@code Hooks.onErrorDropped} (the stage is
 * ending: there is nobody left to signal it to), through {@link Internals#onErrorDropped}, which survives a
 * hook that throws. JVM-fatal errors still propagate
 * ({@link Exceptions#throwIfJvmFatal}). Not API.
 */
public final class BrokenUpstreams {

    private BrokenUpstreams() {
    }

    /**
     * Cancels {@code upstream}; an exception it throws goes to {@code Hooks.onErrorDropped}.
     *
     * @param upstream the subscription to cancel
     * @param context  the context whose {@code onErrorDropped} hook gets a thrown exception (asked for only
     *                 then: a stage's context may take a lock the cancelling thread must not wait for first)
     */
    public static void cancel(Subscription upstream, Supplier<? extends Context> context) {
        try {
            upstream.cancel();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Internals.onErrorDropped(t, context.get());
        }
    }
}
