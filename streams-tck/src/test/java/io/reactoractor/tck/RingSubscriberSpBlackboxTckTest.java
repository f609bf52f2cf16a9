package io.reactoractor.tck;

import io.reactoractor.ring.RingBuffer;

/**
 * A single-producer ring's ({@code RingBuffer.Builder.singleProducer()}) producer side as a Subscriber,
 * blackbox; otherwise exactly as {@link RingSubscriberBlackboxTckTest}.
 */
public class RingSubscriberSpBlackboxTckTest extends RingSubscriberBlackboxTckTest {

    public RingSubscriberSpBlackboxTckTest() {
        super("tck-ring-sp-blackbox");
    }

    @Override
    protected RingBuffer.Builder<Integer> ring16() {
        return super.ring16().singleProducer();
    }
}
