package io.reactoractor.tck;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.Actor;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * The {@link Actor}'s outbound side as a Publisher: an identity actor (capacity 16) fed by a
 * generated upstream of {@code n} longs.
 *
 * <p>Optional rules that do not apply and are skipped by the TCK itself:
 * <ul>
 *   <li>§1.11 multicast ({@code optional_spec111_*}, {@code maySupportMultiSubscribe}): the actor is
 *       unicast by design (a second subscriber gets {@code onError(IllegalStateException)}), so the
 *       TCK reports these as "not verified" after observing the rejection.</li>
 * </ul>
 */
public class ActorPublisherTckTest extends PublisherVerification<Long> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-actor-publisher");

    public ActorPublisherTckTest() {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
    }

    @Override
    public Publisher<Long> createPublisher(long elements) {
        Actor<Long, Long> actor = Actor.identity(scheduler, 16);
        LongSources.upTo(elements).subscribe(actor);
        return actor;
    }

    @Override
    public Publisher<Long> createFailedPublisher() {
        Actor<Long, Long> actor = Actor.identity(scheduler, 16);
        Flux.<Long>error(new RuntimeException("failed upstream (TCK)")).subscribe(actor);
        return actor;
    }

    @Override
    public long maxElementsFromPublisher() {
        return Long.MAX_VALUE - 1;
    }
}
