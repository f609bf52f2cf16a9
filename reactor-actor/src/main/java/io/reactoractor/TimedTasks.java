package io.reactoractor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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

    private static final VarHandle TASKS;

    static {
        try {
            TASKS = MethodHandles.lookup().findVarHandle(TimedTasks.class, "tasks", Set.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * Created by the first {@link #add} (compare-and-set, so racing adders share one set): most workers
     * never get a delayed task, and a worker per {@code subscribeOn} is created and disposed per
     * subscription, so an eager set was a third of a short-lived worker's allocation.
     */
    private volatile Set<TimedTask> tasks;
    private volatile boolean disposed;

    /** @return {@code false} if the worker was disposed (the task must be rejected) */
    boolean add(TimedTask t) {
        if (disposed) {
            return false;
        }
        Set<TimedTask> set = tasks;
        if (set == null) {
            Set<TimedTask> fresh = ConcurrentHashMap.newKeySet();
            @SuppressWarnings("unchecked")
            Set<TimedTask> witness = (Set<TimedTask>) TASKS.compareAndExchange(this, null, fresh);
            set = witness == null ? fresh : witness;
        }
        set.add(t);
        if (disposed) {
            set.remove(t);
            return false;
        }
        return true;
    }

    void remove(TimedTask t) {
        Set<TimedTask> set = tasks;
        if (set != null) {
            set.remove(t);
        }
    }

    /** @return whether no delayed or periodic task is pending */
    boolean isEmpty() {
        Set<TimedTask> set = tasks;
        return set == null || set.isEmpty();
    }

    /** Cancels the periodic tasks (graceful shutdown); one-shot delayed tasks still run. */
    void cancelPeriodic() {
        Set<TimedTask> set = tasks;
        if (set == null) {
            return;
        }
        for (TimedTask t : set) {
            if (t.isPeriodic()) {
                t.dispose();
            }
        }
    }

    /** Cancels every task and refuses new ones. */
    void disposeAll() {
        disposed = true;
        // volatile write, then volatile read: an add that missed 'disposed' published its set before
        // its own re-check, so either this loop sees its task or that add sees 'disposed' and undoes
        Set<TimedTask> set = tasks;
        if (set == null) {
            return;
        }
        for (TimedTask t : set) {
            t.dispose();
        }
    }
}
