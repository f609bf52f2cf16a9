package io.reactoractor.ring;

/** What a ring does when a {@link RingHandler} throws. */
public enum RingErrorPolicy {

    /**
     * Stop the ring: the upstream is cancelled, waiting publishes fail, and every consumer (the
     * failing one included) signals {@code onError} with the handler's exception at its next turn,
     * without handling further events. {@link RingBuffer#whenTerminated()} fails with it too.
     */
    STOP,

    /**
     * Skip the event: it counts as handled by the failing consumer (dependents still see it), no
     * result is emitted for it, and {@link RingConsumer#skippedEvents()} is incremented.
     */
    SKIP
}
