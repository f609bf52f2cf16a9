package io.reactoractor.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingProcessor;
import org.reactivestreams.Processor;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.IdentityProcessorVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * A single-consumer, single-producer ring ({@link RingProcessor#createSingleProducer}) as an identity
 * Processor (the ring's Subscriber side is its one producer); otherwise as
 * {@link RingIdentityProcessorTckTest}. The ring size must be a power of two: the TCK's buffer size
 * is rounded down to one.
 *
 * <p>{@link #maxSupportedSubscribers()} is 1: a ring consumer is unicast by design, so the TCK skips
 * the multi-subscriber tests as not verified.
 */
public class RingSpIdentityProcessorTckTest extends IdentityProcessorVerification<Integer> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-ring-sp-processor");
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public RingSpIdentityProcessorTckTest() {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    @Override
    public Processor<Integer, Integer> createIdentityProcessor(int bufferSize) {
        return RingProcessor.createSingleProducer(scheduler, Integer.highestOneBit(Math.max(1, bufferSize)));
    }

    @Override
    public Publisher<Integer> createFailedPublisher() {
        RingProcessor<Integer> p = RingProcessor.createSingleProducer(scheduler, 16);
        Flux.<Integer>error(new RuntimeException("failed upstream (TCK)")).subscribe(p);
        return p;
    }

    @Override
    public ExecutorService publisherExecutorService() {
        return helper;
    }

    @Override
    public Integer createElement(int element) {
        return element;
    }

    @Override
    public long maxSupportedSubscribers() {
        return 1;
    }
}
