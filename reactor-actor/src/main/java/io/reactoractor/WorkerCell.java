package io.reactoractor;

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

    int pending() {
        return mailbox.size();
    }

    @Override
    public int pendingWork() {
        return mailbox.size();
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
    protected void runTurn(Turn turn) {
        MailboxTask task;
        while (turn.shouldContinue() && (task = mailbox.poll()) != null) {
            turn.run(task);
        }
    }

    @Override
    protected void drainTerminated() {
        MailboxTask task;
        while ((task = mailbox.poll()) != null) {
            task.cancelPending();
        }
        timed.disposeAll();
    }
}
