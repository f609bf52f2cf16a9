package io.reactoractor.pull;

/**
 * The message store could not be reached or did not answer in time (an {@link AsyncMessageStore}'s
 * call failed): a pull, an append or an acknowledgement was not carried out; the caller may retry. A
 * failed acknowledgement is kept by the consumer all the same: the messages are settled in this process
 * and it sends them again with the group's next acknowledge call (after a back-off), so an ack need not
 * be retried for its own sake; the group's actor does not retire until the store recorded them. A web
 * front end maps it to "503 Service Unavailable".
 */
public final class MessageStoreException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause   the store's error
     */
    public MessageStoreException(String message, Throwable cause) {
        super(message + ": " + (cause == null ? "unknown" : cause.toString()), cause);
    }
}
