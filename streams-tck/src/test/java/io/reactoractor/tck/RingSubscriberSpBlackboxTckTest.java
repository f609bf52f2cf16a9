package io.reactoractor.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.testng.annotations.AfterClass;

/**
 * A single-producer ring's ({@code RingBuffer.Builder.singleProducer()}) producer side as a Subscriber,
 * blackbox: a fresh ring of 16 slots with one consumer that
 * needs no subscriber, so slots free up and the ring keeps requesting by itself (its demand is its
 * free space; {@code triggerRequest} needs to do nothing).
 */
public class RingSubscriberSpBlackboxTckTest extends SubscriberBlackboxVerification<Integer> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-ring-sp-blackbox");
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public RingSubscriberSpBlackboxTckTest() {
        super(TckSupport.environment());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    @Override
    public Subscriber<Integer> createSubscriber() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).singleProducer().build();
        ring.consumer("sink", (e, s, eob) -> null);
        return ring.start();
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
