package io.reactoractor.benchmarks.fairness;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A baseline for the fairness benchmarks: the scheduling policy of QMQ's {@code ActorSystem} in fair
 * mode, as a Reactor {@link Scheduler}. Written for comparison only; not part of the library.
 *
 * <p>Every {@link #createWorker() worker} is an actor: a FIFO mailbox of tasks run one at a time, in
 * <em>turns</em>. A ready actor waits in <b>one global priority queue</b> (a {@link PriorityBlockingQueue}
 * behind a fixed {@link ThreadPoolExecutor}, exactly QMQ's construction) ordered by its <b>raw cumulative
 * run time</b>, the sum of its turn durations, ties broken by enqueue order. A turn runs tasks until the
 * mailbox is empty or the 5 ms quota is used (checked between tasks); the actor then goes back to the
 * queue if tasks are left.
 *
 * <p>Deliberately missing, because they are what the library adds: weights, groups, placement rules
 * (a new actor starts at 0 and so runs ahead of everyone until it has caught up; an actor's total never
 * decays) and preemption between tasks. Also left out, to stay small: time-based scheduling (the
 * {@code schedule(task, delay, unit)} variants reject, as Reactor's schedulers built on a plain
 * {@code Executor} do). Tasks given to the scheduler itself ({@link #schedule(Runnable)}) go round-robin
 * to one of {@code threads} long-lived lane actors, as {@code Schedulers.parallel()} picks a worker.
 */
public final class QmqStyleScheduler implements Scheduler {

    /** The quota of a turn, QMQ's default. */
    static final long QUOTA_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final String name;
    private final Carriers carriers;
    /** Ties between equal totals go to the actor that was queued first (QMQ: submit time). */
    private final AtomicLong enqueueSeq = new AtomicLong();
    private final QmqActor[] lanes;
    private final AtomicInteger nextLane = new AtomicInteger();
    private final Sinks.Empty<Void> terminated = Sinks.empty();
    private volatile boolean disposed;

    /**
     * Creates and starts the scheduler.
     *
     * @param name    thread name prefix
     * @param threads the fixed number of threads, at least 1
     */
    public QmqStyleScheduler(String name, int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1 but was " + threads);
        }
        this.name = Objects.requireNonNull(name, "name");
        this.carriers = new Carriers(threads, name, terminated);
        // with every core thread started, execute() always goes through the priority queue
        carriers.prestartAllCoreThreads();
        this.lanes = new QmqActor[threads];
        for (int i = 0; i < threads; i++) {
            lanes[i] = new QmqActor();
        }
    }

    @Override
    public Disposable schedule(Runnable task) {
        Objects.requireNonNull(task, "task");
        QmqActor lane = lanes[Math.floorMod(nextLane.getAndIncrement(), lanes.length)];
        return lane.schedule(task);
    }

    @Override
    public Worker createWorker() {
        QmqActor actor = new QmqActor();
        if (disposed) {
            actor.dispose(); // Reactor's convention: a worker of a disposed scheduler rejects its tasks
        }
        return actor;
    }

    /** Disposes now: new tasks are rejected, queued actors are abandoned, running turns end after their task. */
    @Override
    public void dispose() {
        disposed = true;
        carriers.shutdownNow();
    }

    /**
     * Rejects new tasks, lets the actors already queued run their current turn, then stops the threads.
     * Actors that would need another turn are abandoned (their re-queueing is rejected).
     */
    @Override
    public Mono<Void> disposeGracefully() {
        return Mono.defer(() -> {
            disposed = true;
            carriers.shutdown();
            return terminated.asMono();
        });
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }

    @Override
    public String toString() {
        return "QmqStyleScheduler[" + name + ", threads=" + carriers.getCorePoolSize() + "]";
    }

    /** An actor: a mailbox run in turns; the worker of {@link #createWorker()}. */
    final class QmqActor implements Worker, Runnable {

        private final Queue<QmqTask> mailbox = new ConcurrentLinkedQueue<>();
        /** QMQ's "Scheduled" bit: set while the actor is queued or running, so it is queued at most once. */
        private final AtomicBoolean scheduled = new AtomicBoolean();
        /** Raw cumulative run time; written only by the thread running a turn, published by the queue. */
        private long totalNanos;
        /** The priority key, frozen while the actor sits in the queue. */
        long queuedTotal;
        long queuedSeq;
        private volatile boolean disposed;

        @Override
        public Disposable schedule(Runnable task) {
            Objects.requireNonNull(task, "task");
            if (disposed || QmqStyleScheduler.this.disposed) {
                throw Exceptions.failWithRejected();
            }
            QmqTask t = new QmqTask(Schedulers.onSchedule(task));
            mailbox.offer(t);
            if (scheduled.compareAndSet(false, true)) {
                enqueue();
            }
            return t;
        }

        private void enqueue() {
            queuedTotal = totalNanos;
            queuedSeq = enqueueSeq.getAndIncrement();
            try {
                carriers.execute(this);
            } catch (RejectedExecutionException shutDown) {
                // the scheduler is shut down: the actor's remaining tasks are abandoned, as by dispose()
            }
        }

        /** One turn, on a carrier thread. */
        @Override
        public void run() {
            long start = System.nanoTime();
            QmqTask t;
            while ((t = mailbox.poll()) != null) {
                if (!disposed) {
                    t.runUnlessDisposed();
                }
                // disposed: the loop just empties the mailbox, cancelling what was left
                if (System.nanoTime() - start >= QUOTA_NANOS) {
                    break;
                }
            }
            totalNanos += System.nanoTime() - start;
            if (!mailbox.isEmpty()) {
                enqueue(); // still scheduled: straight back into the queue at its new total
                return;
            }
            scheduled.set(false);
            // a task offered after our last poll but before the flag was cleared saw the flag set and
            // did not enqueue: re-check, or it would wait for the next task to be scheduled
            if (!mailbox.isEmpty() && scheduled.compareAndSet(false, true)) {
                enqueue();
            }
        }

        /** Cancels every task that has not started; further tasks are rejected. */
        @Override
        public void dispose() {
            disposed = true;
            for (QmqTask t : mailbox) {
                t.dispose();
            }
        }

        @Override
        public boolean isDisposed() {
            return disposed;
        }

        long totalNanos() {
            return totalNanos;
        }
    }

    /** A task of an actor; disposing it before it starts means it will not run. */
    private static final class QmqTask implements Disposable {
        private final Runnable task;
        private volatile boolean disposed;

        QmqTask(Runnable task) {
            this.task = task;
        }

        void runUnlessDisposed() {
            if (disposed) {
                return;
            }
            try {
                task.run();
            } catch (Throwable e) {
                // like Reactor's schedulers: report, keep the thread (and the actor) going
                Exceptions.throwIfJvmFatal(e);
                Thread current = Thread.currentThread();
                current.getUncaughtExceptionHandler().uncaughtException(current, e);
            }
        }

        @Override
        public void dispose() {
            disposed = true;
        }

        @Override
        public boolean isDisposed() {
            return disposed;
        }
    }

    /** The fixed pool whose work queue is the global priority queue of ready actors. */
    private static final class Carriers extends ThreadPoolExecutor {
        private final Sinks.Empty<Void> terminated;

        Carriers(int threads, String name, Sinks.Empty<Void> terminated) {
            super(threads, threads, 0L, TimeUnit.MILLISECONDS,
                    new PriorityBlockingQueue<>(64, Carriers::compare), daemonThreads(name));
            this.terminated = terminated;
        }

        /** Only actors are ever queued: least cumulative time first, then first queued. */
        private static int compare(Runnable a, Runnable b) {
            QmqActor x = (QmqActor) a;
            QmqActor y = (QmqActor) b;
            int c = Long.compare(x.queuedTotal, y.queuedTotal);
            return c != 0 ? c : Long.compare(x.queuedSeq, y.queuedSeq);
        }

        @Override
        protected void terminated() {
            terminated.tryEmitEmpty();
        }

        private static ThreadFactory daemonThreads(String name) {
            AtomicInteger n = new AtomicInteger();
            return r -> {
                Thread t = new Thread(r, name + "-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            };
        }
    }
}
