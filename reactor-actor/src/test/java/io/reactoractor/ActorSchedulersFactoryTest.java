package io.reactoractor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.NonBlocking;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

class ActorSchedulersFactoryTest {

    @AfterEach
    void reset() {
        Schedulers.resetFactory();
    }

    private static Thread threadOf(Scheduler s) {
        return Mono.fromCallable(Thread::currentThread).subscribeOn(s).block(Duration.ofSeconds(30));
    }

    @Test
    void parallelAndSingleBecomeFairActorSchedulersNamedLikeReactors() {
        Schedulers.setFactory(ActorSchedulers.factory());

        Thread parallel = threadOf(Schedulers.parallel());
        assertTrue(parallel.getName().startsWith("parallel-"), parallel.getName());
        assertInstanceOf(NonBlocking.class, parallel);

        Thread single = threadOf(Schedulers.single());
        assertEquals("single-1", single.getName());
        assertInstanceOf(NonBlocking.class, single);

        Scheduler custom = Schedulers.newParallel("tenants", 3);
        try {
            ActorScheduler actor = assertInstanceOf(ActorScheduler.class, custom);
            assertEquals("tenants", actor.name());
            assertEquals(3, actor.threads());
            assertTrue(threadOf(custom).getName().startsWith("tenants-"));
        } finally {
            custom.dispose();
        }
        // Reactor takes any name; one longer than a scheduler name may be is cut, not replaced by the default
        Scheduler longName = Schedulers.newParallel("n".repeat(70), 1);
        try {
            assertEquals("n".repeat(64), ((ActorScheduler) longName).name());
            assertTrue(threadOf(longName).getName().startsWith("nnnn"), threadOf(longName).getName());
        } finally {
            longName.dispose();
        }
        Scheduler one = Schedulers.newSingle("solo");
        try {
            assertEquals(1, assertInstanceOf(ActorScheduler.class, one).threads());
            assertEquals("solo", ((ActorScheduler) one).name());
        } finally {
            one.dispose();
        }
    }

    @Test
    void theBuilderChoosesDaemonOrNot() {
        ActorScheduler byDefault = ActorScheduler.builder().name("daemon-default").threads(1).build();
        ActorScheduler not = ActorScheduler.builder().name("daemon-off").threads(1).daemon(false).build();
        try {
            assertTrue(byDefault.daemon());
            assertTrue(threadOf(byDefault).isDaemon());
            assertFalse(not.daemon());
            assertFalse(threadOf(not).isDaemon(), "a non-daemon carrier keeps the JVM alive until disposal");
        } finally {
            byDefault.dispose();
            not.dispose();
        }
    }

    /** Reactor's daemon flag is kept: newParallel(name, n) non-daemon, the shared parallel() daemon. */
    @Test
    void carriersFollowTheDaemonFlagOfReactorsThreadFactory() {
        Schedulers.setFactory(ActorSchedulers.factory());
        assertTrue(threadOf(Schedulers.parallel()).isDaemon(), "Schedulers.parallel()");
        java.util.Map<Scheduler, Boolean> expected = new java.util.LinkedHashMap<>();
        expected.put(Schedulers.newParallel("p-user", 2), false);
        expected.put(Schedulers.newParallel("p-daemon", 2, true), true);
        expected.put(Schedulers.newSingle("s-user"), false);
        expected.put(Schedulers.newSingle("s-daemon", true), true);
        for (java.util.Map.Entry<Scheduler, Boolean> e : expected.entrySet()) {
            Scheduler s = e.getKey();
            try {
                ActorScheduler actor = assertInstanceOf(ActorScheduler.class, s);
                assertEquals(e.getValue(), actor.daemon(), actor.name());
                assertEquals(e.getValue(), threadOf(s).isDaemon(), actor.name() + "'s carrier");
            } finally {
                s.dispose();
            }
        }
    }

