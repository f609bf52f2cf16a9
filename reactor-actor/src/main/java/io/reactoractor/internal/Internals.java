package io.reactoractor.internal;

import java.util.Objects;
import java.util.function.Supplier;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.scheduling.SchedulingGroup;
import reactor.core.scheduler.Scheduler;

/**
 * Lets the library's own actor kinds ({@code io.reactoractor.actor}, {@code io.reactoractor.pull}) reach
 * the engine behind a public {@link ActorGroup} without that engine appearing in the group's public
 * API. Not API: everything under {@code io.reactoractor.internal} may change in any release.
 *
 * <p>The idea is the JDK's {@code SharedSecrets}: {@code ActorGroup} installs an accessor from its
 * static initialiser, so the accessor is always present once a group exists, and the engine types
 * stay out of {@code ActorGroup}'s signatures.
 */
public final class Internals {

    /** Implemented once, inside {@link ActorGroup}. */
    public interface GroupAccess {
        /**
         * @param group a group
         * @return the engine running its actors
         */
        SchedulerEngine engine(ActorGroup group);

        /**
         * @param group a group
         * @return its scheduling group (the fair-share entity)
         */
        SchedulingGroup schedulingGroup(ActorGroup group);
    }

    /** Written once by {@code ActorGroup}'s class initialiser; read after that class is initialised. */
    private static volatile GroupAccess groupAccess;

    private Internals() {
    }

    /**
     * The group an actor kind runs in when given {@code scheduler}: an {@code ActorScheduler}'s default
     * group, a group itself, or either behind Reactor's cache of its shared schedulers
     * ({@code Schedulers.parallel()} and {@code single()} after
     * {@code Schedulers.setFactory(ActorSchedulers.factory())} are a wrapper that hands out the cached
     * scheduler as a {@code Supplier<Scheduler>}).
     *
     * @param scheduler the scheduler
     * @return its actor group
     * @throws NullPointerException     if {@code scheduler} is {@code null}
     * @throws IllegalArgumentException if it is not an actor scheduler or group
     */
    public static ActorGroup groupOf(Scheduler scheduler) {
        Objects.requireNonNull(scheduler, "scheduler");
        Object s = scheduler;
        if (!(s instanceof ActorScheduler) && !(s instanceof ActorGroup) && s instanceof Supplier<?> cache) {
            s = cache.get();
        }
        if (s instanceof ActorScheduler a) {
            return a.defaultGroup();
        }
        if (s instanceof ActorGroup g) {
            return g;
        }
        // name what is underneath Reactor's cache wrapper too: inside StepVerifier.withVirtualTime,
        // Schedulers.parallel() is a VirtualTimeScheduler even with ActorSchedulers.factory() installed
        throw new IllegalArgumentException("scheduler must be an ActorScheduler or an ActorGroup but was "
                + scheduler + (s != scheduler ? " (a " + s.getClass().getName() + ")" : "")
                + (s.getClass().getName().startsWith("reactor.test.scheduler.VirtualTimeScheduler")
                        ? "; the library's kinds run on real time and cannot run on a VirtualTimeScheduler"
                        : ""));
    }

    /**
     * Installs the accessor; called by {@code ActorGroup}'s class initialiser only.
     *
     * @param access the accessor
     * @throws IllegalStateException when one is installed already
     */
    public static void installGroupAccess(GroupAccess access) {
        Objects.requireNonNull(access, "access");
        synchronized (Internals.class) {
            if (groupAccess != null) {
                throw new IllegalStateException("group access already installed");
            }
            groupAccess = access;
        }
    }

    /**
     * @param group a group
     * @return the engine running the group's actors
     */
    public static SchedulerEngine engine(ActorGroup group) {
        return groupAccess().engine(group);
    }

    /**
     * @param group a group
     * @return the group's scheduling group
     */
    public static SchedulingGroup schedulingGroup(ActorGroup group) {
        return groupAccess().schedulingGroup(group);
    }

