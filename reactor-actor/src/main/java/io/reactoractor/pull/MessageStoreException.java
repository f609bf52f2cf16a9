package io.reactoractor.pull;

/**
 * The message store could not be reached or did not answer in time (an {@link AsyncMessageStore}'s
 * call failed): a pull, an append or an acknowledgement was not carried out. Nothing was acknowledged;
 * the caller may retry. A web front end maps it to "503 Service Unavailable".
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
