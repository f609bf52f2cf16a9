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
 * The ring's producer side as a Subscriber, observed through a probe.
 *
 * <p>The ring requests its free space itself, up front, and more as its consumer advances; so the
 * puppet's {@code triggerRequest(n)} is {@code request(n)} on the subscription of the ring's only
 * (published) consumer: it handles {@code n} more events, slots free up, and the ring requests more
 * from upstream. {@code signalCancel()} cancels that downstream: the last consumer leaves, so the
 * ring cancels its upstream. The probe and the manual downstream are
 * {@link ActorSubscriberWhiteboxTckTest}'s.
 */
public class RingSubscriberWhiteboxTckTest extends SubscriberWhiteboxVerification<Integer> {

    final ActorScheduler scheduler;
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public RingSubscriberWhiteboxTckTest() {
        this("tck-ring-whitebox");
    }

    /** The same verification on a scheduler of its own (the single-producer subclass). */
    protected RingSubscriberWhiteboxTckTest(String schedulerName) {
        super(TckSupport.environment());
        scheduler = TckSupport.scheduler(schedulerName);
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    /** The builder of every ring this class verifies: 16 slots (the single-producer subclass adds its mode). */
    protected RingBuffer.Builder<Integer> ring16() {
        return RingBuffer.<Integer>builder(scheduler).size(16);
    }

    @Override
    public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
        RingBuffer<Integer> ring = ring16().build();
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
