package io.reactoractor;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.function.Consumer;
import java.util.function.Supplier;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A one-line global switch: {@code Schedulers.setFactory(ActorSchedulers.factory())} makes Reactor's
 * CPU-bound schedulers fair {@link ActorScheduler}s for the whole application.
 *
 * <table>
 *   <caption>What the factory returns</caption>
 *   <tr><th>Reactor asks for</th><th>the factory returns</th></tr>
 *   <tr><td>{@code Schedulers.parallel()}, {@code newParallel(name, n)}</td>
 *       <td>an {@code ActorScheduler} named after the thread factory's prefix ({@code "parallel"} for
 *       {@code parallel()}) with {@code n} carrier threads</td></tr>
 *   <tr><td>{@code Schedulers.single()}, {@code newSingle(name)}</td>
 *       <td>an {@code ActorScheduler} with one carrier thread and no compensating thread, whatever a
 *       {@link #factory(Consumer) customizer} sets: as on Reactor's single thread, no two of its tasks
 *       ever run at once (a hogging task holds it; the hog is still detected and logged). The tasks of
 *       one worker run in the order they were scheduled; those of different workers take turns in the
 *       fair order, not necessarily in the order they were scheduled (Reactor's single thread runs all
 *       of them first in, first out)</td></tr>
 *   <tr><td>{@code Schedulers.boundedElastic()}, {@code newBoundedElastic(..)} and the
 *       thread-per-task variant</td>
 *       <td>Reactor's own scheduler, unchanged: blocking work must not land on the
 *       {@link reactor.core.scheduler.NonBlocking} carriers, where {@code block()} fails fast and a
 *       blocked task holds a whole carrier</td></tr>
 * </table>
 *
 * <p>Carrier threads are created by the scheduler itself (they must be {@code NonBlocking} carriers
 * of the fair run queue), so of the {@link ThreadFactory} Reactor passes only the name prefix is used,
 * when the factory exposes one as a {@code Supplier<String>} (Reactor's own thread factories do), and
 * its daemon flag ({@link ActorScheduler.Builder#daemon(boolean)}): as with Reactor's schedulers,
 * {@code Schedulers.newParallel(name, n)} makes non-daemon carriers, which keep the JVM running until the
 * scheduler is disposed, and the shared {@code Schedulers.parallel()} daemon ones. An
 * {@code ActorScheduler} starts its carriers when it is built, where Reactor's schedulers start a thread
 * with its first task: a {@code newParallel(name, n)} nobody uses keeps the JVM running too, until
 * disposed. Use
 * {@link #factory(Consumer)} to set the quota, preemption granularity or metrics of every scheduler
 * the factory builds.
 *
 * <p>The shared {@code Schedulers.parallel()} and {@code single()} are Reactor's cache wrapper around the
 * {@code ActorScheduler} the factory built (not an {@code instanceof ActorScheduler}); the library's own
 * kinds take them as the scheduler itself: {@code Actor.builder(Schedulers.parallel())},
 * {@code ActorOperators.publishOn(Schedulers.parallel())}, {@code RingBuffer.builder(Schedulers.single())}.
 *
 * <p>Reset with {@link Schedulers#resetFactory()}; Reactor disposes the cached schedulers it replaced.
 */
public final class ActorSchedulers {

    private ActorSchedulers() {
    }

    /**
     * @return a {@link Schedulers.Factory} building fair {@link ActorScheduler}s with the defaults for
     *         {@code parallel} and {@code single}, and Reactor's own {@code boundedElastic}
     */
    public static Schedulers.Factory factory() {
        return new Factory(b -> { });
    }

    /**
     * @param customizer applied to each builder after the name and thread count are set (it may
     *                   override them, but for {@code single()} and {@code newSingle(..)}: one carrier
     *                   thread and no compensating thread are set again after it, which their mutual
     *                   exclusion rests on); must not be null
     * @return a {@link Schedulers.Factory} building customised fair {@link ActorScheduler}s
     * @throws IllegalArgumentException if {@code customizer} is null
     */
    public static Schedulers.Factory factory(Consumer<ActorScheduler.Builder> customizer) {
        if (customizer == null) {
            throw new IllegalArgumentException("customizer must not be null");
        }
        return new Factory(customizer);
    }

    private static final class Factory implements Schedulers.Factory {
        private final Consumer<ActorScheduler.Builder> customizer;

        Factory(Consumer<ActorScheduler.Builder> customizer) {
            this.customizer = Objects.requireNonNull(customizer);
        }

        @Override
        public Scheduler newParallel(int parallelism, ThreadFactory threadFactory) {
            return build(parallelism, threadFactory, false);
        }

        @Override
        public Scheduler newSingle(ThreadFactory threadFactory) {
            // Reactor's single scheduler serialises all its tasks on one thread, and callers rely on it
            // for mutual exclusion: a compensating thread started for a hog would break that
            return build(1, threadFactory, true);
        }

        private ActorScheduler build(int threads, ThreadFactory threadFactory, boolean single) {
            ActorScheduler.Builder builder = ActorScheduler.builder().threads(threads);
            String prefix = prefixOf(threadFactory);
            if (prefix != null) {
                builder.name(prefix);
            }
            builder.daemon(daemonOf(threadFactory));
            customizer.accept(builder);
            if (single) {
                // after the customizer: a second carrier, or a compensating one started for a hog, would run two
                // tasks of the single scheduler at once, and callers rely on its mutual exclusion
                builder.threads(1).maxCompensatingThreads(0);
            }
            return builder.build();
        }

        /**
         * The daemon flag of the threads {@code threadFactory} makes, read from one it makes and never
         * starts (the factory's only way to say; Reactor's count one more thread name, which carriers,
         * named by the scheduler, do not use). Daemon if the factory fails or makes none: any failure but a
         * JVM-fatal one ({@code OutOfMemoryError}, {@code LinkageError}, ...), which goes on to the caller.
         */
        private static boolean daemonOf(ThreadFactory threadFactory) {
            try {
                Thread probe = threadFactory.newThread(() -> { });
                return probe == null || probe.isDaemon();
            } catch (Throwable e) {
                reactor.core.Exceptions.throwIfJvmFatal(e);
                return true;
            }
        }

        /**
         * Reactor's thread factories are {@code Supplier<String>} of their name prefix. Reactor takes any
         * name, and a recognisable one beats the default, so a name a scheduler may not have is mended, not
         * refused: control characters become spaces, and one longer than a scheduler name may be (64
         * characters) is cut to its first 64. A blank one (also after mending) falls back to the default.
         */
        private static String prefixOf(ThreadFactory threadFactory) {
            if (threadFactory instanceof Supplier) {
                Object name = ((Supplier<?>) threadFactory).get();
                if (name instanceof String) {
                    StringBuilder n = new StringBuilder((String) name);
                    for (int i = 0; i < n.length(); i++) {
                        if (Character.isISOControl(n.charAt(i))) {
                            n.setCharAt(i, ' ');
                        }
                    }
                    String mended = n.length() <= 64 ? n.toString() : n.substring(0, 64);
                    return mended.isBlank() ? null : mended;
                }
            }
            return null;
        }

        @Override
        public String toString() {
            return "ActorSchedulers.factory()";
        }
    }
}
