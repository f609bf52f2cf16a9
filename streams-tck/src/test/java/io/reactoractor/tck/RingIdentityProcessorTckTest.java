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
 * A single-consumer ring ({@link RingProcessor}) as an identity Processor. The ring size must be a
 * power of two: the TCK's buffer size is rounded down to one.
 *
 * <p>{@link #maxSupportedSubscribers()} is 1: a ring consumer is unicast by design, so the TCK skips
 * the multi-subscriber tests as not verified.
 */
public class RingIdentityProcessorTckTest extends IdentityProcessorVerification<Integer> {

    final ActorScheduler scheduler;
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public RingIdentityProcessorTckTest() {
        this("tck-ring-processor");
    }

    /** The same verification on a scheduler of its own (the single-producer subclass). */
    protected RingIdentityProcessorTckTest(String schedulerName) {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
        scheduler = TckSupport.scheduler(schedulerName);
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    /** Every processor this class verifies (the single-producer subclass makes its own kind). */
    protected RingProcessor<Integer> newProcessor(int size) {
        return RingProcessor.create(scheduler, size);
    }

    @Override
    public Processor<Integer, Integer> createIdentityProcessor(int bufferSize) {
        return newProcessor(Integer.highestOneBit(Math.max(1, bufferSize)));
    }

    @Override
    public Publisher<Integer> createFailedPublisher() {
        RingProcessor<Integer> p = newProcessor(16);
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
