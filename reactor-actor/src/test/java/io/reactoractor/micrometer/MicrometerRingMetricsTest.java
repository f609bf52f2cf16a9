package io.reactoractor.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The ring's gauges and counters read the ring's getters. */
class MicrometerRingMetricsTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-metrics").threads(1).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
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
        binding.close();
        assertNull(registry.find("reactor.actor.ring.lag").gauge());
        assertEquals(3, c.lag());
    }
}
