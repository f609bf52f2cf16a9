package io.reactoractor.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.Actor;
import org.reactivestreams.Processor;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.IdentityProcessorVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * {@code Actor.identity(scheduler, bufferSize)} as an identity Processor.
 *
 * <p>{@link #maxSupportedSubscribers()} is 1: the actor's outbound is unicast by design (documented in
 * {@link Actor}), so the TCK itself skips the multi-subscriber tests (§1.11 multicast, §1.4 "on all its
 * subscribers", "requested long ago" with two subscribers) as not verified.
 */
public class ActorIdentityProcessorTckTest extends IdentityProcessorVerification<Integer> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-identity-processor");
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public ActorIdentityProcessorTckTest() {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    @Override
    public Processor<Integer, Integer> createIdentityProcessor(int bufferSize) {
        return Actor.identity(scheduler, bufferSize);
    }

    @Override
    public Publisher<Integer> createFailedPublisher() {
        Actor<Integer, Integer> actor = Actor.identity(scheduler, 16);
        Flux.<Integer>error(new RuntimeException("failed upstream (TCK)")).subscribe(actor);
        return actor;
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
