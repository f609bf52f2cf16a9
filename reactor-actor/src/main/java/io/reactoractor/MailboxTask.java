package io.reactoractor;

/** A task waiting in a worker's mailbox: it runs on the actor, or is cancelled if never run. */
interface MailboxTask extends Runnable {

    /** Cancels the task if it has not started; called when its worker is terminated. */
    void cancelPending();

    /**
     * The drain reached the task: if it was cancelled while it waited in the mailbox (and counted then in its
     * worker's {@link WorkerCell#cancelledWhileQueued}), uncounts it, once, so the drain skips it (not run, not
     * counted as run).
     *
     * @return {@code true} if it was such a task
     */
    default boolean takeCancelled() {
        return false;
    }
}
