package io.reactoractor;

import static io.reactoractor.TestSupport.uniqueName;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.reactoractor.actor.Actor;
import io.reactoractor.ring.RingBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A carrier is shared by many actors, so an interrupt meant for one task must not reach the next actor's, and
 * an interrupt nobody's task is running for is dropped, as a {@code ThreadPoolExecutor} (Reactor's
 * {@code newSingle}) drops it: a set flag makes {@code LockSupport.park} return at once, so an idle carrier
 * holding one spun at a full core until its next turn, which then got the stray interrupt. Each case runs on a
 * one-thread scheduler, so the next task runs on the carrier the interrupt reached; it checks the flag that task
 * sees (deterministic) and that the idle carrier parks (its CPU time over a second: a spinning carrier uses most
 * of it even next to CPU hogs, a parked one next to none).
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CarrierInterruptTest {

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    /** A parked carrier uses a few ms a second; a spinning one most of the second. */
    private static final long SPINNING_CPU_MS = 300;

    private final TestSupport.Resources resources = new TestSupport.Resources();

    @AfterEach
    void disposeAll() {
        resources.disposeAll();
        Schedulers.resetOnScheduleHook("interrupt-test");
    }

    private ActorScheduler oneCarrier() {
        // no compensating carrier: a turn a busy machine stretches past the hog threshold must not move the
        // next turns to another thread than the one the test watches
        return resources.scheduler(ActorScheduler.builder().name(uniqueName("interrupt")).threads(1)
                .maxCompensatingThreads(0));
    }

    private static Thread carrierOf(Scheduler s) throws Exception {
        CompletableFuture<Thread> t = new CompletableFuture<>();
        s.schedule(() -> t.complete(Thread.currentThread()));
        return t.get(20, TimeUnit.SECONDS);
    }

    /** @return whether the next task on {@code s} (another actor: the default group's lane) sees the flag */
    private static boolean nextTaskSeesTheFlag(Scheduler s) throws Exception {
        CompletableFuture<Boolean> seen = new CompletableFuture<>();
        s.schedule(() -> seen.complete(Thread.interrupted()));
        return seen.get(20, TimeUnit.SECONDS);
    }

    private static long cpuMillisOver(Thread t, long wallMillis) throws InterruptedException {
        long before = MX.getThreadCpuTime(t.getId());
        Thread.sleep(wallMillis);
        return (MX.getThreadCpuTime(t.getId()) - before) / 1_000_000L;
    }

    /** The idle carrier parks (no spin on a set flag), and the next actor's task sees no interrupt. */
    private static void assertTheCarrierParksAndTheNextTaskSeesNoInterrupt(Scheduler s, Thread carrier)
            throws Exception {
        Thread.sleep(200);
        assertThat(cpuMillisOver(carrier, 1000)).as("idle carrier CPU ms over 1 s").isLessThan(SPINNING_CPU_MS);
        assertThat(nextTaskSeesTheFlag(s)).as("the next actor's task sees the flag").isFalse();
    }

    private static Actor<Integer, Integer> echo(ActorScheduler s) {
        return Actor.<Integer, Integer>builder(s).behaviour((m, ctx) -> {
            ctx.emit(m);
            return true;
        }).build();
    }

    private static void interruptCurrent() {
        Thread.currentThread().interrupt();
    }

    @Test
    void aTaskThatInterruptsItsCarrierLeavesTheNextTaskUninterrupted() throws Exception {
        ActorScheduler s = oneCarrier();
        Thread carrier = carrierOf(s);
        s.schedule(CarrierInterruptTest::interruptCurrent);
        assertThat(nextTaskSeesTheFlag(s)).as("the next task sees the flag").isFalse();
        s.schedule(CarrierInterruptTest::interruptCurrent);
        Thread.sleep(200);
        assertThat(cpuMillisOver(carrier, 1000)).as("idle carrier CPU ms over 1 s").isLessThan(SPINNING_CPU_MS);
    }

    @Test
    void anInterruptThatReachesAnIdleCarrierIsDroppedAndTheCarrierParks() throws Exception {
        ActorScheduler s = oneCarrier();
        Thread carrier = carrierOf(s);
        Thread.sleep(200); // idle
        carrier.interrupt();
        Thread.sleep(200);
        assertThat(cpuMillisOver(carrier, 1000)).as("idle carrier CPU ms over 1 s after an interrupt")
                .isLessThan(SPINNING_CPU_MS);
        carrier.interrupt();
        assertThat(nextTaskSeesTheFlag(s)).as("the next task sees the idle carrier's interrupt").isFalse();
    }

    @Test
    void aSubscriberThatInterruptsInATerminalSignalLeavesNoInterruptBehind() throws Exception {
        ActorScheduler s = oneCarrier();
        Thread carrier = carrierOf(s);
        Actor<Integer, Integer> actor = echo(s);
        CompletableFuture<Thread> completedOn = new CompletableFuture<>();
        Flux.from(actor).doOnComplete(() -> {
            completedOn.complete(Thread.currentThread());
            interruptCurrent(); // after the actor's last task: outside any task's bracket
        }).subscribe();
        assertThat(actor.tell(1)).isTrue();
        actor.complete();
        assertThat(completedOn.get(20, TimeUnit.SECONDS)).as("onComplete ran on the carrier").isSameAs(carrier);
        assertTheCarrierParksAndTheNextTaskSeesNoInterrupt(s, carrier);
    }

    @Test
    void aRingTerminationCallbackThatInterruptsLeavesNoInterruptBehind() throws Exception {
        ActorScheduler s = oneCarrier();
        Thread carrier = carrierOf(s);
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(s).size(16).build();
        ring.consumer("c", (e, seq, endOfBatch) -> e);
        CompletableFuture<Thread> terminatedOn = new CompletableFuture<>();
        ring.whenTerminated().subscribe(null, null, () -> {
            terminatedOn.complete(Thread.currentThread());
            interruptCurrent();
        });
        ring.start();
        assertThat(ring.tryPublish(1)).isTrue();
        ring.complete();
        assertThat(terminatedOn.get(20, TimeUnit.SECONDS)).as("whenTerminated on the carrier").isSameAs(carrier);
        assertTheCarrierParksAndTheNextTaskSeesNoInterrupt(s, carrier);
    }

    @Test
    void aScheduleHookThatInterruptsAfterAnActorsTurnLeavesNoInterruptBehind() throws Exception {
        ActorScheduler s = oneCarrier();
        Thread carrier = carrierOf(s);
        Actor<Integer, Integer> actor = echo(s);
        Flux.from(actor).subscribe();
        CompletableFuture<Boolean> hooked = new CompletableFuture<>();
        // the hook decorates the actor's whole turn (the actor is scheduled by the tell below)
        Schedulers.onScheduleHook("interrupt-test", r -> () -> {
            r.run();
            if (Thread.currentThread() == carrier && !hooked.isDone()) {
                interruptCurrent(); // after the turn's last task
                hooked.complete(true);
            }
        });
        // a turn that started before the hook was installed (the subscription's) may take a message told now:
        // tell until a turn the hook decorated has run
        for (int i = 0; i < 200 && !hooked.isDone(); i++) {
            assertThat(actor.tell(i)).isTrue();
            try {
                hooked.get(100, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException notYet) {
                // tell again
            }
        }
        assertThat(hooked.getNow(false)).as("a decorated turn ran").isTrue();
        Schedulers.resetOnScheduleHook("interrupt-test");
        assertTheCarrierParksAndTheNextTaskSeesNoInterrupt(s, carrier);
    }

    @Test
    void anInterruptDuringATaskStillReachesThatTask() throws Exception {
        ActorScheduler s = oneCarrier();
        Thread carrier = carrierOf(s);
        CompletableFuture<Boolean> woken = new CompletableFuture<>();
        CompletableFuture<Void> started = new CompletableFuture<>();
        s.schedule(() -> {
            started.complete(null);
            try {
                Thread.sleep(Duration.ofSeconds(30).toMillis());
                woken.complete(false);
            } catch (InterruptedException e) {
                woken.complete(true);
            }
        });
        started.get(20, TimeUnit.SECONDS);
        carrier.interrupt();
        assertThat(woken.get(20, TimeUnit.SECONDS)).as("the running task was interrupted").isTrue();
        assertThat(nextTaskSeesTheFlag(s)).isFalse();
    }
}
