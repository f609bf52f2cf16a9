package io.reactoractor.internal.scheduling;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one timer facility of a scheduler: a binary heap of {@link TimerEntry entries} ordered by
 * deadline, served by a single thread ({@code <name>-timer}) that sleeps until the earliest
 * deadline. Firing only enqueues into an actor's mailbox, so user code never runs on this thread.
 *
 * <p>Cancellation removes the entry from the heap ({@code O(log n)}), so workloads that arm and
 * cancel many timeouts (long polling) do not accumulate dead entries.
 *
 * <p>For graceful shutdown it tracks how many entries it still owes the scheduler: queued
 * entries that are {@link TimerEntry#awaitedOnShutdown() awaited} plus entries being fired right
 * now. A delivery is counted until its {@code fire()} returned, i.e. until the work is visible in
 * the run queue, so "timer owes nothing, then run queue quiescent" is a sound termination test.
 */
final class TimerQueue implements Runnable {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private TimerEntry[] heap = new TimerEntry[64];
    private int size;
    private long seq;
    private int awaitedQueued;
    /** Queued {@linkplain TimerEntry#internal() internal} entries (the hog monitor's tick). */
    private int internalQueued;
    private int inFlight;
    private boolean shutdown;
    private final SchedulerEngine engine;
    private Thread thread;

    TimerQueue(SchedulerEngine engine) {
        this.engine = engine;
    }

    /** @return whether the calling thread is this timer's */
    boolean isTimerThread() {
        return Thread.currentThread() == thread;
    }

    void start(String name) {
        Thread t = new Thread(this, name);
        t.setDaemon(true);
        t.setUncaughtExceptionHandler(TaskErrors.UNCAUGHT);
        thread = t;
        engine.threadStarting();
        t.start();
    }

    /**
     * Schedules (or re-schedules) {@code e} at {@code deadline}.
     *
     * @return {@code false} if the timer is shut down
     */
    boolean schedule(TimerEntry e, long deadline) {
        lock.lock();
        try {
            if (shutdown) {
                return false;
            }
            if (e.heapIndex >= 0 && e.heapIndex < size && heap[e.heapIndex] == e) {
                removeAt(e.heapIndex);
                if (e.awaitedOnShutdown()) {
                    awaitedQueued--;
                }
            }
            e.deadline = deadline;
            e.seq = ++seq;
            add(e);
            if (e.awaitedOnShutdown()) {
                awaitedQueued++;
            }
            if (e.heapIndex == 0) {
                changed.signal();
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Removes {@code e} if queued. */
    boolean cancel(TimerEntry e) {
        lock.lock();
        try {
            int i = e.heapIndex;
            if (i < 0 || i >= size || heap[i] != e) {
                return false;
            }
            removeAt(i);
            if (e.awaitedOnShutdown()) {
                awaitedQueued--;
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Removes every queued entry that is neither awaited nor kept on shutdown (periodic work) and returns them. */
    List<TimerEntry> removeNotAwaited() {
        List<TimerEntry> removed = new ArrayList<>();
        lock.lock();
        try {
            for (int i = size - 1; i >= 0; i--) {
                if (!heap[i].awaitedOnShutdown() && !heap[i].keptOnShutdown()) {
                    removed.add(heap[i]);
                }
            }
            for (TimerEntry e : removed) {
                if (e.heapIndex >= 0) {
                    removeAt(e.heapIndex);
                }
            }
            changed.signal();
        } finally {
            lock.unlock();
        }
        return removed;
    }

    /** @return whether no awaited entry is queued or being delivered */
    boolean owesNothing() {
        lock.lock();
        try {
            return awaitedQueued == 0 && inFlight == 0;
        } finally {
            lock.unlock();
        }
    }

    /** @return armed user entries: the scheduler's own internal entries (the hog monitor) are not counted */
    int size() {
        lock.lock();
        try {
            return size - internalQueued;
        } finally {
            lock.unlock();
        }
    }

    void shutdown() {
        lock.lock();
        try {
            shutdown = true;
            Arrays.fill(heap, 0, size, null);
            size = 0;
            awaitedQueued = 0;
            internalQueued = 0;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void run() {
        TimerEntry[] due = new TimerEntry[64];
        try {
            for (;;) {
                try {
                    if (!fireDue(due)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    // only shutdown() ends this thread; a stray interrupt must not stop every timer
                } catch (Throwable t) {
                    // an allocation failure or a bug in the loop itself: report (guarded) and go on
                    engine.internalError("running the timer loop", t);
                }
            }
        } finally {
            engine.timerExited();
        }
    }

    /**
     * Waits for the earliest deadline and fires every due entry (at most {@code due.length}).
     *
     * @return {@code false} once the queue is shut down
     */
    private boolean fireDue(TimerEntry[] due) throws InterruptedException {
        int n = 0;
        int awaited = 0;
        lock.lock();
        try {
            for (;;) {
                if (shutdown) {
                    return false;
                }
                if (size == 0) {
                    changed.await();
                    continue;
                }
                long wait = heap[0].deadline - System.nanoTime();
                if (wait <= 0) {
                    break;
                }
                changed.awaitNanos(wait);
            }
            long now = System.nanoTime();
            while (size > 0 && heap[0].deadline - now <= 0 && n < due.length) {
                TimerEntry e = heap[0];
                removeAt(0);
                if (e.awaitedOnShutdown()) {
                    awaitedQueued--;
                    awaited++;
                }
                due[n++] = e;
            }
            inFlight += awaited;
        } finally {
            lock.unlock();
        }
        try {
            for (int i = 0; i < n; i++) {
                TimerEntry e = due[i];
                due[i] = null;
                try {
                    e.fire();
                } catch (Throwable t) {
                    engine.timerFailed(t);
                }
            }
        } finally {
            for (int i = 0; i < n; i++) {
                due[i] = null;
            }
            if (awaited > 0) {
                lock.lock();
                try {
                    inFlight -= awaited;
                } finally {
                    lock.unlock();
                }
            }
        }
        return true;
    }

    static long deadlineAfter(long delay, TimeUnit unit) {
        long now = System.nanoTime();
        long d = unit.toNanos(Math.max(0L, delay));
        // saturate: a delay of Long.MAX_VALUE must not wrap into the past
        return d > Long.MAX_VALUE / 2 ? now + Long.MAX_VALUE / 2 : now + d;
    }

    // ------------------------------------------------------------------ heap (guarded by lock)

    private static boolean before(TimerEntry a, TimerEntry b) {
        long d = a.deadline - b.deadline;
        return d < 0 || (d == 0 && a.seq < b.seq);
    }

    private void add(TimerEntry e) {
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        heap[size] = e;
        e.heapIndex = size;
        size++;
        if (e.internal()) {
            internalQueued++;
        }
        up(e.heapIndex);
    }

    private void removeAt(int i) {
        TimerEntry removed = heap[i];
        removed.heapIndex = -1;
        if (removed.internal()) {
            internalQueued--;
        }
        int last = --size;
        if (i != last) {
            TimerEntry moved = heap[last];
            heap[last] = null;
            heap[i] = moved;
            moved.heapIndex = i;
            if (!up(i)) {
                down(i);
            }
        } else {
            heap[last] = null;
        }
    }

    private boolean up(int i) {
        TimerEntry e = heap[i];
        int start = i;
        while (i > 0) {
            int p = (i - 1) >>> 1;
            if (!before(e, heap[p])) {
                break;
            }
            heap[i] = heap[p];
            heap[i].heapIndex = i;
            i = p;
        }
        heap[i] = e;
        e.heapIndex = i;
        return i != start;
    }

    private void down(int i) {
        TimerEntry e = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int c = 2 * i + 1;
            int r = c + 1;
            if (r < size && before(heap[r], heap[c])) {
                c = r;
            }
            if (!before(heap[c], e)) {
                break;
            }
            heap[i] = heap[c];
            heap[i].heapIndex = i;
            i = c;
        }
        heap[i] = e;
        e.heapIndex = i;
    }
}
