package io.reactoractor.internal;

import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The sentinel a unicast publisher of the library (an actor's outbound port, a ring consumer) puts in
 * its subscriber slot once it terminated: the real subscriber is forgotten (rule 3.13) and a late
 * {@code subscribe} can tell "terminated" from "taken". It ignores every signal and cancels any
 * subscription handed to it. Not API.
 */
public final class TerminatedSubscriber implements Subscriber<Object> {

    private static final TerminatedSubscriber INSTANCE = new TerminatedSubscriber();
    private static final TerminatedSubscriber AFTER_SUBSCRIBER = new TerminatedSubscriber();

    private TerminatedSubscriber() {
    }

    /**
     * @param <T> the slot's element type
     * @return the one sentinel, typed for the caller's slot (compare with {@code ==})
     */
    @SuppressWarnings("unchecked")
    public static <T> Subscriber<T> instance() {
        return (Subscriber<T>) (Subscriber<?>) INSTANCE;
    }

    /**
     * The sentinel of a publisher that terminated after a subscriber had attached: a later
     * {@code subscribe} is a second subscriber of a unicast publisher, where after {@link #instance()} it
     * is the first one, which learns how the publisher ended.
     *
     * @param <T> the slot's element type
     * @return the one sentinel for that case (compare with {@code ==})
     */
    @SuppressWarnings("unchecked")
    public static <T> Subscriber<T> afterSubscriber() {
        return (Subscriber<T>) (Subscriber<?>) AFTER_SUBSCRIBER;
    }

    @Override
    public void onSubscribe(Subscription s) {
        s.cancel();
    }

    @Override
    public void onNext(Object o) {
    }

    @Override
    public void onError(Throwable t) {
    }

    @Override
    public void onComplete() {
    }
}
