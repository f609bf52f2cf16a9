package io.reactoractor.internal;

/**
 * A stage of this library that hands elements downstream through a {@code Subscription} (an actor's outbound
 * side, a fair {@code publishOn}, a ring consumer) and refuses new input while its scheduler or group closes
 * gracefully. What such a stage emits while closing is work it held when the closing began, so a closing actor
 * fed by it keeps granting it demand (see {@code InboundPort.drainsClosingStage}); any other upstream is new
 * input and gets none. Internal SPI.
 */
public interface ClosingStage {

    /**
     * @return whether this stage's scheduler or group is closing gracefully (or disposed): it refuses new
     *         input, so its output is bounded by what it held
     */
    boolean isClosingStage();
}
