package io.reactoractor.tck;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * A ring consumer ({@code RingBuffer.publishedConsumer}) of a single-producer ring
 * ({@code RingBuffer.Builder.singleProducer()}) as a Publisher: the join C of a diamond
 * 1 → (A, B) → C on a ring of 16 slots, fed by a generated upstream of {@code n} longs, so every
 * element C emits went through the graph.
 *
 * <p>The §1.11 multicast rules are skipped by the TCK itself: a consumer is unicast by design (a
 * second subscriber gets {@code onError(IllegalStateException)}).
 */
public class RingConsumerPublisherSpTckTest extends PublisherVerification<Long> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-ring-sp-publisher");

    public RingConsumerPublisherSpTckTest() {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
    }

    private RingConsumer<Long, Long> diamond(RingBuffer<Long> ring) {
        RingConsumer<Long, Void> a = ring.consumer("a", (e, s, eob) -> null);
        RingConsumer<Long, Void> b = ring.consumer("b", (e, s, eob) -> null);
        RingConsumer<Long, Long> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.handleEventsWith(a, b).then(c);
        ring.start();
        return c;
    }

    @Override
    public Publisher<Long> createPublisher(long elements) {
        RingBuffer<Long> ring = RingBuffer.<Long>builder(scheduler).size(16).singleProducer().build();
        RingConsumer<Long, Long> c = diamond(ring);
        LongSources.upTo(elements).subscribe(ring);
        return c;
    }

    @Override
    public Publisher<Long> createFailedPublisher() {
        RingBuffer<Long> ring = RingBuffer.<Long>builder(scheduler).size(16).singleProducer().build();
        RingConsumer<Long, Long> c = diamond(ring);
        Flux.<Long>error(new RuntimeException("failed upstream (TCK)")).subscribe(ring);
        return c;
    }

    @Override
    public long maxElementsFromPublisher() {
        return Long.MAX_VALUE - 1;
    }
}
