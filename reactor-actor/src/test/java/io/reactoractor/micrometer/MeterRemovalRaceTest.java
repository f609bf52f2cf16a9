package io.reactoractor.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.ActorGroup;
import io.reactoractor.ActorMetrics;
import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.Actor;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.ring.RingBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.BaseSubscriber;

/**
 * "Its meters are removed before this returns" when another thread is removing them at that moment: a ring's last
 * consumer terminating on a carrier, a group disposed on another thread, a pull pair retiring idle. The second
 * remover used to find them taken by the first and return while the first was still removing, so the meters
 * outlived {@code dispose()} (seen under CPU load: a namesake built right after could be refused them).
 *
 * <p>Deterministic: the registry holds the first remover (any thread but the test's) at its first removal until the
 * test's {@code dispose()} has begun, then lets it finish after a pause; a {@code dispose()} that does not wait for it
 * returns with the meters still registered.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MeterRemovalRaceTest {

    /** The thread running the test method (with a separate-thread timeout, not the one that built this instance). */
    private volatile Thread testThread;
    /** Counted down when another thread is inside its first removal of a meter named {@code holdPrefix*}. */
    private volatile CountDownLatch otherThreadRemoving = new CountDownLatch(1);
    private final AtomicBoolean held = new AtomicBoolean();
    private volatile String holdPrefix = "none";

    /**
     * Holds the first removal of a meter named {@code holdPrefix*} by a thread other than the test's for 300 ms, before
     * the registry removes it and outside its lock (a removal listener would run under it and hold up the test's own
     * removals too).
     */
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry() {
        @Override
        public Meter remove(Meter.Id id) {
            if (Thread.currentThread() != testThread && id.getName().startsWith(holdPrefix)
                    && held.compareAndSet(false, true)) {
                otherThreadRemoving.countDown();
                try {
                    Thread.sleep(300); // the test's dispose() runs meanwhile
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.remove(id);
        }
    };
    private final ActorMetrics binding = MicrometerActorMetrics.of(registry);

    private void holdTheFirstRemovalOnAnotherThread(String prefix) {
        testThread = Thread.currentThread();
        holdPrefix = prefix;
    }

    private List<String> meters(String prefix) {
        return registry.getMeters().stream().map(Meter::getId).filter(id -> id.getName().startsWith(prefix))
                .map(id -> id.getName() + id.getTags()).sorted().collect(Collectors.toList());
    }

    /**
     * {@code dispose()} and the scheduler's last exiting thread both remove the meters once the state is terminated;
     * the last thread used to be able to start first, and {@code dispose()} then returned while it was removing them.
     * Here {@code dispose()} is held inside its own call (an idle actor's terminal signal, delivered on the caller)
     * until the last thread is removing. On a busy machine the actor may still be ending its turn when
     * {@code dispose()} comes (its signal then goes out on the carrier): such a round proves nothing, so it is run
     * again, and the test asserts that the scenario happened.
     */
    @Test
    void theLastThreadExitingWhileDisposeIsUnderWayLeavesNoMetersWhenDisposeReturns() throws Exception {
        holdTheFirstRemovalOnAnotherThread("reactor.actor.");
        boolean happened = false;
        for (int round = 0; round < 20 && !happened; round++) {
            otherThreadRemoving = new CountDownLatch(1);
            held.set(false);
            CountDownLatch removing = otherThreadRemoving;
            ActorScheduler s = ActorScheduler.builder().name("exit-race-" + round).threads(2).metrics(binding).build();
            AtomicReference<Thread> signalledOn = new AtomicReference<>();
            Actor<Integer, Integer> actor = Actor.<Integer, Integer>builder(s).behaviour((m, ctx) -> true).build();
            actor.subscribe(new BaseSubscriber<>() {
                @Override
                protected void hookOnError(Throwable e) {
                    signalledOn.set(Thread.currentThread());
                    if (Thread.currentThread() == testThread) {
                        try {
                            removing.await(10, TimeUnit.SECONDS); // the threads exit meanwhile
                        } catch (InterruptedException ie) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }
            });
            assertThat(actor.tell(1)).isTrue();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (actor.processedMessages() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(1); // the carriers are running
            }
            Thread.sleep(10); // the turn ends (usually)
            s.dispose();
            assertThat(meters("")).as("when dispose() returned (round " + round + ")").isEmpty();
            happened = signalledOn.get() == testThread && removing.getCount() == 0;
        }
        assertThat(happened).as("a round where the last exiting thread removed meters inside dispose()").isTrue();
    }

    @Test
    void aRingEndingOnACarrierWhileTheSchedulerIsDisposedHasNoMetersWhenDisposeReturns() throws Exception {
        holdTheFirstRemovalOnAnotherThread("reactor.actor.ring.");
        ActorScheduler s = ActorScheduler.builder().name("ring-race").threads(2).metrics(binding).build();
        try {
            RingBuffer<Integer> ring = RingBuffer.<Integer>builder(s.group("tenant", 1)).name("r").size(8).build();
            ring.handleEventsWith(ring.consumer("c", (e, seq, end) -> {
                throw new IllegalStateException("stops the only consumer (RingErrorPolicy.STOP): the ring ends");
            }));
            ring.start();
            assertThat(meters("reactor.actor.ring.")).hasSize(6);
            assertThat(ring.tryPublish(1)).isTrue();
            assertThat(otherThreadRemoving.await(10, TimeUnit.SECONDS)).as("the ring's end removes its meters").isTrue();
        } finally {
            s.dispose();
        }
        assertThat(meters("reactor.actor.ring.")).as("when dispose() returned").isEmpty();
    }

    @Test
    void aGroupDisposedOnAnotherThreadWhileTheSchedulerIsDisposedHasNoMetersWhenDisposeReturns() throws Exception {
        holdTheFirstRemovalOnAnotherThread("reactor.actor.group.");
        ActorScheduler s = ActorScheduler.builder().name("group-race").threads(2).metrics(binding).build();
        Thread disposer;
        try {
            ActorGroup g = s.group("tenant", 1);
            assertThat(meters("reactor.actor.group.")).isNotEmpty();
            disposer = new Thread(g::dispose, "group-disposer");
            disposer.start();
            assertThat(otherThreadRemoving.await(10, TimeUnit.SECONDS)).as("the group's disposal removes its meters")
                    .isTrue();
        } finally {
            s.dispose();
        }
        assertThat(meters("")).as("when dispose() returned: the scheduler's and the group's").isEmpty();
        disposer.join(10_000);
    }

    @Test
    void aPullPairRetiringWhileItsConsumerIsDisposedHasNoMetersWhenDisposeReturns() throws Exception {
        holdTheFirstRemovalOnAnotherThread("reactor.actor.pull.");
        ActorScheduler s = ActorScheduler.builder().name("pull-race").threads(2).metrics(binding).build();
        try {
            PullConsumer consumer = PullConsumer.builder(s).idleTimeout(Duration.ofMillis(20)).build();
            try {
                consumer.pullOnce("s", "g", 1).block(Duration.ofSeconds(10)); // nothing to read: the pair goes idle
                assertThat(meters("reactor.actor.pull.")).isNotEmpty();
                assertThat(otherThreadRemoving.await(10, TimeUnit.SECONDS))
                        .as("the idle pair's retirement removes its meters").isTrue();
            } finally {
                consumer.dispose();
            }
            assertThat(meters("reactor.actor.pull.")).as("when the consumer's dispose() returned").isEmpty();
        } finally {
            s.dispose();
        }
    }
}
