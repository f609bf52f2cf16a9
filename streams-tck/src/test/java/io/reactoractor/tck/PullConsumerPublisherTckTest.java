package io.reactoractor.tck;

import java.util.concurrent.atomic.AtomicLong;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.ConsumerOptions;
import io.reactoractor.pull.Delivery;
import io.reactoractor.pull.PullConsumer;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;

/**
 * The pull consumer's reactive consumer ({@code PullConsumer.consume}) as a Publisher.
 *
 * <p>A consumer is infinite by design (it keeps long-polling its group), while the TCK's
 * {@code createPublisher(n)} must emit {@code n} elements and complete. So each publisher is a fresh
 * subject holding exactly {@code n} messages, consumed with {@code .take(n, false)}: completion comes
 * from Reactor's {@code take}, which passes the subscriber's demand on unchanged ({@code take(n)} alone
 * would cap it at {@code n}, so the TCK's cumulative demand up to {@code Long.MAX_VALUE} would never reach
 * the consumer); everything the TCK checks (demand turned into pulls, demand summed up to
 * {@code Long.MAX_VALUE}, no more {@code onNext} than requested, serial signals, cancellation dropping the
 * subscriber) reaches the consumer's own subscription through it. The failed publisher is {@code consume()} on a disposed
 * consumer, signalled by the consumer itself.
 *
 * <p>Tests the TCK skips ("not verified") and why:
 * <ul>
 *   <li>§1.11 multicast ({@code optional_spec111_*}): every subscription is a distinct consumer of the
 *       group, and a group's consumers <em>share</em> its messages (each message goes to one of them),
 *       by design; they do not receive the same elements.</li>
 *   <li>{@code required_spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue}:
 *       {@link #maxElementsFromPublisher()} is 4,096 because each element is a stored message, so the
 *       TCK's near-{@code Long.MAX_VALUE} publisher cannot be materialised. Demand accumulation up to
 *       {@code Long.MAX_VALUE} is covered by the consumer's own code ({@code Operators.addCap}) and by
 *       {@code required_spec317_mustSupportACumulativePendingElementCountUpToLongMaxValue}, which runs.</li>
 * </ul>
 */
public class PullConsumerPublisherTckTest extends PublisherVerification<Delivery> {

    private static final AtomicLong SUBJECTS = new AtomicLong();

    private final ActorScheduler scheduler = TckSupport.scheduler("tck-pull-consumer");
    private final PullConsumer consumer = PullConsumer.builder(scheduler).build();

    public PullConsumerPublisherTckTest() {
        super(TckSupport.environment(), TckSupport.publisherReferenceGcTimeoutMillis());
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        consumer.dispose();
        TckSupport.disposeBounded(scheduler);
    }

    @Override
    public Publisher<Delivery> createPublisher(long elements) {
        String subject = "tck-" + SUBJECTS.incrementAndGet();
        for (long i = 0; i < elements; i++) {
            consumer.append(subject, new byte[] {(byte) i});
        }
        return consumer.consume(subject, "tck", ConsumerOptions.builder().batchSize(16).build())
                .take(elements, false);
    }

    @Override
    public Publisher<Delivery> createFailedPublisher() {
        PullConsumer disposed = PullConsumer.builder(scheduler).build();
        disposed.dispose();
        return disposed.consume("tck-failed", "tck");
    }

    @Override
    public long maxElementsFromPublisher() {
        return 4_096;
    }
}
