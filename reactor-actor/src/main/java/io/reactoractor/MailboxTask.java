package io.reactoractor;

/** A task waiting in a worker's mailbox: it runs on the actor, or is cancelled if never run. */
interface MailboxTask extends Runnable {

    /** Cancels the task if it has not started; called when its worker is terminated. */
    void cancelPending();

    /**
     * Whether the task was cancelled while it waited in the mailbox, and counted then in its worker's
     * {@link WorkerCell#cancelledWhileQueued}: the drain skips it (not run, not counted as run) and uncounts it.
     *
     * @return {@code true} once such a cancellation happened
     */
    default boolean cancelledWhileQueued() {
        return false;
    }
}
