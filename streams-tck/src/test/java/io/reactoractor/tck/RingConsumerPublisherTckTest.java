package io.reactoractor.tck;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * A ring consumer ({@code RingBuffer.publishedConsumer}) as a Publisher: the join C of a diamond
 * 1 → (A, B) → C on a ring of 16 slots, fed by a generated upstream of {@code n} longs, so every
 * element C emits went through the graph.
 *
 * <p>The §1.11 multicast rules are skipped by the TCK itself: a consumer is unicast by design (a
 * second subscriber gets {@code onError(IllegalStateException)}).
 */
public class RingConsumerPublisherTckTest extends PublisherVerification<Long> {

    final ActorScheduler scheduler;

    public RingConsumerPublisherTckTest() {
        this("tck-ring-publisher");
    }

    /** The same verification on a scheduler of its own (the single-producer subclass). */
    protected RingConsumerPublisherTckTest(String schedulerName) {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
        scheduler = TckSupport.scheduler(schedulerName);
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

    /** The builder of every ring this class verifies: 16 slots (the single-producer subclass adds its mode). */
    protected RingBuffer.Builder<Long> ring16() {
        return RingBuffer.<Long>builder(scheduler).size(16);
    }

    @Override
    public Publisher<Long> createPublisher(long elements) {
        RingBuffer<Long> ring = ring16().build();
        RingConsumer<Long, Long> c = diamond(ring);
        LongSources.upTo(elements).subscribe(ring);
        return c;
    }

    @Override
    public Publisher<Long> createFailedPublisher() {
        RingBuffer<Long> ring = ring16().build();
        RingConsumer<Long, Long> c = diamond(ring);
        Flux.<Long>error(new RuntimeException("failed upstream (TCK)")).subscribe(ring);
        return c;
    }

    @Override
    public long maxElementsFromPublisher() {
        return Long.MAX_VALUE - 1;
    }
}
