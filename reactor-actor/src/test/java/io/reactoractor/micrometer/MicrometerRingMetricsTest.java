package io.reactoractor.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import io.reactoractor.ring.RingErrorPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The ring's gauges and counters read the ring's getters; a ring on a scheduler with a Micrometer
 * binding registers them itself when it starts and removes them when it terminates.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MicrometerRingMetricsTest {

    private static final Duration LONG = Duration.ofSeconds(30);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-metrics").threads(1).build();
    private final SimpleMeterRegistry metered = new SimpleMeterRegistry();
    private final ActorScheduler meteredScheduler = ActorScheduler.builder().name("ring-metered").threads(2)
            .metrics(MicrometerActorMetrics.of(metered)).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
        meteredScheduler.dispose();
    }

    private static List<Meter> ringMeters(MeterRegistry registry) {
        return registry.getMeters().stream().filter(m -> m.getId().getName().startsWith("reactor.actor.ring."))
                .collect(Collectors.toList());
    }

    @Test
    void lagAndRemainingCapacityFollowTheRing() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).name("r").size(8).build();
        RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerRingMetrics binding = MicrometerRingMetrics.bind(ring, registry);
        for (int i = 0; i < 3; i++) {
            ring.tryPublish(i); // c has no subscriber: nothing is handled, the lag grows
        }
        assertEquals(3.0, registry.get("reactor.actor.ring.lag").tag("consumer", "c").tag("ring", "r").gauge().value());
        assertEquals(5.0, registry.get("reactor.actor.ring.remaining.capacity").gauge().value());
        assertEquals(2.0, registry.get("reactor.actor.ring.cursor").gauge().value());
        assertEquals(0.0, registry.get("reactor.actor.ring.processed").functionCounter().count());
        assertEquals(0.0, registry.get("reactor.actor.ring.retried").functionCounter().count());
        assertEquals("ring-metrics", registry.get("reactor.actor.ring.cursor").gauge().getId().getTag("scheduler"));
        binding.close();
        assertNull(registry.find("reactor.actor.ring.lag").gauge());
        assertEquals(List.of(), ringMeters(registry));
        assertEquals(3, c.lag());
    }

    @Test
    void aRingOnAMeteredSchedulerRegistersItsMetersWhenItStartsAndRemovesThemWhenItTerminates() {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(meteredScheduler).name("orders").size(8)
                .errorPolicy(RingErrorPolicy.retry(2, Duration.ofMillis(1))).build();
        boolean[] failedOnce = {false};
        RingConsumer<Integer, Integer> a = ring.publishedConsumer("a", (e, s, eob) -> {
            if (e == 1 && !failedOnce[0]) { // actor-confined: one thread at a time
                failedOnce[0] = true;
                throw new IllegalStateException("once");
            }
            return e;
        });
        RingConsumer<Integer, Integer> b = ring.consumer("b", (e, s, eob) -> e);
        ring.handleEventsWith(a).then(b);
        assertEquals(List.of(), ringMeters(metered), "nothing before start");
        ring.start();
        for (int i = 0; i < 3; i++) {
            ring.tryPublish(i); // a has no subscriber yet: the lag grows
        }
        assertEquals(3.0, metered.get("reactor.actor.ring.lag").tag("consumer", "a").tag("ring", "orders")
                .tag("scheduler", "ring-metered").tag("group", meteredScheduler.defaultGroup().name()).gauge().value());
        assertEquals(2.0, metered.get("reactor.actor.ring.cursor").tag("ring", "orders").gauge().value());
        assertEquals(5.0, metered.get("reactor.actor.ring.remaining.capacity").tag("ring", "orders").gauge().value());
        assertEquals(2 + 2 * 4, ringMeters(metered).size(), "2 ring meters + 4 per consumer");

        ring.complete();
        StepVerifier.create(a).expectNext(0, 1, 2).verifyComplete();
        StepVerifier.create(ring.whenTerminated()).verifyComplete();
        assertEquals(List.of(), ringMeters(metered), "meters removed with the ring");
        assertEquals(1, a.retriedEvents());
        assertEquals(3, b.processedEvents());
    }

    @Test
    void manyShortLivedRingsLeaveNoMeters() {
        for (int i = 0; i < 200; i++) {
            RingBuffer<Integer> ring = RingBuffer.<Integer>builder(meteredScheduler).size(4).build();
            ring.consumer("a", (e, s, eob) -> e);
            RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, s, eob) -> e);
            ring.start();
            Flux.range(0, 10).subscribe(ring);
            StepVerifier.create(c).expectNextCount(10).expectComplete().verify(LONG);
            StepVerifier.create(ring.whenTerminated()).expectComplete().verify(LONG);
        }
        assertEquals(List.of(), ringMeters(metered));
    }

    @Test
    void aRingFailedByTheSchedulersDisposalRemovesItsMetersToo() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ActorScheduler own = ActorScheduler.builder().name("ring-metered-dispose").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(own).size(4).build();
        ring.publishedConsumer("c", (e, s, eob) -> e); // never subscribed: parks
        ring.start();
        assertEquals(2 + 4, ringMeters(registry).size());
        own.dispose();
        StepVerifier.create(ring.whenTerminated()).expectError().verify(LONG);
        assertEquals(List.of(), ringMeters(registry));
    }

    @Test
    void aLiveRingKeepsItsMetersWhenANamesakeComesAndGoes() {
        RingBuffer<Integer> first = RingBuffer.<Integer>builder(meteredScheduler).name("same").size(8).build();
        first.publishedConsumer("c", (e, s, eob) -> e); // never subscribed: stays live
        first.start();
        assertTrue(first.tryPublish(1));
        RingBuffer<Integer> second = RingBuffer.<Integer>builder(meteredScheduler).name("same").size(8).build();
        RingConsumer<Integer, Integer> c2 = second.publishedConsumer("c", (e, s, eob) -> e);
        second.start();
        second.complete();
        StepVerifier.create(c2).verifyComplete();
        StepVerifier.create(second.whenTerminated()).expectComplete().verify(LONG);
        // the namesake was not metered, and its end did not take the live ring's meters away
        assertNotNull(metered.find("reactor.actor.ring.lag").tag("ring", "same").gauge());
        assertEquals(1.0, metered.get("reactor.actor.ring.lag").tag("ring", "same").gauge().value(), "first's lag");
        first.complete();
        first.consumers().forEach(c -> Flux.from(c).subscribe());
        StepVerifier.create(first.whenTerminated()).expectComplete().verify(LONG);
        assertEquals(List.of(), ringMeters(metered));
    }
}
