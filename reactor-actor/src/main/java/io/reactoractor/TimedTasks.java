package io.reactoractor;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The delayed and periodic tasks of one worker that are not finished yet: disposed with the worker,
 * and visited by a graceful group shutdown (which cancels the periodic ones and waits for the rest).
 *
 * <p>{@link #add} after {@link #disposeAll} refuses (and the caller rejects the task); a task added
 * concurrently with {@code disposeAll} is either refused or disposed by it, or sees the disposal
 * itself (the worker re-checks termination after arming).
 */
final class TimedTasks {

    private final Set<TimedTask> tasks = ConcurrentHashMap.newKeySet();
    private volatile boolean disposed;

    /** @return {@code false} if the worker was disposed (the task must be rejected) */
    boolean add(TimedTask t) {
        if (disposed) {
            return false;
        }
        tasks.add(t);
        if (disposed) {
            tasks.remove(t);
            return false;
        }
        return true;
    }

    void remove(TimedTask t) {
        tasks.remove(t);
    }

    /** @return whether no delayed or periodic task is pending */
    boolean isEmpty() {
        return tasks.isEmpty();
    }

    /** Cancels the periodic tasks (graceful shutdown); one-shot delayed tasks still run. */
    void cancelPeriodic() {
        for (TimedTask t : tasks) {
            if (t.isPeriodic()) {
                t.dispose();
            }
        }
    }

    /** Cancels every task and refuses new ones. */
    void disposeAll() {
        disposed = true;
        for (TimedTask t : tasks) {
            t.dispose();
        }
    }
}
