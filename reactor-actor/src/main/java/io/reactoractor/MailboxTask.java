package io.reactoractor;

/** A task waiting in a worker's mailbox: it runs on the actor, or is cancelled if never run. */
interface MailboxTask extends Runnable {

    /** Cancels the task if it has not started; called when its worker is terminated. */
    void cancelPending();
}
