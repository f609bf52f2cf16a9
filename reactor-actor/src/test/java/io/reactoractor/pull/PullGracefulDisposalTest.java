package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import io.reactoractor.SchedulerHold;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * While the scheduler closes gracefully a pull is new work and is refused (PullConsumer's class doc), as the closing
 * scheduler refuses new tasks; acknowledgements still settle what was handed out. Without that, a consume stream
 * pulling again and again next to a producer that never pauses held the disposal open for good.
 */
class PullGracefulDisposalTest {

    private static final String S = "orders";
    private static final String G = "billing";
    private static final byte[] PAYLOAD = "m".getBytes(StandardCharsets.UTF_8);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("pull-graceful").threads(2).build();
    private final PullConsumer consumer = PullConsumer.builder(scheduler).build();

    @AfterEach
    void tearDown() {
        consumer.dispose();
        scheduler.dispose();
    }

    @Test
    void aConsumeStreamNextToANeverPausingProducerEndsWithTheRejection() throws Exception {
        AtomicLong delivered = new AtomicLong();
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        consumer.consume(S, G).subscribe(d -> delivered.incrementAndGet(), e -> {
            error.set(e);
            ended.countDown();
        }, ended::countDown);
        AtomicBoolean stop = new AtomicBoolean();
        Thread producer = new Thread(() -> {
            while (!stop.get()) {
                consumer.append(S, PAYLOAD);
            }
        }, "never-pausing-producer");
        producer.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (delivered.get() < 1_000) {
                assertTrue(System.nanoTime() < deadline, "traffic never flowed");
                Thread.onSpinWait();
            }

            scheduler.disposeGracefully().block(Duration.ofSeconds(30)); // never ended before the change

            assertTrue(ended.await(10, TimeUnit.SECONDS));
            assertInstanceOf(RejectedExecutionException.class, error.get());
        } finally {
            stop.set(true);
            producer.join();
        }
    }

    @Test
    void aPullIsRejectedWhileClosingAndAnAckStillSettles() throws Exception {
        CountDownLatch release = SchedulerHold.holdOpen(scheduler); // keeps the disposal open until released
        consumer.append(S, PAYLOAD);
        consumer.append(S, PAYLOAD);
        PullResult first = consumer.pull(S, G, 1, Duration.ZERO).block(Duration.ofSeconds(10));
        assertEquals(1, first.messages().size());

        CompletableFuture<Void> closed = scheduler.disposeGracefully().toFuture();

        assertThrows(RejectedExecutionException.class,
                () -> consumer.pull(S, G, 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10)));
        assertThrows(RejectedExecutionException.class, () -> consumer.consume(S, G).blockFirst(Duration.ofSeconds(10)));
        long committed = consumer.ack(S, G, List.of(first.messages().get(0).offset())).block(Duration.ofSeconds(10));
        assertEquals(1L, committed, "the ack of the message handed out before settles it: the group committed past it");
        release.countDown();
        closed.orTimeout(10, TimeUnit.SECONDS).join();
    }
}
