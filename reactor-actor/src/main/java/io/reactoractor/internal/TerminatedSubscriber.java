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
