package io.reactoractor.tck;

import io.reactoractor.ring.RingProcessor;

/**
 * A single-consumer, single-producer ring ({@link RingProcessor#createSingleProducer}) as an identity
 * Processor (the ring's Subscriber side is its one producer); otherwise exactly as {@link RingIdentityProcessorTckTest}.
 */
public class RingSpIdentityProcessorTckTest extends RingIdentityProcessorTckTest {

    public RingSpIdentityProcessorTckTest() {
        super("tck-ring-sp-processor");
    }

    @Override
    protected RingProcessor<Integer> newProcessor(int size) {
        return RingProcessor.createSingleProducer(scheduler, size);
    }
}
