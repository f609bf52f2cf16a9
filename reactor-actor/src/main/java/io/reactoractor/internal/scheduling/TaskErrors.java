package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Reports a task's failure the way Reactor's own schedulers do: through {@code Schedulers.handleError}
 * (the thread's uncaught-exception handler, or Reactor's logger, then the hooks registered with
 * {@link Schedulers#onHandleError}), so applications' hooks and Reactor's logger see it.
 *
 * <p>{@code Schedulers.handleError} is package-private in reactor-core; it is reached through a private
 * lookup, which works whenever reactor-core is on the class path (the unnamed module opens every
 * package). On the module path, where {@code reactor.core} does not open its package, the same steps
 * are done here except the hook, which Reactor offers no public way to call.
 */
final class TaskErrors {

    private static final Logger LOG = Loggers.getLogger(TaskErrors.class);
    private static final MethodHandle HANDLE_ERROR = findHandleError();

    private TaskErrors() {
    }

    private static MethodHandle findHandleError() {
        try {
            return MethodHandles.privateLookupIn(Schedulers.class, MethodHandles.lookup())
                    .findStatic(Schedulers.class, "handleError", MethodType.methodType(void.class, Throwable.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** Reports {@code error}; may throw if a handler or logger throws (the caller guards). */
    static void report(Throwable error) throws Throwable {
        if (HANDLE_ERROR != null) {
            HANDLE_ERROR.invokeExact(error);
            return;
        }
        Thread thread = Thread.currentThread();
        Thread.UncaughtExceptionHandler handler = thread.getUncaughtExceptionHandler();
        if (handler != null) {
            handler.uncaughtException(thread, error);
        } else {
            LOG.error("Scheduler worker failed with an uncaught exception", error);
        }
    }

    /**
     * The uncaught-exception handler of the scheduler's threads (carriers and timer), Reactor's
     * ({@code Schedulers.defaultUncaughtException}, which Reactor's thread factories install): a task's
     * error that {@code Schedulers.handleError} hands to the thread's handler is logged through Reactor's
     * {@code Schedulers} logger, not printed to {@code System.err} by the thread group.
     */
    static final Thread.UncaughtExceptionHandler UNCAUGHT = (thread, error) -> {
        ThreadGroup g = thread.getThreadGroup();
        // looked up per error (rare), so a logger factory installed later (Loggers.useCustomLoggers) applies
        Loggers.getLogger(Schedulers.class).error("Scheduler worker in group " + (g == null ? "(terminated)" : g.getName())
                + " failed with an uncaught exception", error);
    };

    /** @return whether failures reach {@code Schedulers.onHandleError} hooks (false on the module path) */
    static boolean reachesReactorHooks() {
        return HANDLE_ERROR != null;
    }
}
