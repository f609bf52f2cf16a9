package io.reactoractor.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import org.testng.annotations.AfterClass;

/**
 * A single-producer ring's ({@code RingBuffer.Builder.singleProducer()}) producer side as a Subscriber,
 * observed through a probe; otherwise as {@link RingSubscriberWhiteboxTckTest}.
 *
 * <p>The ring requests its free space itself, up front, and more as its consumer advances; so the
 * puppet's {@code triggerRequest(n)} is {@code request(n)} on the subscription of the ring's only
 * (published) consumer: it handles {@code n} more events, slots free up, and the ring requests more
 * from upstream. {@code signalCancel()} cancels that downstream: the last consumer leaves, so the
 * ring cancels its upstream. The probe and the manual downstream are
 * {@link ActorSubscriberWhiteboxTckTest}'s.
 */
public class RingSubscriberSpWhiteboxTckTest extends SubscriberWhiteboxVerification<Integer> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-ring-sp-whitebox");
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public RingSubscriberSpWhiteboxTckTest() {
        super(TckSupport.environment());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    @Override
    public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).singleProducer().build();
        RingConsumer<Integer, Integer> consumer = ring.publishedConsumer("identity", (e, s, eob) -> e);
        ring.start();
        ActorSubscriberWhiteboxTckTest.ManualDownstream downstream = new ActorSubscriberWhiteboxTckTest.ManualDownstream();
        consumer.subscribe(downstream);
        return new ActorSubscriberWhiteboxTckTest.ProbedSubscriber(ring, probe, downstream);
    }

    @Override
    public ExecutorService publisherExecutorService() {
        return helper;
    }

    @Override
    public Integer createElement(int element) {
        return element;
    }
}
