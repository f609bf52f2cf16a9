package io.reactoractor.micrometer;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.noop.NoopTimer;

/**
 * The meters of one owner (a scheduler, a group, a pull pair) registered with the same tags, so that
 * they are removed together when the owner goes away: a disposed group's name may come back as a new
 * group, and its old gauges must not keep reading (and keeping reachable) the dead one.
 *
 * <p>Every meter gets a base unit: Micrometer's naming conventions append it to the exported name
 * (Prometheus {@code reactor_actor_completed_tasks_total}), and a meter without one exports ambiguously.
 */
final class MeterSet {

    private final MeterRegistry registry;
    private final Tags tags;
    private final List<Meter> meters;

    MeterSet(MeterRegistry registry, Tags tags) {
        this(registry, tags, new CopyOnWriteArrayList<>());
    }

    private MeterSet(MeterRegistry registry, Tags tags, List<Meter> meters) {
        this.registry = registry;
        this.tags = tags;
        this.meters = meters;
    }

    /**
     * @param other the tags of the meters registered through the returned view
     * @return a view of this set that registers with {@code other}; its meters belong to this set
     *         (removed by either's {@link #removeAll()})
     */
    MeterSet with(Tags other) {
        return new MeterSet(registry, other, meters);
    }

    /** A monotonic count read on scrape from {@code source} (no work on the hot path). */
    <T> MeterSet counter(String name, String baseUnit, String description, T source, ToDoubleFunction<T> f) {
        add(name, () -> FunctionCounter.builder(name, source, f)
                .baseUnit(baseUnit).description(description).tags(tags).register(registry));
        return this;
    }

    /** A current value read on scrape from {@code source}. */
    <T> MeterSet gauge(String name, String baseUnit, String description, T source, ToDoubleFunction<T> f) {
        add(name, () -> Gauge.builder(name, source, f)
                .baseUnit(baseUnit).description(description).tags(tags).register(registry));
        return this;
    }

    /**
     * A timer; its base unit is the registry's time unit (seconds for most). If the registry refuses it, a
     * no-op timer, so the caller's recording needs no check.
     */
    Timer timer(String name, String description) {
        Timer timer = add(name, () -> Timer.builder(name).description(description).tags(tags).register(registry));
        return timer != null ? timer
                : new NoopTimer(new Meter.Id(name, tags, null, description, Meter.Type.TIMER));
    }

    /**
     * Registers one meter and keeps it for {@link #removeAll()}. Never throws: a registry whose
     * {@code onMeterAdded} listener (or a filter) fails is logged, and the owner runs without that meter.
     * Micrometer adds a meter before it calls the listeners, so a meter left behind by a failed
     * registration is removed again at once: nothing would ever remove it later.
     *
     * @return the meter, or {@code null} if its registration failed or another owner holds that id
     */
    private <M extends Meter> M add(String name, Supplier<M> registration) {
        try {
            M m = registration.get();
            if (!OWNED.add(m)) {
                // Micrometer handed back a meter another owner registered under the same id (two schedulers
                // of one name on one registry, two pull consumers serving one pair): it stays that owner's,
                // read from that owner's source, and this set must not remove it when this owner goes away
                LOG.warn("meter " + name + " " + tags + " is already registered by another owner (same name"
                        + " and tags); this one is left out");
                return null;
            }
            meters.add(m);
            return m;
        } catch (RuntimeException e) {
            LOG.warn("registering meter " + name + " " + tags + " failed; it is left out", e);
            try {
                for (Meter left : registry.find(name).tags(tags).meters()) {
                    registry.remove(left);
                }
            } catch (RuntimeException again) {
                LOG.warn("removing the half-registered meter " + name + " " + tags + " failed", again);
            }
            return null;
        }
    }

    /**
     * Removes every meter of this set from the registry (idempotent). Never throws: a registry's
     * {@code onMeterRemoved} listener that fails is logged and the other meters are still removed, because
     * the callers are terminations (a group's dispose, a scheduler's last exiting carrier, a pull pair's
     * retirement) that must complete whatever the registry does.
     */
    void removeAll() {
        for (Meter m : meters) {
            try {
                registry.remove(m);
            } catch (RuntimeException e) {
                LOG.warn("removing meter " + m.getId() + " failed", e);
            }
            // after the registry's removal: a new owner of the id registering meanwhile got a new instance
            OWNED.remove(m);
        }
        meters.clear();
    }

    private static final reactor.util.Logger LOG = reactor.util.Loggers.getLogger(MeterSet.class);

    /** Whether a failing {@code record} was logged already: once per JVM, the rest are dropped silently. */
    private static final java.util.concurrent.atomic.AtomicBoolean RECORD_FAILURE_LOGGED =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Records {@code nanos} on {@code timer}; a registry whose timer throws loses the sample, never the
     * caller's work (a carrier about to run a turn, a pull group's actor handling a pull). Logged once.
     */
    static void record(Timer timer, long nanos) {
        try {
            timer.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            if (RECORD_FAILURE_LOGGED.compareAndSet(false, true)) {
                LOG.warn("recording on timer " + timer.getId() + " failed; the sample is dropped (further failures"
                        + " of meter registries are not logged)", e);
            }
        }
    }

    /**
     * The meters some set owns, by identity: a registry hands back the instance it already holds for an
     * id, so finding it here tells a second owner apart without searching the registry (a search walks
     * every meter: bindings would grow with the registry's size). Each registry has its own instances.
     */
    private static final java.util.Set<Meter> OWNED =
            java.util.Collections.newSetFromMap(java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>()));

    @Override
    public String toString() {
        return "MeterSet" + tags + "(" + meters.size() + " meters)";
    }
}
