package io.reactoractor.tck;

import io.reactoractor.ring.RingBuffer;

/**
 * A ring consumer of a single-producer ring ({@code RingBuffer.Builder.singleProducer()}) as a Publisher:
 * the join C of a diamond; otherwise exactly as {@link RingConsumerPublisherTckTest}.
 */
public class RingConsumerPublisherSpTckTest extends RingConsumerPublisherTckTest {

    public RingConsumerPublisherSpTckTest() {
        super("tck-ring-sp-publisher");
    }

    @Override
    protected RingBuffer.Builder<Long> ring16() {
        return super.ring16().singleProducer();
    }
}
