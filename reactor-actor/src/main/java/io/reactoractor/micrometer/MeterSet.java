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
import io.micrometer.core.instrument.noop.NoopMeter;
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
        add(name, FunctionCounter.class, () -> FunctionCounter.builder(name, source, f)
                .baseUnit(baseUnit).description(description).tags(tags).register(registry));
        return this;
    }

    /** A current value read on scrape from {@code source}. */
    <T> MeterSet gauge(String name, String baseUnit, String description, T source, ToDoubleFunction<T> f) {
        add(name, Gauge.class, () -> Gauge.builder(name, source, f)
                .baseUnit(baseUnit).description(description).tags(tags).register(registry));
        return this;
    }

    /**
     * A timer; its base unit is the registry's time unit (seconds for most). If the registry refuses it, a
     * no-op timer, so the caller's recording needs no check.
     */
    Timer timer(String name, String description) {
        Timer timer = add(name, Timer.class, () -> Timer.builder(name).description(description).tags(tags).register(registry));
        return timer != null ? timer
                : new NoopTimer(new Meter.Id(name, tags, null, description, Meter.Type.TIMER));
    }

    /**
     * Registers one meter and keeps it for {@link #removeAll()} if this registration created it. Never
     * throws: a registry whose {@code onMeterAdded} listener (or a filter) fails is logged, and the owner
     * runs without that meter.
     *
     * <p>Only a meter this set created is ever removed by it. Micrometer hands back the meter it already
     * holds for an id (another scheduler of the same name on this registry, another pull consumer serving
     * the pair, or the application's own meter): that meter stays its owner's, read from its owner's
     * source, and is left out here. Created or handed back is told by the registry's {@code onMeterAdded}
     * listener ({@link #listen}), which Micrometer calls, on the registering thread, only for a meter it
     * creates. A registration that fails removes only what it left behind: Micrometer adds a meter before
     * it calls the listeners, so one whose earlier listener failed stays registered (nothing would remove
     * it later), while a meter of another type with the same id (Micrometer refuses the new one), or one the
     * registry held whole before (a filter that fails, re-applied by Micrometer to an existing id, fails the
     * registration before anything is created) is someone else's and stays.
     *
     * @return the meter, or {@code null} if its registration failed or another owner holds that id
     */
    private <M extends Meter> M add(String name, Class<? extends Meter> type, Supplier<M> registration) {
        listen(registry);
        List<Meter> created = new java.util.ArrayList<>(1);
        CREATED.set(created);
        try {
            M m = registration.get();
            if (m instanceof NoopMeter) {
                return m; // denied by a filter (or the registry is closed): nothing registered, nothing to remove
            }
            if (!containsSame(created, m)) {
                log().warn("meter " + name + " " + tags + " is already registered by another owner (same name"
                        + " and tags); this one is left out");
                return null;
            }
            meters.add(m);
            return m;
        } catch (Throwable e) { // an Error too (a filter's AssertionError, a missing class): never the caller's failure
            log().warn("registering meter " + name + " " + tags + " failed; it is left out", e);
            try {
                if (!created.isEmpty()) {
                    for (Meter left : created) { // with any percentile gauges a timer's registration made
                        registry.remove(left);
                    }
                } else {
                    // our listener was not reached: an earlier listener failed after Micrometer created the meter
                    // (half-registered: ours to remove), or a filter failed before anything was created (the meter
                    // under our id, if any, is its owner's: another scheduler of the same name, the application).
                    // Told apart by the ids the registry held before, as far as our listeners saw them (REGISTERED)
                    java.util.Set<Meter.Id> held = REGISTERED.get(registry);
                    for (Meter left : registry.find(name).tags(tags).meters()) {
                        if (type.isInstance(left) && held != null && !held.contains(left.getId())) {
                            registry.remove(left);
                        }
                    }
                }
            } catch (Throwable again) {
                log().warn("removing the half-registered meter " + name + " " + tags + " failed", again);
            }
            return null;
        } finally {
            CREATED.remove();
        }
    }

    /**
     * Where {@link #listen}'s listener notes the meters the registry creates during {@link #add}, on its
     * thread: the meter asked for, and any a registry adds with it (a timer's percentile gauges, before it).
     */
    private static final ThreadLocal<List<Meter>> CREATED = new ThreadLocal<>();

    private static boolean containsSame(List<Meter> meters, Meter m) {
        for (Meter x : meters) {
            if (x == m) {
                return true;
            }
        }
        return false;
    }

    /** The prefix of every meter name of the library ({@link #REGISTERED} keeps only those). */
    private static final String PREFIX = "reactor.actor.";

    /**
     * Per registry {@link #listen} added its listeners to (weak: a registry may be dropped): the ids of the
     * registry's meters named {@value #PREFIX}... that were registered whole, as its listeners saw them (added on
     * {@code onMeterAdded}, removed on {@code onMeterRemoved}, and those the registry held when the listeners were
     * added). A meter Micrometer created while an earlier {@code onMeterAdded} listener failed is not among them:
     * that is how {@link #add} tells a meter its own failed registration left behind from one somebody else holds.
     */
    private static final java.util.Map<MeterRegistry, java.util.Set<Meter.Id>> REGISTERED =
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    /**
     * Adds, once per registry, the listeners that tell {@link #add} a meter was created by its registration (outside
     * {@code add}, the application's registrations, they only keep {@link #REGISTERED}).
     */
    private static void listen(MeterRegistry registry) {
        if (REGISTERED.containsKey(registry)) {
            return;
        }
        java.util.Set<Meter.Id> ids = java.util.concurrent.ConcurrentHashMap.newKeySet();
        if (REGISTERED.putIfAbsent(registry, ids) != null) {
            return;
        }
        registry.config().onMeterAdded(m -> {
            if (m.getId().getName().startsWith(PREFIX)) {
                ids.add(m.getId());
            }
            List<Meter> created = CREATED.get();
            if (created != null) {
                created.add(m);
            }
        });
        registry.config().onMeterRemoved(m -> ids.remove(m.getId()));
        // after the listeners: a meter registered meanwhile is seen by one or the other (a set: both is fine)
        for (Meter m : registry.getMeters()) {
            if (m.getId().getName().startsWith(PREFIX)) {
                ids.add(m.getId());
            }
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
            } catch (Throwable e) {
                log().warn("removing meter " + m.getId() + " failed", e);
            }
        }
        meters.clear();
    }

    /**
     * Looked up at each warning (all rare: a refused or failing meter), not kept in a static field, so that a logger
     * factory installed later ({@code Loggers.useCustomLoggers}, as tests capturing the warnings do) applies.
     */
    private static reactor.util.Logger log() {
        return reactor.util.Loggers.getLogger(MeterSet.class);
    }

    /**
     * The timers whose failing {@code record} was logged already (weak: a removed timer is forgotten): once per
     * timer, so that a registry that starts failing later, or another owner's timer, is logged too, while a
     * timer that fails at every turn is not logged at every turn. Consulted only when a record fails.
     */
    private static final java.util.Map<Timer, Boolean> RECORD_FAILURE_LOGGED =
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    /**
     * Records {@code nanos} on {@code timer}; a registry whose timer throws loses the sample, never the
     * caller's work (a carrier about to run a turn, a pull group's actor handling a pull). Logged once per timer.
     */
    static void record(Timer timer, long nanos) {
        try {
            timer.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (Throwable e) {
            try {
                if (RECORD_FAILURE_LOGGED.putIfAbsent(timer, Boolean.TRUE) == null) {
                    log().warn("recording on timer " + timer.getId() + " failed; the sample is dropped (further failures"
                            + " of this timer are not logged)", e);
                }
            } catch (Throwable again) {
                // a timer whose hashCode or getId fails too, or no memory left to log: the sample is dropped
            }
        }
    }

    @Override
    public String toString() {
        return "MeterSet" + tags + "(" + meters.size() + " meters)";
    }
}
