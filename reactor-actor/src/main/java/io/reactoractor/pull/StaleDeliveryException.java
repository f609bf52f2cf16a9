package io.reactoractor.pull;

/**
 * An acknowledgement or nack named a delivery of another {@linkplain MessageStore#epoch() store epoch}
 * (typically from before a restart of an in-memory store): its offsets may now name other messages,
 * so nothing was settled. The consumer pulls again; the HTTP sample answers {@code 409 Conflict}.
 */
public final class StaleDeliveryException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** The epoch the caller named (part of the serialized form). */
    private final String epoch;
    /** The store's epoch when the call was refused (part of the serialized form). */
    private final String currentEpoch;

    /**
     * @param subject      the subject
     * @param group        the consumer group
     * @param epoch        the epoch the caller named
     * @param currentEpoch the store's epoch
     */
    public StaleDeliveryException(String subject, String group, String epoch, String currentEpoch) {
        super("epoch '" + epoch + "' of " + subject + "/" + group + " is stale (the store's epoch is '"
                + currentEpoch + "'): the offsets may name other messages now; nothing was settled, pull again");
        this.epoch = epoch;
        this.currentEpoch = currentEpoch;
    }

    /** @return the epoch the caller named */
    public String epoch() {
        return epoch;
    }

    /** @return the store's current epoch */
    public String currentEpoch() {
        return currentEpoch;
    }
}
