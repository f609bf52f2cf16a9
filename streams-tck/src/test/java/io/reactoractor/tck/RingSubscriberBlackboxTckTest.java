package io.reactoractor.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.testng.annotations.AfterClass;

/**
 * The ring's producer side as a Subscriber, blackbox: a fresh ring of 16 slots with one consumer that
 * needs no subscriber, so slots free up and the ring keeps requesting by itself (its demand is its
 * free space; {@code triggerRequest} needs to do nothing).
 */
public class RingSubscriberBlackboxTckTest extends SubscriberBlackboxVerification<Integer> {

    final ActorScheduler scheduler;
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public RingSubscriberBlackboxTckTest() {
        this("tck-ring-blackbox");
    }

    /** The same verification on a scheduler of its own (the single-producer subclass). */
    protected RingSubscriberBlackboxTckTest(String schedulerName) {
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
    public Subscriber<Integer> createSubscriber() {
        RingBuffer<Integer> ring = ring16().build();
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
