package io.reactoractor.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.BaseSubscriber;

/**
 * The ring's producer side as a Subscriber, observed through a probe.
 *
 * <p>The ring requests its free space itself, up front, and more as its consumer advances; so the
 * puppet's {@code triggerRequest(n)} is {@code request(n)} on the subscription of the ring's only
 * (published) consumer: it handles {@code n} more events, slots free up, and the ring requests more
 * from upstream. {@code signalCancel()} cancels that downstream: the consumer leaves the gating set.
 */
public class RingSubscriberWhiteboxTckTest extends SubscriberWhiteboxVerification<Integer> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-ring-whitebox");
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public RingSubscriberWhiteboxTckTest() {
        super(TckSupport.environment());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    @Override
    public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        RingConsumer<Integer, Integer> consumer = ring.publishedConsumer("identity", (e, s, eob) -> e);
        ring.start();
        ManualDownstream downstream = new ManualDownstream();
        consumer.subscribe(downstream);
        return new ProbedSubscriber(ring, probe, downstream);
    }

    @Override
    public ExecutorService publisherExecutorService() {
        return helper;
    }

    @Override
    public Integer createElement(int element) {
        return element;
    }

    /** The actor's downstream: requests only when the puppet says so. */
    static final class ManualDownstream extends BaseSubscriber<Integer> {
        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            // no initial demand: the puppet drives it
        }
    }

    /** Delegates every signal to the real subscriber, then reports it to the probe. */
    static final class ProbedSubscriber implements Subscriber<Integer> {
        private final Subscriber<Integer> delegate;
        private final WhiteboxSubscriberProbe<Integer> probe;
        private final ManualDownstream downstream;

        ProbedSubscriber(Subscriber<Integer> delegate, WhiteboxSubscriberProbe<Integer> probe,
                ManualDownstream downstream) {
            this.delegate = delegate;
            this.probe = probe;
            this.downstream = downstream;
        }

        @Override
        public void onSubscribe(Subscription s) {
            delegate.onSubscribe(s);
            probe.registerOnSubscribe(new SubscriberPuppet() {
                @Override
                public void triggerRequest(long elements) {
                    downstream.request(elements);
                }

                @Override
                public void signalCancel() {
                    downstream.cancel();
                }
            });
        }

        @Override
        public void onNext(Integer t) {
            delegate.onNext(t);
            probe.registerOnNext(t);
        }

        @Override
        public void onError(Throwable t) {
            delegate.onError(t);
            probe.registerOnError(t);
        }

        @Override
        public void onComplete() {
            delegate.onComplete();
            probe.registerOnComplete();
        }
    }
}
