package io.reactoractor.actor;

import java.time.Duration;

import reactor.core.Disposable;
import reactor.util.context.ContextView;

/**
 * What a {@link Behaviour} can do while it handles a message. Only valid on the actor's own turn.
 *
 * @param <O> the outbound result type
 */
public interface ActorContext<O> {

    /**
     * The Reactor context of the actor's subscriber (what its {@code contextWrite} put there), as
     * {@code FluxSink.contextView()} gives a {@code Flux.create} generator its subscriber's: for values the
     * stream carries, such as a tenant or a trace id. Empty before anyone subscribed. Under Reactor's
     * automatic context propagation ({@code Hooks.enableAutomaticContextPropagation()}), the behaviour also
     * runs with the thread locals this context holds (MDC, tracing), as the {@code map} after Reactor's
     * {@code publishOn} does.
     *
     * @return the subscriber's context, read-only
     */
    default ContextView contextView() {
        return reactor.util.context.Context.empty();
    }

    /**
     * Sends a result downstream (at once when demand allows, otherwise buffered until it does; the
     * actor processes no further message while results are buffered). A result emitted once the actor
     * terminated, through a context kept past its turn, reaches nobody: it goes to the subscriber's
     * discard hook if the subscriber cancelled, otherwise to {@code Hooks.onNextDropped} (as Reactor's
     * {@code FluxSink.next} after {@code complete()}).
     *
     * @param result the result, not {@code null}
     * @throws NullPointerException if {@code result} is null
     */
    void emit(O result);

    /**
     * Suspends this actor (re-entrant): no further message is processed until {@link #resume()}, and no
     * {@link #schedule scheduled task} runs either (it runs in a turn). To resume after a time use
     * {@link #resumeAfter}: a task scheduled to resume a suspended actor would wait for that resume forever.
     */
    void suspend();

    /**
     * Lifts one suspension.
     *
     * @return {@code true} if a suspension was lifted
     */
    boolean resume();

    /**
     * Suspends this actor and arms a timer on the scheduler's timer that resumes it after
     * {@code delay}. Return {@code false} from the behaviour to retry the same message then. When the actor
     * terminates first, the timer is cancelled at once (it holds nothing up: not the actor's memory, not a
     * graceful shutdown).
     *
     * @param delay the delay; zero or less resumes at once, and a delay beyond about 146 years counts as
     *              that long (as the scheduler's own delays saturate)
     * @return cancels the timer (the suspension then stays until resumed)
     */
    Disposable resumeAfter(Duration delay);

    /**
     * Runs {@code task} on this actor (in one of its turns, serialised with its messages) after
     * {@code delay}. Like a message, it waits while the actor is suspended (by {@link #suspend()}), has no
     * subscriber yet, or its downstream has no demand, so what a periodic task emits cannot pile up while
     * nobody requests; use {@link #resumeAfter} to lift a suspension after a time. A completion
     * ({@link Actor#complete()}) runs the tasks already due first (a delay of zero or less included, whether or
     * not the scheduler's timer has fired them yet), as it processes the messages already in the mailbox; a
     * timer not yet due when the actor terminates never fires: termination cancels it at once
     * (the task is then unreachable from the scheduler, and a graceful shutdown does not wait for it), as
     * does one armed through this context after the actor terminated (returned disposed). A task that throws
     * is a task's failure, as on Reactor's workers: its error goes to {@code Schedulers.onHandleError} (and
     * counts as a failed task), the actor goes on, and the {@link ErrorPolicy} (the behaviour's) does not see
     * it; a task that must stop the actor on failure catches its error and calls {@link Actor#dispose()} or
     * fails its own way. The task passes through {@code Schedulers.onSchedule} here, on the calling thread, as a
     * task given to a Reactor {@code Worker} does (and it runs inside the hook's decoration of the turn too).
     *
     * @param delay the delay; zero or less runs the task as soon as the actor can, and a delay beyond about
     *              146 years counts as that long
     * @param task  the task
     * @return cancels the task
     * @throws java.util.concurrent.RejectedExecutionException if the scheduler or the actor's group is closing
     *         gracefully or disposed (a new task, rejected as Reactor's schedulers reject theirs; a task armed
     *         before the graceful disposal began still runs, and the disposal waits for it, unless the actor,
     *         when the task falls due, is suspended or its downstream has no demand: the disposal does not wait
     *         for a suspended actor's work, so the task is then dropped with the messages it holds, its handle
     *         disposed)
     */
    Disposable schedule(Duration delay, Runnable task);

    /** @return this actor's path, {@code <group>/<name>} */
    String path();

    /** @return the name of this actor's group */
    String group();

    /** @return how many times the current message has failed and been retried so far */
    int attempt();
}