    /** Reactor takes any name: the factory mends one a scheduler may not have rather than refuse it. */
    @Test
    void namesReactorTakesAreMendedNotRefused() {
        Schedulers.setFactory(ActorSchedulers.factory());
        java.util.Map<String, String> expected = new java.util.LinkedHashMap<>();
        expected.put("tab\tname", "tab name");
        expected.put("line\nbreak\u0000", "line break ");
        expected.put("\t\n", "actor"); // blank once mended: the default
        expected.put("x".repeat(100), "x".repeat(64));
        for (java.util.Map.Entry<String, String> e : expected.entrySet()) {
            Scheduler s = Schedulers.newParallel(e.getKey(), 1, true);
            try {
                assertEquals(e.getValue(), assertInstanceOf(ActorScheduler.class, s).name());
            } finally {
                s.dispose();
            }
        }
    }

    /** "Daemon if the factory fails": any failure but a JVM-fatal one, which goes on to the caller. */
    @Test
    void aThreadFactoryThatFailsFallsBackToDaemonUnlessTheErrorIsJvmFatal() {
        for (Throwable failure : java.util.List.<Throwable>of(new IllegalStateException("test"),
                new AssertionError("test: an Error that is not JVM-fatal"))) {
            Scheduler s = ActorSchedulers.factory().newParallel(1, r -> {
                throw sneaky(failure);
            });
            try {
                assertTrue(assertInstanceOf(ActorScheduler.class, s).daemon(), failure.toString());
                assertEquals(1, Mono.fromCallable(() -> 1).subscribeOn(s).block(Duration.ofSeconds(10)));
            } finally {
                s.dispose();
            }
        }
        LinkageError fatal = new LinkageError("test: JVM-fatal");
        assertEquals(fatal, assertThrows(LinkageError.class, () -> ActorSchedulers.factory().newParallel(1, r -> {
            throw fatal;
        })));
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
        throw (E) t;
    }

    @Test
    void aSingleSchedulerNeverRunsTwoTasksAtOnceEvenBehindAHog() throws InterruptedException {
        // a low hog threshold: without the single scheduler's rule a compensating thread would start
        Schedulers.setFactory(ActorSchedulers.factory(b -> b.hogThreshold(Duration.ofMillis(20))));
        Scheduler one = Schedulers.newSingle("serial");
        try {
            java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger most = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(2);
            Runnable hog = () -> {
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    Thread.sleep(200); // ten hog thresholds
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                running.decrementAndGet();
                done.countDown();
            };
            one.createWorker().schedule(hog);
            one.createWorker().schedule(hog);
            assertTrue(done.await(30, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(1, most.get(), "tasks of a single scheduler ran at the same time");
        } finally {
            one.dispose();
        }
    }

    @Test
    void boundedElasticStaysReactorsSoBlockingWorkNeverLandsOnCarriers() {
        Schedulers.setFactory(ActorSchedulers.factory());
        Thread elastic = threadOf(Schedulers.boundedElastic());
        assertTrue(elastic.getName().startsWith("boundedElastic-"), elastic.getName());
        assertFalse(elastic instanceof NonBlocking, "boundedElastic threads may block");
        Scheduler own = Schedulers.newBoundedElastic(2, 10, "io");
        try {
            assertFalse(own instanceof ActorScheduler);
        } finally {
            own.dispose();
        }
    }

    @Test
    void aCustomizerCannotGiveSingleASecondThreadOrACompensatingOne() throws InterruptedException {
        Schedulers.setFactory(ActorSchedulers.factory(b -> b.threads(4).maxCompensatingThreads(2)
                .hogThreshold(Duration.ofMillis(20))));
        Scheduler s = Schedulers.newSingle("solo");
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try {
            ActorScheduler actor = assertInstanceOf(ActorScheduler.class, s);
            assertEquals(1, actor.threads());
            java.util.concurrent.CountDownLatch hogging = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.atomic.AtomicBoolean otherRan = new java.util.concurrent.atomic.AtomicBoolean();
            s.createWorker().schedule(() -> {
                hogging.countDown();
                TestSupport.awaitQuietly(release, TestSupport.LONG); // blocked: a hog past 20 ms
            });
            assertTrue(hogging.await(30, java.util.concurrent.TimeUnit.SECONDS));
            s.createWorker().schedule(() -> otherRan.set(true));
            TestSupport.await(TestSupport.LONG, () -> actor.stats().hogsDetected() >= 1, "the hog is detected");
            TestSupport.sleepMillis(300); // a compensating thread, had one started, would have run the other task
            assertEquals(0, actor.stats().compensatingThreads());
            assertFalse(otherRan.get(), "no two tasks of a single scheduler at once");
        } finally {
            release.countDown();
            s.dispose();
        }
    }

    @Test
    void customizerAppliesToEveryScheduler() {
        Schedulers.setFactory(ActorSchedulers.factory(b -> b.quota(Duration.ofMillis(2))
                .ordering(ActorScheduler.Ordering.FIFO)));
        Scheduler s = Schedulers.newParallel("custom", 2);
        try {
            ActorScheduler actor = assertInstanceOf(ActorScheduler.class, s);
            assertEquals(Duration.ofMillis(2), actor.quota());
            assertEquals(ActorScheduler.Ordering.FIFO, actor.ordering());
            assertEquals(2, actor.threads());
        } finally {
            s.dispose();
        }
    }

    @Test
    void nullCustomizerIsRejectedNamingTheParameter() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ActorSchedulers.factory(null));
        assertTrue(e.getMessage().contains("customizer"), e.getMessage());
    }

