package io.reactoractor.tck;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.ActorOperators;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * {@link ActorOperators#publishOn} as a Publisher over a source it fuses with synchronously
 * ({@code Flux.fromStream}: the drain polls the source on the actor's turn, nothing is requested
 * upstream). Each subscription creates its own actor and its own stream, so several subscribers are
 * supported (§1.11 multicast tests run).
 */
public class FairPublishOnFusedTckTest extends PublisherVerification<Long> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-fair-publish-on-fused");

    public FairPublishOnFusedTckTest() {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
    }

    @Override
    public Publisher<Long> createPublisher(long elements) {
        return Flux.fromStream(() -> java.util.stream.LongStream.range(0, elements).boxed())
                .transform(ActorOperators.publishOn(scheduler, 16));
    }

    @Override
    public Publisher<Long> createFailedPublisher() {
        return Flux.<Long>error(new RuntimeException("failed upstream (TCK)"))
                .transform(ActorOperators.publishOn(scheduler));
    }

    @Override
    public long maxElementsFromPublisher() {
        return Long.MAX_VALUE - 1;
    }
}
