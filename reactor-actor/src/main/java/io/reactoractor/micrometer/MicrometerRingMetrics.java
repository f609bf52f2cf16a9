package io.reactoractor.micrometer;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;

/**
 * Exports a {@link RingBuffer}'s figures to Micrometer, read from the ring's getters on scrape
 * (nothing is recorded on the event path). Lives here so that the ring itself never needs Micrometer.
 *
 * <pre>
 *   meter                                 | type     | tags                         | value
 *   --------------------------------------+----------+------------------------------+------------------------------------
 *   reactor.actor.ring.remaining.capacity | gauge    | group, ring                  | RingBuffer.remainingCapacity()
 *   reactor.actor.ring.cursor             | gauge    | group, ring                  | RingBuffer.cursor()
 *   reactor.actor.ring.lag                | gauge    | group, ring, consumer        | RingConsumer.lag()
 *   reactor.actor.ring.processed          | counter  | group, ring, consumer        | RingConsumer.processedEvents()
 *   reactor.actor.ring.skipped            | counter  | group, ring, consumer        | RingConsumer.skippedEvents()
 * </pre>
 */
public final class MicrometerRingMetrics implements AutoCloseable {

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();

    private MicrometerRingMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Registers the ring's meters (its consumers as they are now: bind after adding them).
     *
     * @param ring     the ring
     * @param registry where to register
     * @return a handle whose {@link #close()} removes the meters again
     * @throws NullPointerException if an argument is {@code null}
     */
    public static MicrometerRingMetrics bind(RingBuffer<?> ring, MeterRegistry registry) {
        Objects.requireNonNull(ring, "ring");
        Objects.requireNonNull(registry, "registry");
        MicrometerRingMetrics m = new MicrometerRingMetrics(registry);
        Tags tags = Tags.of("group", ring.group().name(), "ring", ring.name());
        m.meters.add(Gauge.builder("reactor.actor.ring.remaining.capacity", ring, RingBuffer::remainingCapacity)
                .tags(tags).baseUnit(BaseUnits.EVENTS)
                .description("Events that fit before the producer waits for the slowest consumer")
                .register(registry));
        m.meters.add(Gauge.builder("reactor.actor.ring.cursor", ring, RingBuffer::cursor)
                .tags(tags).description("Highest sequence claimed by a producer").register(registry));
        for (RingConsumer<?, ?> c : ring.consumers()) {
            Tags ct = tags.and("consumer", c.name());
            m.meters.add(Gauge.builder("reactor.actor.ring.lag", c, RingConsumer::lag)
                    .tags(ct).baseUnit(BaseUnits.EVENTS).description("Published events the consumer has yet to handle")
                    .register(registry));
            m.meters.add(FunctionCounter.builder("reactor.actor.ring.processed", c, RingConsumer::processedEvents)
                    .tags(ct).baseUnit(BaseUnits.EVENTS).description("Events handled, skipped ones included")
                    .register(registry));
            m.meters.add(FunctionCounter.builder("reactor.actor.ring.skipped", c, RingConsumer::skippedEvents)
                    .tags(ct).baseUnit(BaseUnits.EVENTS).description("Events skipped after a handler failure")
                    .register(registry));
        }
        return m;
    }

    /** Removes the meters this binding registered. */
    @Override
    public void close() {
        for (Meter meter : meters) {
            registry.remove(meter);
        }
        meters.clear();
    }
}
