package io.reactoractor.tck;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.ActorOperators;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * {@link ActorOperators#publishOn} as a Publisher. Each subscription creates its own actor, so unlike
 * the bare actor this publisher supports several subscribers (§1.11 multicast tests run).
 */
public class FairPublishOnTckTest extends PublisherVerification<Long> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-fair-publish-on");

    public FairPublishOnTckTest() {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
    }

    @Override
    public Publisher<Long> createPublisher(long elements) {
        return LongSources.upTo(elements).transform(ActorOperators.publishOn(scheduler, 16));
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