    /**
     * "makes every Schedulers.parallel(), single() ... a fair ActorScheduler": the shared ones are Reactor's
     * cache wrapper around it, and the library's own kinds (actors, the fair publishOn, rings) take them as
     * they take the ActorScheduler itself. They refused the wrapper with IllegalArgumentException.
     */
    @Test
    void theLibrarysActorKindsRunOnTheSharedSchedulersAfterSetFactory() {
        Schedulers.setFactory(ActorSchedulers.factory());
        Scheduler parallel = Schedulers.parallel();
        assertFalse(parallel instanceof ActorScheduler, "Reactor's cache wrapper, not the scheduler itself");

        io.reactoractor.actor.Actor<Integer, Thread> actor = io.reactoractor.actor.Actor.<Integer, Thread>builder(parallel)
                .behaviour((m, ctx) -> {
                    ctx.emit(Thread.currentThread());
                    return true;
                }).build();
        assertEquals("parallel", actor.group().scheduler().name());
        assertTrue(actor.tell(1));
        actor.complete();
        Thread ran = reactor.core.publisher.Flux.from(actor).blockLast(Duration.ofSeconds(30));
        assertTrue(ran.getName().startsWith("parallel-"), ran.getName());

        Thread hop = reactor.core.publisher.Flux.just(1)
                .transform(io.reactoractor.actor.ActorOperators.publishOn(parallel))
                .map(x -> Thread.currentThread()).blockLast(Duration.ofSeconds(30));
        assertTrue(hop.getName().startsWith("parallel-"), hop.getName());

        io.reactoractor.ring.RingBuffer<Integer> ring = io.reactoractor.ring.RingBuffer.<Integer>builder(Schedulers.single())
                .size(8).build();
        assertEquals("single", ring.group().scheduler().name());
        assertThrows(IllegalArgumentException.class,
                () -> io.reactoractor.actor.Actor.builder(Schedulers.immediate()), "not an actor scheduler");
    }

    /** Inside virtual time, parallel() is Reactor's VirtualTimeScheduler: the refusal says so, not "parallel()". */
    @Test
    void anActorOnParallelInsideVirtualTimeIsRefusedNamingTheVirtualTimeScheduler() {
        Schedulers.setFactory(ActorSchedulers.factory());
        reactor.test.scheduler.VirtualTimeScheduler.getOrSet();
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> io.reactoractor.actor.Actor.builder(Schedulers.parallel()));
            assertTrue(e.getMessage().contains("VirtualTimeScheduler") && e.getMessage().contains("real time"),
                    e.getMessage());
        } finally {
            reactor.test.scheduler.VirtualTimeScheduler.reset();
        }
        // the library's scheduler is back after virtual time
        assertEquals("parallel", io.reactoractor.actor.Actor.builder(Schedulers.parallel())
                .behaviour((m, ctx) -> true).build().group().scheduler().name());
    }
}
