package io.reactoractor.tck;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.ActorOperators;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * {@link ActorOperators#publishOn} as a Publisher over a source it fuses with asynchronously
 * ({@code limitRate}, a Reactor {@code publishOn} on the immediate scheduler, which offers {@code ASYNC}
 * fusion: it keeps the elements in its queue and signals {@code onNext(null)}, and the drain polls that queue
 * on the actor's turn, requesting and replenishing as for an unfused source). Each subscription creates its
 * own actor and its own stream, so several subscribers are supported (§1.11 multicast tests run).
 */
public class FairPublishOnAsyncFusedTckTest extends PublisherVerification<Long> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-fair-publish-on-async-fused");

    public FairPublishOnAsyncFusedTckTest() {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
    }

    @Override
    public Publisher<Long> createPublisher(long elements) {
        return Flux.fromStream(() -> java.util.stream.LongStream.range(0, elements).boxed())
                .hide()
                .limitRate(8)
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
