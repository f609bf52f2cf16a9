package io.reactoractor.tck;

import io.reactoractor.ring.RingBuffer;

/**
 * A single-producer ring's ({@code RingBuffer.Builder.singleProducer()}) producer side as a Subscriber,
 * observed through a probe; otherwise exactly as {@link RingSubscriberWhiteboxTckTest}.
 */
public class RingSubscriberSpWhiteboxTckTest extends RingSubscriberWhiteboxTckTest {

    public RingSubscriberSpWhiteboxTckTest() {
        super("tck-ring-sp-whitebox");
    }

    @Override
    protected RingBuffer.Builder<Integer> ring16() {
        return super.ring16().singleProducer();
    }
}
