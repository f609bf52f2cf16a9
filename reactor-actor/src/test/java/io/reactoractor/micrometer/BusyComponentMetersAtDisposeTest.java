package io.reactoractor.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.ActorMetrics;
import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.ForwardingMessageStore;
import io.reactoractor.pull.Message;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.ring.RingBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * "Its meters are removed before this returns" ({@code ActorScheduler.dispose()}, also {@code PullConsumer.dispose()}),
 * for the meters of a ring and of a pull pair whose actor is inside a turn at that moment: they used to go only
 * when that turn ended, so a namesake built right after on a scheduler (or consumer) of the same name was refused
 * its meters (a ring for its whole life, a pull pair until it retired).
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BusyComponentMetersAtDisposeTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ActorMetrics binding = MicrometerActorMetrics.of(registry);

    private List<String> meters(String prefix) {
        return registry.getMeters().stream().map(m -> m.getId().getName() + m.getId().getTags())
                .filter(n -> n.startsWith(prefix)).sorted().collect(Collectors.toList());
    }

    @Test
    void aRingBusyInItsHandlerLosesItsMetersInsideDisposeAndItsNamesakeIsMetered() throws Exception {
        ActorScheduler a = ActorScheduler.builder().name("same").threads(2).metrics(binding).build();
        CountDownLatch inHandler = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        RingBuffer<Integer> ra = RingBuffer.<Integer>builder(a.group("tenant", 1)).name("r").size(8).build();
        ra.handleEventsWith(ra.consumer("c", (e, seq, end) -> {
            inHandler.countDown();
            release.await(20, TimeUnit.SECONDS);
            return null;
        }));
        ra.start();
        ra.tryPublish(1);
        assertThat(inHandler.await(10, TimeUnit.SECONDS)).isTrue();
        a.dispose();
        assertThat(meters("reactor.actor.ring.")).as("the busy ring's meters when dispose() returned").isEmpty();

        ActorScheduler b = ActorScheduler.builder().name("same").threads(2).metrics(binding).build();
        try {
            RingBuffer<Integer> rb = RingBuffer.<Integer>builder(b.group("tenant", 1)).name("r").size(8).build();
            rb.handleEventsWith(rb.consumer("c", (e, seq, end) -> null));
            rb.start();
            for (int i = 0; i < 3; i++) {
                assertThat(rb.tryPublish(i)).isTrue();
            }
            release.countDown(); // the old ring's turn ends now: its late clean-up must leave the new ring's meters
            await(() -> rb.consumers().get(0).processedEvents() == 3, "the new ring handled its events");
            a.disposeGracefully().block(Duration.ofSeconds(10)); // the old scheduler's threads are gone: the turn ended
            assertThat(registry.get("reactor.actor.ring.processed").tag("scheduler", "same").tag("ring", "r")
                    .functionCounter().count()).as("the meter reads the new ring").isEqualTo(3);
        } finally {
            release.countDown();
            b.dispose();
        }
        assertThat(meters("reactor.actor.ring.")).isEmpty();
    }

    @Test
    void aPullPairInsideAStoreReadLosesItsMetersInsideTheSchedulersDispose() throws Exception {
        SlowStore store = new SlowStore();
        store.append("s", new byte[] {1});
        ActorScheduler s1 = ActorScheduler.builder().name("slow").threads(2).metrics(binding).build();
        PullConsumer a = PullConsumer.builder(s1).store(store).build();
        ActorScheduler s2 = null;
        PullConsumer b = null;
        try {
            store.blockNext.set(true);
            a.pullOnce("s", "g", 1).subscribe(x -> { }, e -> { });
            assertThat(store.inRead.await(10, TimeUnit.SECONDS)).isTrue();
            s1.dispose();
            assertThat(meters("reactor.actor.pull.")).as("the busy pair's meters when dispose() returned").isEmpty();

            s2 = ActorScheduler.builder().name("slow").threads(2).metrics(binding).build();
            b = PullConsumer.builder(s2).store(store).build();
            b.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
            store.release.countDown();
            s1.disposeGracefully().block(Duration.ofSeconds(10)); // the old scheduler's threads are gone: the turn ended
            b.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
            assertThat(registry.get("reactor.actor.pull.requests").tag("scheduler", "slow").tag("subject", "s")
                    .functionCounter().count()).as("the new pair is metered").isEqualTo(2);
        } finally {
            store.release.countDown();
            a.dispose();
            if (b != null) {
                b.dispose();
            }
            if (s2 != null) {
                s2.dispose();
            }
        }
    }

    @Test
    void aPullPairInsideAStoreReadLosesItsMetersInsideTheConsumersDispose() throws Exception {
        SlowStore store = new SlowStore();
        store.append("s", new byte[] {1});
        ActorScheduler s = ActorScheduler.builder().name("slow-consumer").threads(2).metrics(binding).build();
        PullConsumer a = PullConsumer.builder(s).store(store).build();
        PullConsumer b = null;
        try {
            store.blockNext.set(true);
            a.pullOnce("s", "g", 1).subscribe(x -> { }, e -> { });
            assertThat(store.inRead.await(10, TimeUnit.SECONDS)).isTrue();
            a.dispose();
            assertThat(meters("reactor.actor.pull.")).as("the busy pair's meters when dispose() returned").isEmpty();

            b = PullConsumer.builder(s).store(store).build();
            b.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
            store.release.countDown(); // the old pair's turn ends: its late clean-up must leave the new pair's meters
            await(() -> s.stats().actors() == 1, "the old pair's actor gone");
            for (int i = 0; i < 4; i++) {
                b.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
            }
            assertThat(registry.get("reactor.actor.pull.requests").tag("subject", "s").functionCounter().count())
                    .as("the new consumer's pair is metered").isEqualTo(5);
        } finally {
            store.release.countDown();
            if (b != null) {
                b.dispose();
            }
            s.dispose();
        }
        assertThat(meters("reactor.actor.pull.")).isEmpty();
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never: " + what);
            }
            Thread.sleep(1);
        }
    }

    /** An in-memory store whose next read, once armed, waits for the test (a slow real log). */
    static final class SlowStore extends ForwardingMessageStore {
        final AtomicBoolean blockNext = new AtomicBoolean();
        final CountDownLatch inRead = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public List<Message> read(String subject, long fromOffset, int maxMessages) {
            if (blockNext.compareAndSet(true, false)) {
                inRead.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return inner.read(subject, fromOffset, maxMessages);
        }
    }
}
