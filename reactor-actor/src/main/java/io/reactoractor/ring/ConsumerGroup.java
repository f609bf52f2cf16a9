package io.reactoractor.ring;

import java.util.List;

/**
 * A set of consumers of one ring, the handle of the dependency-graph builder:
 * {@code ring.handleEventsWith(a, b).then(c).then(d)}.
 *
 * @param <T> the event type
 */
public final class ConsumerGroup<T> {

    private final RingBuffer<T> ring;
    private final List<RingConsumer<T, ?>> members;

    ConsumerGroup(RingBuffer<T> ring, List<RingConsumer<T, ?>> members) {
        this.ring = ring;
        this.members = List.copyOf(members);
    }

    /**
     * Makes every consumer of {@code next} depend on every member of this group: each sees an event
     * only after all members handled it.
     *
     * @param next consumers of the same ring
     * @return a group of {@code next}, to chain further
     * @throws NullPointerException     if the array or an element is {@code null}
     * @throws IllegalArgumentException if it is empty, a consumer belongs to another ring, or an edge
     *                                  would close a cycle (nothing is added then)
     * @throws IllegalStateException    if the ring was started
     */
    @SafeVarargs
    public final ConsumerGroup<T> then(RingConsumer<T, ?>... next) {
        List<RingConsumer<T, ?>> n = ring.checkMembers(next, "next");
        ring.addDependencies(members, n);
        return new ConsumerGroup<>(ring, n);
    }

    /** @return the members of this group */
    public List<RingConsumer<T, ?>> consumers() {
        return members;
    }
}
