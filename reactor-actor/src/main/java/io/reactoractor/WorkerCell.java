package io.reactoractor;

import java.util.concurrent.atomic.AtomicInteger;
import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import io.reactoractor.internal.scheduling.ActorCell;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.scheduling.SchedulingGroup;
import io.reactoractor.internal.scheduling.Turn;

/**
 * The actor behind an {@link ActorWorker}: a FIFO mailbox of tasks run one at a time, in turns.
 */
final class WorkerCell extends ActorCell {

    /**
     * Chunks of {@value #MAILBOX_CHUNK} tasks: a worker usually holds a few tasks at a time (a publishOn
     * drain, a subscribeOn, a self-rescheduling task), and one is created per {@code subscribeOn}
     * subscription, so the empty mailbox's chunk is most of its cost; a burst links more chunks.
     */
    private static final int MAILBOX_CHUNK = 16;

    private final MpscChunkedArrayQueue<MailboxTask> mailbox = new MpscChunkedArrayQueue<>(MAILBOX_CHUNK);
    final TimedTasks timed;

    WorkerCell(SchedulerEngine engine, SchedulingGroup group, String path, TimedTasks timed) {
        super(engine, group, path, 1, false); // each task decorated when scheduled (ActorWorker)
        this.timed = timed;
    }

    /**
     * Offers a task and signals the actor.
     *
     * @return {@code false} if the worker is terminated (the task may already be cancelled by the drain)
     */
    boolean offer(MailboxTask task) {
        mailbox.offerRelease(task); // signal() fences before it reads the status (the handshake)
        return signal();
    }

    /**
     * Tasks cancelled while they wait in the mailbox, not yet drained: left out of {@link #pending()} (Reactor's
     * executors remove a cancelled task from their queue; an MPSC mailbox cannot, so it skips it later). Raised by
     * the cancelling thread, lowered by the task's {@link MailboxTask#takeCancelled} when the drain reaches it (a
     * CAS on its state: once per such task), so the count may briefly run ahead of the mailbox (then {@link
     * #pending()} is clamped at 0), never drift.
     */
    private final AtomicInteger cancelledQueued = new AtomicInteger();

    void cancelledWhileQueued(int delta) {
        cancelledQueued.addAndGet(delta);
    }

    /** @return tasks waiting in the mailbox that will run (cancelled ones left out) */
    int pending() {
        return Math.max(0, mailbox.size() - cancelledQueued.get());
    }

    @Override
    public int pendingWork() {
        return pending();
    }

    /** Idle for a graceful group shutdown: no queued task and no delayed task still due. */
    @Override
    public boolean isIdle() {
        return super.isIdle() && timed.isEmpty();
    }

    @Override
    protected boolean hasWork() {
        return !mailbox.isEmpty();
    }

    @Override
    public boolean hasClaimedWork() {
        return mailbox.size() > 0;
    }

    @Override
    protected void runTurn(Turn turn) {
        MailboxTask task;
        while (turn.shouldContinue() && (task = mailbox.poll()) != null) {
            if (task.takeCancelled()) {
                continue; // skipped: it never runs, so it is not counted as run (one cancelled later: run() skips it)
            }
            turn.run(task);
        }
    }

    @Override
    protected void drainTerminated() {
        MailboxTask task;
        while ((task = mailbox.poll()) != null) {
            task.takeCancelled();
            task.cancelPending();
        }
        timed.disposeAll();
    }
}
