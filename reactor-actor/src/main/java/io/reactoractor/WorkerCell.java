package io.reactoractor;

import io.reactoractor.mailbox.MpscLinkedQueue;
import io.reactoractor.scheduling.ActorCell;
import io.reactoractor.scheduling.SchedulerEngine;
import io.reactoractor.scheduling.SchedulingGroup;
import io.reactoractor.scheduling.Turn;
import reactor.core.Disposable;

/**
 * The actor behind an {@link ActorWorker}: a FIFO mailbox of tasks run one at a time, in turns.
 */
final class WorkerCell extends ActorCell {

    private final MpscLinkedQueue<MailboxTask> mailbox = new MpscLinkedQueue<>();
    final Disposable.Composite timed;

    WorkerCell(SchedulerEngine engine, SchedulingGroup group, String path, Disposable.Composite timed) {
        super(engine, group, path, 1);
        this.timed = timed;
    }

    /**
     * Offers a task and signals the actor.
     *
     * @return {@code false} if the worker is terminated (the task may already be cancelled by the drain)
     */
    boolean offer(MailboxTask task) {
        mailbox.offer(task);
        return signal();
    }

    int pending() {
        return mailbox.size();
    }

    @Override
    public int pendingWork() {
        return mailbox.size();
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
        timed.dispose();
    }
}
