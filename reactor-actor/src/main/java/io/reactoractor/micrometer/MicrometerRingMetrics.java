package io.reactoractor.micrometer;

import java.util.Objects;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;

/**
 * Exports a {@link RingBuffer}'s figures to Micrometer, read from the ring's getters on scrape
 * (nothing is recorded on the event path). Lives here so that the ring itself never needs Micrometer.
 *
 * <p>A ring whose scheduler was built with {@code .metrics(MicrometerActorMetrics.of(registry))} is
 * bound to that registry automatically when it starts, and its meters are removed when it terminates
 * (every consumer completed, failed or was cancelled): call {@link #bind} only for a ring on a
 * scheduler without metrics, or for another registry.
 *
 * <pre>
 *   meter                                 | type     | tags                              | value
 *   --------------------------------------+----------+-----------------------------------+-------------------------------
 *   reactor.actor.ring.remaining.capacity | gauge    | scheduler, group, ring            | RingBuffer.remainingCapacity()
 *   reactor.actor.ring.cursor             | gauge    | scheduler, group, ring            | RingBuffer.cursor()
 *   reactor.actor.ring.lag                | gauge    | scheduler, group, ring, consumer  | RingConsumer.lag()
 *   reactor.actor.ring.processed          | counter  | scheduler, group, ring, consumer  | RingConsumer.processedEvents()
 *   reactor.actor.ring.skipped            | counter  | scheduler, group, ring, consumer  | RingConsumer.skippedEvents()
 *   reactor.actor.ring.retried            | counter  | scheduler, group, ring, consumer  | RingConsumer.retriedEvents()
 * </pre>
 * Every meter has the base unit {@code events}. Cardinality: one set per live ring (ring names are
 * the application's; a ring's meters go when it terminates) and one per consumer of it.
 */
public final class MicrometerRingMetrics implements AutoCloseable {

    private final MeterSet meters;

    private MicrometerRingMetrics(MeterSet meters) {
        this.meters = meters;
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
        return new MicrometerRingMetrics(register(registry, ring));
    }

    /** Registers the meters of {@code ring} (the table above) as one set. */
    static MeterSet register(MeterRegistry registry, RingBuffer<?> ring) {
        Tags tags = tags(ring);
        MeterSet set = new MeterSet(registry, tags)
                .gauge("reactor.actor.ring.remaining.capacity", BaseUnits.EVENTS,
                        "Events that fit before the producer waits for the slowest consumer",
                        ring, RingBuffer::remainingCapacity)
                .gauge("reactor.actor.ring.cursor", BaseUnits.EVENTS, "Highest sequence claimed by a producer",
                        ring, RingBuffer::cursor);
        for (RingConsumer<?, ?> c : ring.consumers()) {
            set.with(tags.and("consumer", c.name()))
                    .gauge("reactor.actor.ring.lag", BaseUnits.EVENTS, "Published events the consumer has yet to handle",
                            c, RingConsumer::lag)
                    .counter("reactor.actor.ring.processed", BaseUnits.EVENTS, "Events handled, skipped ones included",
                            c, RingConsumer::processedEvents)
                    .counter("reactor.actor.ring.skipped", BaseUnits.EVENTS, "Events skipped after a handler failure",
                            c, RingConsumer::skippedEvents)
                    .counter("reactor.actor.ring.retried", BaseUnits.EVENTS,
                            "Handler calls repeated after a back-off by a retry policy", c, RingConsumer::retriedEvents);
        }
        return set;
    }

    /** @return the tags identifying {@code ring} among the rings of a registry */
    static Tags tags(RingBuffer<?> ring) {
        return Tags.of("scheduler", ring.group().scheduler().name(), "group", ring.group().name(), "ring", ring.name());
    }

    /** Removes the meters this binding registered (idempotent). */
    @Override
    public void close() {
        meters.removeAll();
    }
}
