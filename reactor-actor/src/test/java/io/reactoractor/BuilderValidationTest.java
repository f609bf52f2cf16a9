package io.reactoractor;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.reactoractor.TestSupport.LONG;
import static io.reactoractor.TestSupport.await;
import static io.reactoractor.TestSupport.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Argument validation: every {@link ActorScheduler.Builder} parameter is validated eagerly (at the
 * setter or at {@code build()}, before any thread starts) with an {@link IllegalArgumentException}
 * whose message names the parameter; {@code group(..)} validates its name and weight; {@code null}
 * tasks are rejected with {@link NullPointerException}; negative delays behave like Reactor's
 * schedulers (the task runs right away). Also the documented defaults.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BuilderValidationTest {

    private final TestSupport.Resources resources = new TestSupport.Resources();

    @AfterEach
    void disposeAll() {
        resources.disposeAll();
    }

    /** Asserts that configuring the builder with {@code config} fails, naming {@code parameter}. */
    private void assertInvalid(String parameter, UnaryOperator<ActorScheduler.Builder> config) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> {
            ActorScheduler.Builder builder = ActorScheduler.builder().name(uniqueName("builder"));
            // if validation were missing, do not leak the scheduler's threads
            resources.scheduler(config.apply(builder));
        }, "invalid " + parameter + " must be rejected");
        assertNotNull(e.getMessage(), "message of the rejection of " + parameter);
        assertTrue(e.getMessage().contains(parameter),
                () -> "message '" + e.getMessage() + "' should name the parameter '" + parameter + "'");
    }

    @Test
    void threadsMustBePositive() {
        assertInvalid("threads", b -> b.threads(0));
        assertInvalid("threads", b -> b.threads(-1));
        assertInvalid("threads", b -> b.threads(Integer.MIN_VALUE));
    }

    @Test
    void quotaMustBePositiveAndNotNull() {
        assertInvalid("quota", b -> b.quota(Duration.ZERO));
        assertInvalid("quota", b -> b.quota(Duration.ofMillis(-5)));
        assertInvalid("quota", b -> b.quota(null));
    }

    @Test
    void preemptionGranularityMustBePositiveAndNotNull() {
        assertInvalid("preemptionGranularity", b -> b.preemptionGranularity(Duration.ZERO));
        assertInvalid("preemptionGranularity", b -> b.preemptionGranularity(Duration.ofNanos(-1)));
        assertInvalid("preemptionGranularity", b -> b.preemptionGranularity(null));
    }

    @Test
    void hogThresholdMustBePositiveAndNotNull() {
        assertInvalid("hogThreshold", b -> b.hogThreshold(Duration.ZERO));
        assertInvalid("hogThreshold", b -> b.hogThreshold(Duration.ofSeconds(-1)));
        assertInvalid("hogThreshold", b -> b.hogThreshold(null));
    }

    /** Durations the engine adds to clock readings (and the quota it multiplies) are bounded: nothing overflows. */
    @Test
    void durationsAreAtMostOneDay() {
        assertInvalid("quota", b -> b.quota(Duration.ofDays(1).plusNanos(1)));
        assertInvalid("quota", b -> b.quota(Duration.ofSeconds(Long.MAX_VALUE)));
        assertInvalid("preemptionGranularity", b -> b.preemptionGranularity(Duration.ofDays(2)));
        assertInvalid("hogThreshold", b -> b.hogThreshold(Duration.ofDays(365 * 300)));
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(uniqueName("builder")).threads(1)
                .quota(Duration.ofDays(1)).preemptionGranularity(Duration.ofDays(1)));
        assertEquals(Duration.ofDays(1), s.quota()); // a day is valid, and so is its default hog threshold (10 days)
    }

    @Test
    void maxCompensatingThreadsMustNotBeNegative() {
        assertInvalid("maxCompensatingThreads", b -> b.maxCompensatingThreads(-1));
        assertInvalid("maxCompensatingThreads", b -> b.maxCompensatingThreads(Integer.MIN_VALUE));
        // with the permanent threads at most 32767 (it sized an array: Integer.MAX_VALUE overflowed it)
        assertInvalid("maxCompensatingThreads", b -> b.maxCompensatingThreads(Integer.MAX_VALUE));
        assertInvalid("maxCompensatingThreads", b -> b.threads(2).maxCompensatingThreads(32_766));
        // zero is valid: no compensation
        ActorScheduler s = resources.scheduler(ActorScheduler.builder()
                .name(uniqueName("builder")).threads(1).maxCompensatingThreads(0));
        assertFalse(s.isDisposed());
    }

    @Test
    void nameMustBeNonNullAndNonEmpty() {
        assertInvalid("name", b -> b.name(null));
        assertInvalid("name", b -> b.name(""));
        assertInvalid("name", b -> b.name("   "));
        assertInvalid("name", b -> b.name("a\nb")); // a thread name and a metric tag: visible text only
        assertInvalid("name", b -> b.name("a\u0000b"));
    }

    /**
     * Names a client may choose (groups, actors, rings) become metric tag values, actor paths and log fields:
     * blank names and control characters are refused, naming the parameter (a probe found " ", "a\nb" and
     * "\u0000" accepted for groups and actors, and 300-character ring names).
     */
    @Test
    void clientChosenNamesMustBeVisibleText() {
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(uniqueName("builder")).threads(1));
        for (String bad : new String[] {"", " ", "\t", "a\nb", "\u0000", "a\rb", "x".repeat(129)}) {
            assertNamed("name", assertThrows(IllegalArgumentException.class, () -> s.group(bad, 1), "group '" + bad + "'"));
            assertNamed("name", assertThrows(IllegalArgumentException.class,
                    () -> io.reactoractor.actor.Actor.<Integer, Integer>builder(s).name(bad), "actor '" + bad + "'"));
            assertNamed("name", assertThrows(IllegalArgumentException.class,
                    () -> io.reactoractor.ring.RingBuffer.<Integer>builder(s).name(bad), "ring '" + bad + "'"));
            io.reactoractor.ring.RingBuffer<Integer> ring = io.reactoractor.ring.RingBuffer.<Integer>builder(s).size(4).build();
            assertNamed("name", assertThrows(IllegalArgumentException.class,
                    () -> ring.consumer(bad, (e, seq, eob) -> null), "ring consumer '" + bad + "'"));
        }
        assertThrows(IllegalArgumentException.class, () -> s.group("a/b", 1));
        assertEquals("tenant-1.eu_west (ok)", s.group("tenant-1.eu_west (ok)", 1).name(), "visible text is fine");
        assertEquals("ünïcödé", s.group("ünïcödé", 1).name());
    }

    private static void assertNamed(String parameter, IllegalArgumentException e) {
        assertTrue(e.getMessage() != null && e.getMessage().startsWith(parameter + " "),
                () -> "message '" + e.getMessage() + "' should name the parameter '" + parameter + "'");
    }

    @Test
    void orderingMustNotBeNull() {
        assertInvalid("ordering", b -> b.ordering(null));
    }

    /**
     * The granularity's default follows a shorter quota: a quota of 200 µs alone is a valid setting (it
     * failed on the 500 µs default granularity, a parameter the caller never set; found by a probe of the
     * Spring Boot starter, which had the same default).
     */
    @Test
    void theGranularityDefaultFollowsAShorterQuota() {
        ActorScheduler shortQuota = resources.scheduler(ActorScheduler.builder().name(uniqueName("short-quota"))
                .threads(1).quota(Duration.ofNanos(200_000)));
        assertEquals(Duration.ofNanos(200_000), shortQuota.preemptionGranularity());
        ActorScheduler defaults = resources.scheduler(ActorScheduler.builder().name(uniqueName("defaults")).threads(1));
        assertEquals(Duration.ofNanos(500_000), defaults.preemptionGranularity());
        assertEquals(Duration.ofMillis(5), defaults.quota());
        assertInvalid("preemptionGranularity", b -> b.quota(Duration.ofNanos(200_000))
                .preemptionGranularity(Duration.ofNanos(500_000)));
    }

    @Test
    void validConfigurationIsApplied() {
        String name = uniqueName("builder");
        ActorScheduler s = resources.scheduler(ActorScheduler.builder()
                .name(name)
                .threads(1)
                .quota(Duration.ofMillis(2))
                .preemptionGranularity(Duration.ofNanos(100_000))
                .ordering(ActorScheduler.Ordering.FIFO)
                .hogThreshold(Duration.ofMillis(100))
                .maxCompensatingThreads(3));
        assertEquals(name, s.name());
        assertEquals(1, s.threads());
        assertEquals(Duration.ofMillis(2), s.quota());
        assertEquals(Duration.ofNanos(100_000), s.preemptionGranularity());
        assertEquals(ActorScheduler.Ordering.FIFO, s.ordering());
        CountDownLatch ran = new CountDownLatch(1);
        s.schedule(ran::countDown);
        await(ran, LONG, "a built scheduler is started");
    }

    @Test
    void createUsesTheDocumentedDefaults() {
        ActorScheduler s = resources.track(ActorScheduler.create());
        assertEquals("actor", s.name());
        assertEquals(Runtime.getRuntime().availableProcessors(), s.threads());
        assertEquals(Duration.ofMillis(5), s.quota());
        assertEquals(ActorScheduler.Ordering.FAIR, s.ordering());
        CountDownLatch ran = new CountDownLatch(1);
        s.schedule(ran::countDown);
        await(ran, LONG, "create() returns a started scheduler");

        ActorScheduler built = resources.scheduler(ActorScheduler.builder().name(uniqueName("builder")));
        assertEquals(Duration.ofMillis(5), built.quota());
        assertEquals(ActorScheduler.Ordering.FAIR, built.ordering());
    }

    @Test
    void groupArgumentsAreValidated() {
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(uniqueName("builder")).threads(1));
        IllegalArgumentException nullName = assertThrows(IllegalArgumentException.class, () -> s.group(null, 1));
        assertTrue(nullName.getMessage() != null && nullName.getMessage().contains("name"),
                () -> "group(null, 1): " + nullName.getMessage());
        IllegalArgumentException zeroWeight = assertThrows(IllegalArgumentException.class, () -> s.group("g", 0));
        assertTrue(zeroWeight.getMessage() != null && zeroWeight.getMessage().contains("weight"),
                () -> "group(\"g\", 0): " + zeroWeight.getMessage());
        assertThrows(IllegalArgumentException.class, () -> s.group("g", -3));

        ActorGroup g = s.group("g", 2);
        assertSame(g, s.group("g", 2), "group(..) is get-or-create");
        assertSame(s, g.scheduler());
        assertThrows(IllegalArgumentException.class, () -> s.group("g", 3),
                "an existing group with another weight");
    }

    @Test
    void nullTasksAreRejectedWithNullPointerException() {
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(uniqueName("builder")).threads(1));
        ActorWorker w = s.createWorker();
        ActorGroup g = s.group("g", 1);
        assertThrows(NullPointerException.class, () -> s.schedule(null));
        assertThrows(NullPointerException.class, () -> s.schedule(null, 1, TimeUnit.MILLISECONDS));
        assertThrows(NullPointerException.class, () -> s.schedulePeriodically(null, 1, 1, TimeUnit.MILLISECONDS));
        assertThrows(NullPointerException.class, () -> w.schedule(null));
        assertThrows(NullPointerException.class, () -> w.schedule(null, 1, TimeUnit.MILLISECONDS));
        assertThrows(NullPointerException.class, () -> w.schedulePeriodically(null, 1, 1, TimeUnit.MILLISECONDS));
        assertThrows(NullPointerException.class, () -> g.schedule(null));
        assertThrows(NullPointerException.class, () -> g.createWorker().schedule(null));
        // a rejected null leaves the worker usable
        CountDownLatch ran = new CountDownLatch(1);
        w.schedule(ran::countDown);
        await(ran, LONG, "worker still usable");
    }

    @Test
    void negativeDelaysRunRightAwayLikeReactor() {
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(uniqueName("builder")).threads(1));
        ActorWorker w = s.createWorker();
        CountDownLatch ran = new CountDownLatch(3);
        s.schedule(ran::countDown, -5, TimeUnit.SECONDS);
        w.schedule(ran::countDown, -1, TimeUnit.MILLISECONDS);
        var d = s.schedulePeriodically(ran::countDown, -5, 60, TimeUnit.SECONDS);
        // "right away" here means: long before the |delay| of 5 s; the bound is for noisy machines
        await(ran, Duration.ofSeconds(4), "tasks with a negative delay run immediately");
        d.dispose();
    }

    @Test
    void nonPositivePeriodsRunBackToBackUntilCancelledLikeReactor() {
        // Reactor runs a periodic task with period <= 0 again as soon as a run ends
        ActorScheduler s = resources.scheduler(ActorScheduler.builder().name(uniqueName("builder")).threads(2));
        ActorWorker w = s.createWorker();
        for (long period : new long[] {0, -1}) {
            AtomicInteger onScheduler = new AtomicInteger();
            AtomicInteger onWorker = new AtomicInteger();
            var d1 = s.schedulePeriodically(onScheduler::incrementAndGet, 0, period, TimeUnit.MILLISECONDS);
            var d2 = w.schedulePeriodically(onWorker::incrementAndGet, 0, period, TimeUnit.MILLISECONDS);
            long p = period;
            await(LONG, () -> onScheduler.get() >= 100 && onWorker.get() >= 100,
                    () -> "period " + p + ": ran " + onScheduler + " / " + onWorker + " times");
            d1.dispose();
            int a = onScheduler.get();
            d2.dispose();
            int b = onWorker.get();
            // Reactor's contract: no run starts after dispose(); the one in flight, if any, may still end
            // (on a busy machine, much later: its carrier may be descheduled). Uncancelled, a task with
            // period <= 0 would run thousands of times in these 150 ms.
            TestSupport.sleepMillis(150);
            assertTrue(onScheduler.get() <= a + 1,
                    "period " + period + ": still running after cancel (scheduler): " + a + " -> " + onScheduler);
            assertTrue(onWorker.get() <= b + 1,
                    "period " + period + ": still running after cancel (worker): " + b + " -> " + onWorker);
        }
    }
}
