package io.reactoractor.ring;

import java.util.Objects;

import org.reactivestreams.Processor;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * A single-consumer ring as an identity {@link Processor}: the ring is the subscriber side, its one
 * published consumer passes every event on unchanged. Demand upstream is the ring's free space, which
 * the consumer frees only as its (unicast) subscriber requests.
 *
 * @param <T> the element type
 */
public final class RingProcessor<T> implements Processor<T, T>, CoreSubscriber<T>, Scannable {

    private final RingBuffer<T> ring;
    private final RingConsumer<T, T> consumer;

    private RingProcessor(RingBuffer<T> ring) {
        this.ring = ring;
        this.consumer = ring.publishedConsumer("identity", (e, s, eob) -> e);
        ring.start();
    }

    /**
     * @param scheduler an {@link io.reactoractor.ActorScheduler} or one of its groups
     * @param size      the ring size: a power of two (see {@link RingBuffer.Builder#size(int)})
     * @param <T>       the element type
     * @return a started processor
     * @throws NullPointerException     if {@code scheduler} is {@code null}
     * @throws IllegalArgumentException if {@code scheduler} is not an actor scheduler or group, or
     *                                  {@code size} is not a power of two in range
     */
    public static <T> RingProcessor<T> create(Scheduler scheduler, int size) {
        return new RingProcessor<>(RingBuffer.<T>builder(scheduler).size(size).build());
    }

    /**
     * A processor over a {@linkplain RingBuffer.Builder#singleProducer() single-producer} ring: its
     * {@code Subscriber} side is the ring's one producer (rule 1.3 serialises {@code onNext}), so
     * publishing costs no atomic operation per element. Once it is subscribed to an upstream, the
     * imperative methods of {@link #ring()} throw {@link IllegalStateException}; used imperatively
     * first, a later {@code onSubscribe} is cancelled and closes the ring with that error.
     *
     * @param scheduler an {@link io.reactoractor.ActorScheduler} or one of its groups
     * @param size      the ring size: a power of two (see {@link RingBuffer.Builder#size(int)})
     * @param <T>       the element type
     * @return a started processor
     * @throws NullPointerException     if {@code scheduler} is {@code null}
     * @throws IllegalArgumentException if {@code scheduler} is not an actor scheduler or group, or
     *                                  {@code size} is not a power of two in range
     */
    public static <T> RingProcessor<T> createSingleProducer(Scheduler scheduler, int size) {
        return new RingProcessor<>(RingBuffer.<T>builder(scheduler).size(size).singleProducer().build());
    }

    /** @return the ring behind this processor (metrics, {@code tryPublish}, {@code publish}) */
    public RingBuffer<T> ring() {
        return ring;
    }

    /** @return the ring's only consumer, the processor's publisher side */
    public RingConsumer<T, T> consumer() {
        return consumer;
    }

    @Override
    public void subscribe(Subscriber<? super T> s) {
        consumer.subscribe(s);
    }

    /**
     * The context the processor exposes to its upstream (it is a {@link CoreSubscriber}, so Reactor hands
     * it over without a wrapper): its subscriber's, as Reactor's processors expose theirs, or an empty one
     * before anyone subscribed.
     *
     * @return the downstream subscriber's context, or an empty one
     */
    @Override
    public Context currentContext() {
        return consumer.subscriberContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
        ring.onSubscribe(s);
    }

    @Override
    public void onNext(T t) {
        ring.onNext(t);
    }

    @Override
    public void onError(Throwable t) {
        ring.onError(Objects.requireNonNull(t, "onError throwable"));
    }

    @Override
    public void onComplete() {
        ring.onComplete();
    }

    /**
     * Reactor's {@link Scannable} view: the subscriber side's attributes come from the ring
     * ({@code PARENT} is the upstream's subscription), {@code ACTUAL} and
     * {@code REQUESTED_FROM_DOWNSTREAM} from its consumer; see {@link RingBuffer#scanUnsafe}.
     */
    @Override
    public Object scanUnsafe(Attr key) {
        if (key == Attr.ACTUAL || key == Attr.REQUESTED_FROM_DOWNSTREAM) {
            return consumer.scanUnsafe(key);
        }
        return ring.scanUnsafe(key);
    }

    @Override
    public String toString() {
        return "RingProcessor[" + ring + "]";
    }
}