    private static GroupAccess groupAccess() {
        GroupAccess a = groupAccess;
        if (a == null) {
            // Only reachable before any ActorGroup exists (a group argument implies an initialised class),
            // e.g. with a null argument; initialise the class so the answer is an NPE, not this state.
            try {
                Class.forName(ActorGroup.class.getName(), true, ActorGroup.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = groupAccess;
        }
        return a;
    }

    /**
     * An error nobody can receive any more, to {@code Hooks.onErrorDropped} (the hook local to {@code context},
     * else the global one, else Reactor's log line), as Reactor's operators hand theirs over. The library does
     * so in the middle of its own terminations (an upstream's {@code cancel()} that threw while an actor ended,
     * a second failure after the first), so a hook that throws must not cut them short: its exception and the dropped
     * error are logged (at error level) and this returns normally. A JVM-fatal error the hook
     * throws is thrown on ({@code Exceptions.throwIfJvmFatal}), as everywhere else.
     *
     * @param dropped the error nobody can receive
     * @param context the context whose hook gets it
     */
    public static void onErrorDropped(Throwable dropped, reactor.util.context.Context context) {
        try {
            reactor.core.publisher.Operators.onErrorDropped(dropped, context);
        } catch (Throwable hookFailed) {
            reactor.core.Exceptions.throwIfJvmFatal(hookFailed);
            reactor.util.Logger log = reactor.util.Loggers.getLogger(Internals.class);
            log.error("Hooks.onErrorDropped threw", hookFailed);
            if (hookFailed != dropped) {
                log.error("... on this error, which is dropped", dropped);
            }
        }
    }

    /**
     * Rule 2.13 broken by a subscriber's {@code onSubscribe}, as a publisher of this library handles it: the
     * subscription counts as cancelled ({@code subscription.cancel()}, so the actor or consumer behind it
     * stops as for a cancel) and, as Reactor's publishers do ({@code Operators.reportThrowInSubscribe}),
     * {@code subscribe} returns normally (rule 1.9) and the subscriber gets the error through
     * {@code Hooks.onOperatorError}; a JVM-fatal one is thrown on instead (after the cancel). An
     * {@code onError} that throws as well goes to {@code Hooks.onErrorDropped}.
     *
     * @param s            the subscriber whose {@code onSubscribe} threw
     * @param subscription the subscription it was given
     * @param error        what it threw
     * @param context      the subscriber's context
     */
    public static void reportThrowInSubscribe(org.reactivestreams.Subscriber<?> s,
            org.reactivestreams.Subscription subscription, Throwable error, reactor.util.context.Context context) {
        subscription.cancel();
        reactor.core.Exceptions.throwIfJvmFatal(error);
        try {
            s.onError(reactor.core.publisher.Operators.onOperatorError(error, context));
        } catch (Throwable again) {
            onErrorDropped(again, context);
        }
    }

    /**
     * User code's error through {@code Hooks.onOperatorError} (global, or local to {@code context}), as
     * Reactor's operators pass theirs; the caller's error policy then acts on what this returns, unless it is
     * {@linkplain #isFatalOrBubbling fatal}. A fatal error skips the hook and is returned as is. Never
     * throws: a hook that itself throws gives its own error (the original one suppressed in it), also a
     * JVM-fatal one, which the caller then treats as fatal (an escaping hook error left the failed message
     * at the head of the mailbox to be retried without end, whatever the policy).
     *
     * @param error   the user code's error
     * @param value   the element it failed on
     * @param context the subscriber's context
     * @return the error the policy sees
     */
    public static Throwable onOperatorError(Throwable error, Object value, reactor.util.context.Context context) {
        if (isFatalOrBubbling(error)) {
            return error;
        }
        try {
            return reactor.core.publisher.Operators.onOperatorError(null, error, value, context);
        } catch (Throwable hookError) {
            if (hookError != error) {
                try {
                    hookError.addSuppressed(error);
                } catch (Throwable ignored) {
                    // a StackOverflowError may have no room left for it: the hook's error alone then
                }
            }
            return hookError;
        }
    }

    /**
     * @param t an error of user code (or of a hook it went through)
     * @return whether the error is never handed to an error policy (retried or skipped): a JVM-fatal
     *         error, or one Reactor means to bubble out of the stream ({@code Exceptions.bubble}); it fails
     *         the actor or ring and reaches {@code Schedulers.onHandleError}
     */
    public static boolean isFatalOrBubbling(Throwable t) {
        return reactor.core.Exceptions.isJvmFatal(t) || reactor.core.Exceptions.isBubbling(t);
    }

    /**
     * A client-chosen name as an error message may quote it: printable ASCII as is, every other character
     * as {@code \\uXXXX}, so a quoted name cannot break a log line (a line break, a terminal escape) or hide
     * what it holds.
     *
     * @param name the name
     * @return the name, escaped
     */
    public static String escaped(String name) {
        StringBuilder b = null;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c >= 0x7f || c == '\\') {
                if (b == null) {
                    b = new StringBuilder(name.length() + 16).append(name, 0, i);
                }
                b.append(String.format(java.util.Locale.ROOT, "\\u%04X", (int) c));
            } else if (b != null) {
                b.append(c);
            }
        }
        return b == null ? name : b.toString();
    }

    /**
     * Checks a name a client may choose (a group's, an actor's, a ring's): it becomes a metric tag value, a
     * thread or actor path and a log field, so it must be visible text.
     *
     * @param name      the name
     * @param maxLength the most characters it may have
     * @param noSlash   whether {@code '/'} (the separator of actor paths) is refused
     * @return {@code name}
     * @throws IllegalArgumentException naming the parameter {@code name} if it is {@code null}, blank, longer
     *                                  than {@code maxLength}, holds a control character (a line break, a NUL),
     *                                  or a {@code '/'} where refused
     */
    public static String checkName(String name, int maxLength, boolean noSlash) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("name must not be null or blank but was "
                    + (name == null ? "null" : "'" + escaped(name) + "'"));
        }
        if (name.length() > maxLength) {
            throw new IllegalArgumentException("name must have 1 to " + maxLength + " characters but has " + name.length());
        }
        for (int i = 0; i < name.length(); i++) {
            char ch = name.charAt(i);
            if (Character.isISOControl(ch)) {
                throw new IllegalArgumentException("name must not contain control characters but has U+"
                        + String.format("%04X", (int) ch) + " at index " + i);
            }
            if (noSlash && ch == '/') {
                throw new IllegalArgumentException("name must not contain '/' but was '" + escaped(name) + "'");
            }
        }
        return name;
    }
}
