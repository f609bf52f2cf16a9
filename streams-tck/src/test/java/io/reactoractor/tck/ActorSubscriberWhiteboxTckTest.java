package io.reactoractor.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.Actor;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.BaseSubscriber;

/**
 * An actor's inbound port ({@code actor.newSubscriber()}) as a Subscriber, observed through a probe.
 *
 * <p>The port requests its share of the mailbox's free space itself, up front, and more as messages
 * leave the mailbox; so the puppet's {@code triggerRequest(n)} is implemented as {@code request(n)} on
 * the actor's <em>outbound</em> subscription (a downstream that requests nothing by itself): the
 * mailbox drains by {@code n}, credits come back, and the port requests more from upstream.
 * {@code signalCancel()} cancels that downstream, which stops the actor and cancels its upstreams.
 */
public class ActorSubscriberWhiteboxTckTest extends SubscriberWhiteboxVerification<Integer> {

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-subscriber-whitebox");
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    public ActorSubscriberWhiteboxTckTest() {
        super(TckSupport.environment());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    @Override
    public Subscriber<Integer> createSubscriber(WhiteboxSubscriberProbe<Integer> probe) {
        Actor<Integer, Integer> actor = Actor.identity(scheduler, 16);
        ManualDownstream downstream = new ManualDownstream();
        actor.subscribe(downstream);
        return new ProbedSubscriber(actor.newSubscriber(), probe, downstream);
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
