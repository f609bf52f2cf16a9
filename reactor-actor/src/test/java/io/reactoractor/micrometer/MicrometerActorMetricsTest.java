package io.reactoractor.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.ActorGroup;
import io.reactoractor.ActorMetrics;
import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.PullConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MicrometerActorMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ActorScheduler scheduler = ActorScheduler.builder().name("metered").threads(2)
            .metrics(MicrometerActorMetrics.of(registry)).build();

    @AfterEach
    void dispose() {
        scheduler.dispose();
    }

    @Test
    void nullIsRejectedNamingTheParameter() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MicrometerActorMetrics.of(null));
        assertTrue(e.getMessage().startsWith("registry"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ActorScheduler.builder().metrics(null));
        assertTrue(e.getMessage().startsWith("metrics"), e.getMessage());
    }

    @Test
    void everyMeterHasABaseUnitAndTheExecutorStyleMetersReadTheScheduler() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        scheduler.group("tenant-a", 1).schedule(ran::countDown);
        assertTrue(ran.await(5, TimeUnit.SECONDS));
        PullConsumer consumer = PullConsumer.builder(scheduler).build();
        consumer.append("orders", new byte[] {1});
        consumer.pull("orders", "billing", 1, Duration.ofSeconds(1)).block(Duration.ofSeconds(5));

        Map<String, String> units = new TreeMap<>();
        for (Meter m : registry.getMeters()) {
            units.put(m.getId().getName(), m.getId().getBaseUnit());
        }
        for (Map.Entry<String, String> e : units.entrySet()) {
            assertTrue(e.getKey().startsWith("reactor.actor."), e.getKey());
            assertNotNull(e.getValue(), () -> e.getKey() + " has no base unit: " + units);
        }
        assertEquals(BaseUnits.TASKS, units.get("reactor.actor.completed"));
        assertEquals(BaseUnits.THREADS, units.get("reactor.actor.active"));
        assertEquals(BaseUnits.TASKS, units.get("reactor.actor.queued"));
        assertEquals(BaseUnits.THREADS, units.get("reactor.actor.pool.size"));
        assertEquals("seconds", units.get("reactor.actor.group.cpu"));
        assertEquals("seconds", units.get("reactor.actor.scheduling.delay"), "a timer's unit is the registry's");
        assertEquals(BaseUnits.MESSAGES, units.get("reactor.actor.pull.lag"));

        await(() -> registry.get("reactor.actor.completed").functionCounter().count() >= 1, "completed counts the task");
        assertEquals(2.0, registry.get("reactor.actor.pool.size").gauge().value());
        assertEquals(2.0, registry.get("reactor.actor.pool.core").gauge().value());
        assertEquals(4.0, registry.get("reactor.actor.pool.max").gauge().value(), "2 threads + 2 compensating");
        assertTrue(registry.get("reactor.actor.scheduling.delay").tag("group", "tenant-a").timer().count() >= 1);
        assertEquals(1.0, registry.get("reactor.actor.pull.requests").tag("subject", "orders")
                .tag("group", "billing").functionCounter().count());
        consumer.dispose();
    }

    @Test
    void onlyTheDocumentedTagsAreUsed() {
        scheduler.group("tenant-a", 1);
        PullConsumer consumer = PullConsumer.builder(scheduler).build();
        consumer.pullOnce("orders", "billing", 1).block(Duration.ofSeconds(5));
        Set<String> keys = registry.getMeters().stream().flatMap(m -> m.getId().getTags().stream())
                .map(Tag::getKey).collect(Collectors.toSet());
        assertEquals(Set.of("scheduler", "group", "subject"), keys);
        consumer.dispose();
    }

    @Test
    void aGroupsMetersLeaveWithTheGroupAndAllLeaveWithTheScheduler() {
        int baseline = registry.getMeters().size();
        ActorGroup g = scheduler.group("short-lived", 1);
        assertEquals(6, meters("short-lived").size(), () -> "5 group.* meters and the delay timer: " + names());
        assertEquals(baseline + 6, registry.getMeters().size());
        g.dispose();
        assertEquals(baseline, registry.getMeters().size());
        assertEquals(List.of(), meters("short-lived"));

        scheduler.dispose();
        await(() -> registry.getMeters().isEmpty(), "a terminated scheduler removes its meters: " + names());
    }

    @Test
    void aSecondSchedulerOfTheSameNameNeitherTakesNorRemovesTheFirstOnesMeters() throws Exception {
        ActorScheduler twin = ActorScheduler.builder().name("metered").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(5);
        for (int i = 0; i < 5; i++) {
            scheduler.schedule(ran::countDown);
        }
        assertTrue(ran.await(30, java.util.concurrent.TimeUnit.SECONDS));
        twin.disposeGracefully().block(java.time.Duration.ofSeconds(30));
        io.micrometer.core.instrument.FunctionCounter completed = registry.find("reactor.actor.completed")
                .tag("scheduler", "metered").functionCounter();
        assertTrue(completed != null, "the first scheduler's meter outlives the twin: " + names());
        await(() -> completed.count() >= 5, "and it reads the first scheduler, not the twin");
    }

    /**
     * dispose() returns while a task still runs: the scheduler built next under the same name on the same registry
     * gets every meter (the old one's were removed when it was disposed, not when its last thread exited, which
     * left the new one refused them all and then without any).
     */
    @Test
    void aSchedulerRebuiltUnderItsNameRightAfterDisposeWhileATaskRunsHasItsMeters() throws Exception {
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        scheduler.schedule(() -> {
            running.countDown();
            try {
                release.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(running.await(30, java.util.concurrent.TimeUnit.SECONDS));
        long meters = registry.getMeters().stream().filter(m -> "metered".equals(m.getId().getTag("scheduler"))).count();
        assertTrue(meters > 10, () -> "the scheduler's meters: " + names());
        scheduler.dispose();
        ActorScheduler next = ActorScheduler.builder().name("metered").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            release.countDown();
            java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(3);
            for (int i = 0; i < 3; i++) {
                next.schedule(ran::countDown);
            }
            assertTrue(ran.await(30, java.util.concurrent.TimeUnit.SECONDS));
            scheduler.disposeGracefully().block(java.time.Duration.ofSeconds(30)); // the old one's threads are gone
            io.micrometer.core.instrument.FunctionCounter completed = registry.find("reactor.actor.completed")
                    .tag("scheduler", "metered").functionCounter();
            assertTrue(completed != null, "the new scheduler has its meter: " + names());
            await(() -> completed.count() >= 3, "reading the new scheduler");
            assertEquals(meters, registry.getMeters().stream()
                    .filter(m -> "metered".equals(m.getId().getTag("scheduler"))).count(), () -> "all of them: " + names());
        } finally {
            next.dispose();
        }
    }

    @Test
    void aGroupCreatedAfterTheSchedulerTerminatedLeavesNoMeters() {
        scheduler.dispose();
        await(() -> registry.getMeters().isEmpty(), "a terminated scheduler removes its meters: " + names());
        scheduler.group("late", 1);
        assertEquals(List.of(), meters("late"), "nothing would ever remove them");
        assertTrue(registry.getMeters().isEmpty(), () -> "no meter left: " + names());
    }

    @Test
    void theCompletedCounterCountsEachTaskOnceAfterTermination() throws Exception {
        int n = 100;
        java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            scheduler.schedule(ran::countDown);
        }
        assertTrue(ran.await(30, java.util.concurrent.TimeUnit.SECONDS));
        // the count is bumped after each task and read racily: wait until the last one shows
        await(() -> scheduler.stats().tasksRun() >= n, "counted while running");
        long before = scheduler.stats().tasksRun();
        scheduler.disposeGracefully().block(java.time.Duration.ofSeconds(30));
        assertEquals(before, scheduler.stats().tasksRun(), "each exited carrier counted once, not also in its slot");
    }

    /**
     * Throws what a failing registry throws: an exception, or an {@code Error} (a filter's assertion, a class
     * missing from an optional dependency), which is no more the library's failure than an exception is.
     */
    private static void registryFails(boolean withError, String message) {
        if (withError) {
            throw new AssertionError("expected test failure: " + message);
        }
        throw new IllegalStateException(message);
    }

    @ParameterizedTest(name = "with an Error: {0}")
    @ValueSource(booleans = {false, true})
    void aGroupIsDisposedAndTerminatesWhenRemovingItsMetersFails(boolean withError) {
        SimpleMeterRegistry failing = new SimpleMeterRegistry();
        failing.config().onMeterRemoved(m -> registryFails(withError, "a removal listener failed (test)"));
        ActorScheduler s = ActorScheduler.builder().name("unbind-fails").threads(1)
                .metrics(MicrometerActorMetrics.of(failing)).build();
        try {
            ActorGroup g = s.group("doomed", 1);
            g.dispose(); // must not throw: the registry's failure is logged
            assertTrue(g.isDisposed());
            g.disposeGracefully().block(java.time.Duration.ofSeconds(5)); // terminated: completes at once
            assertTrue(s.groups().stream().noneMatch(x -> x.name().equals("doomed")), "the group left the scheduler");
            assertEquals(2, s.group("doomed", 2).weight(), "its name is free for a new group");
        } finally {
            s.dispose();
        }
    }

    /** A registry whose timers throw from {@code record}: every scheduling delay and pull queue time fails. */
    private static SimpleMeterRegistry throwingTimers(boolean withError) {
        return new SimpleMeterRegistry() {
            @Override
            protected io.micrometer.core.instrument.Timer newTimer(io.micrometer.core.instrument.Meter.Id id,
                    io.micrometer.core.instrument.distribution.DistributionStatisticConfig config,
                    io.micrometer.core.instrument.distribution.pause.PauseDetector pause) {
                return new io.micrometer.core.instrument.cumulative.CumulativeTimer(id, clock, config, pause,
                        getBaseTimeUnit(), false) {
                    @Override
                    protected void recordNonNegative(long amount, java.util.concurrent.TimeUnit unit) {
                        registryFails(withError, "registry broken");
                    }
                };
            }
        };
    }

    @ParameterizedTest(name = "with an Error: {0}")
    @ValueSource(booleans = {false, true})
    void timersThatThrowNeitherStrandActorsNorFailPulls(boolean withError) throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("throwing-timers").threads(1)
                .metrics(MicrometerActorMetrics.of(throwingTimers(withError))).build();
        try {
            io.reactoractor.ActorWorker w = s.createWorker();
            for (int i = 0; i < 3; i++) {
                java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(1);
                w.schedule(ran::countDown); // each turn records its scheduling delay first
                assertTrue(ran.await(10, java.util.concurrent.TimeUnit.SECONDS), "task " + i + " ran");
            }
            io.reactoractor.pull.PullConsumer c = io.reactoractor.pull.PullConsumer.builder(s).build();
            c.append("subj", new byte[] {1});
            io.reactoractor.pull.PullResult r = c.pullOnce("subj", "grp", 1).block(java.time.Duration.ofSeconds(10));
            assertEquals(1, r.messages().size(), "the pull's queue-time sample is lost, not the pull");
            c.dispose();
            s.disposeGracefully().block(java.time.Duration.ofSeconds(10));
        } finally {
            s.dispose();
        }
    }

    @Test
    void aSchedulerTerminatesAndRemovesItsMetersWhenARemovalListenerFails() {
        SimpleMeterRegistry failing = new SimpleMeterRegistry();
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        failing.config().onMeterRemoved(m -> {
            if (calls.getAndIncrement() % 2 == 0) {
                throw new IllegalStateException("a removal listener failed (test)");
            }
        });
        ActorScheduler s = ActorScheduler.builder().name("close-fails").threads(2)
                .metrics(MicrometerActorMetrics.of(failing)).build();
        s.group("tenant", 1);
        assertFalse(failing.getMeters().isEmpty());
        // the last carrier to exit removes the meters: before the fix its failure left the termination unsignalled
        s.disposeGracefully().timeout(java.time.Duration.ofSeconds(10)).block();
        assertTrue(s.isDisposed());
        assertEquals(List.of(), failing.getMeters(), "every meter is removed, also those after a failing one");
    }

    /** A filter that fails for one meter name (Micrometer re-applies filters added later to existing ids too). */
    private static io.micrometer.core.instrument.config.MeterFilter failingFor(String name) {
        return new io.micrometer.core.instrument.config.MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                if (id.getName().equals(name)) {
                    throw new IllegalStateException("a filter failed (test)");
                }
                return id;
            }
        };
    }

    @Test
    void aFilterFailingForANamesakesMeterNeverRemovesTheFirstOwners() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ActorScheduler first = ActorScheduler.builder().name("namesake").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        ActorScheduler second = null;
        try {
            Meter owned = registry.get("reactor.actor.completed").tag("scheduler", "namesake").meter();
            registry.config().meterFilter(failingFor("reactor.actor.completed"));
            second = ActorScheduler.builder().name("namesake").threads(1)
                    .metrics(MicrometerActorMetrics.of(registry)).build();
            assertTrue(registry.find("reactor.actor.completed").tag("scheduler", "namesake").meter() == owned,
                    "the first scheduler's meter stays: the second one's failed registration created nothing");
        } finally {
            first.dispose();
            if (second != null) {
                second.dispose();
            }
        }
    }

    @Test
    void aFilterFailingForTheApplicationsOwnMeterNeverRemovesIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Meter own = io.micrometer.core.instrument.FunctionCounter.builder("reactor.actor.completed", new Object(), o -> 42)
                .tags("scheduler", "app-owned").register(registry);
        registry.config().meterFilter(failingFor("reactor.actor.completed"));
        ActorScheduler s = ActorScheduler.builder().name("app-owned").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            assertTrue(registry.find("reactor.actor.completed").tag("scheduler", "app-owned").meter() == own,
                    "the application's meter stays");
        } finally {
            s.dispose();
        }
        assertTrue(registry.find("reactor.actor.completed").tag("scheduler", "app-owned").meter() == own,
                "and stays after the scheduler's disposal");
    }

    @ParameterizedTest(name = "with an Error: {0}")
    @ValueSource(booleans = {false, true})
    void aRegistryRefusingSomeMetersLeavesThemOutAndEverythingRunsAndCleansUp(boolean withError) throws Exception {
        SimpleMeterRegistry refusing = new SimpleMeterRegistry();
        // refuses every group, pull and ring meter whose name ends in certain words, after Micrometer added it
        refusing.config().onMeterAdded(m -> {
            String n = m.getId().getName();
            if (n.endsWith(".cpu") || n.endsWith(".delay") || n.endsWith(".requests") || n.endsWith(".lag")) {
                registryFails(withError, "an add listener failed (test): " + n);
            }
        });
        ActorScheduler s = ActorScheduler.builder().name("add-fails").threads(2)
                .metrics(MicrometerActorMetrics.of(refusing)).build();
        ActorGroup g = s.group("tenant", 1);
        CountDownLatch ran = new CountDownLatch(1);
        g.schedule(ran::countDown); // the scheduling delay is recorded on a no-op timer
        assertTrue(ran.await(10, TimeUnit.SECONDS), "the group runs without its refused meters");
        assertFalse(refusing.getMeters().isEmpty(), "the other meters are registered");
        assertTrue(refusing.getMeters().stream().map(m -> m.getId().getName())
                        .noneMatch(n -> n.endsWith(".cpu") || n.endsWith(".delay")),
                "a refused meter is not left half-registered: " + refusing.getMeters().size());

        PullConsumer c = PullConsumer.builder(s).build();
        c.append("s", new byte[] {1});
        assertEquals(1, c.pullOnce("s", "g", 1).block(Duration.ofSeconds(10)).messages().size(), "a pull pair serves");

        io.reactoractor.ring.RingBuffer<Integer> ring = io.reactoractor.ring.RingBuffer.<Integer>builder(g).size(8).build();
        java.util.concurrent.atomic.AtomicInteger seen = new java.util.concurrent.atomic.AtomicInteger();
        ring.consumer("count", (e, seq, eob) -> {
            seen.incrementAndGet();
            return null;
        });
        ring.start();
        assertTrue(ring.tryPublish(1));
        ring.complete();
        ring.whenTerminated().block(Duration.ofSeconds(10));
        assertEquals(1, seen.get(), "a ring runs");

        c.dispose();
        s.disposeGracefully().timeout(Duration.ofSeconds(10)).block();
        assertEquals(List.of(), refusing.getMeters(), "every meter that was registered is removed");
    }

    @Test
    void oneBindingServesSeveralSchedulersEachWithItsOwnMeters() {
        ActorMetrics metrics = MicrometerActorMetrics.of(registry);
        ActorScheduler a = ActorScheduler.builder().name("a").threads(1).metrics(metrics).build();
        ActorScheduler b = ActorScheduler.builder().name("b").threads(1).metrics(metrics).build();
        try {
            assertNotNull(registry.find("reactor.actor.completed").tag("scheduler", "a").functionCounter());
            assertNotNull(registry.find("reactor.actor.completed").tag("scheduler", "b").functionCounter());
            a.dispose();
            await(() -> registry.find("reactor.actor.completed").tag("scheduler", "a").meters().isEmpty(),
                    "a's meters removed");
            assertNotNull(registry.find("reactor.actor.completed").tag("scheduler", "b").functionCounter(),
                    "b's meters stay");
        } finally {
            a.dispose();
            b.dispose();
        }
    }

    private List<Meter> meters(String group) {
        return registry.getMeters().stream().filter(m -> group.equals(m.getId().getTag("group"))).toList();
    }

    private List<String> names() {
        return registry.getMeters().stream().map(m -> m.getId().toString()).toList();
    }

    private static void await(BooleanSupplier condition, String message) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, message);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /**
     * The application's own meter under an id the library wants is the application's: one of another type
     * (Micrometer refuses the library's) stayed registered only until the library's clean-up of the refused
     * registration removed it; one of the same type (Micrometer hands it back) was taken as the library's,
     * read the application's source meanwhile, and was removed when the scheduler terminated. Found by a
     * black-box probe. Only meters a registration of the library created are its own now.
     */
    @Test
    void theApplicationsOwnMetersUnderTheLibrarysIdsAreNeverRemovedByIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        java.util.concurrent.atomic.AtomicLong source = new java.util.concurrent.atomic.AtomicLong(42);
        io.micrometer.core.instrument.Gauge otherType = io.micrometer.core.instrument.Gauge
                .builder("reactor.actor.completed", source, java.util.concurrent.atomic.AtomicLong::get)
                .tag("scheduler", "clash").register(registry);
        io.micrometer.core.instrument.FunctionCounter sameType = io.micrometer.core.instrument.FunctionCounter
                .builder("reactor.actor.completed", source, java.util.concurrent.atomic.AtomicLong::get)
                .tag("scheduler", "adopt").register(registry);
        ActorScheduler clash = ActorScheduler.builder().name("clash").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        ActorScheduler adopt = ActorScheduler.builder().name("adopt").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        assertTrue(registry.find("reactor.actor.completed").tag("scheduler", "clash").meter() == otherType,
                "the application's gauge is still registered while the scheduler runs");
        assertNotNull(registry.find("reactor.actor.pool.size").tag("scheduler", "adopt").gauge(),
                "the scheduler's other meters are registered");
        clash.disposeGracefully().block(Duration.ofSeconds(10));
        adopt.disposeGracefully().block(Duration.ofSeconds(10));
        await(() -> registry.find("reactor.actor.pool.size").meters().isEmpty(), "the schedulers' meters left");
        assertTrue(registry.find("reactor.actor.completed").tag("scheduler", "clash").meter() == otherType,
                "the application's gauge survives the scheduler");
        assertTrue(registry.find("reactor.actor.completed").tag("scheduler", "adopt").meter() == sameType,
                "the application's counter survives the scheduler");
        assertEquals(42.0, sameType.count());
    }
}
