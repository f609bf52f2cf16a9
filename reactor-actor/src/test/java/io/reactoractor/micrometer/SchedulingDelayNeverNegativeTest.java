package io.reactoractor.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.pause.PauseDetector;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.ActorScheduler;
import io.reactoractor.ActorWorker;
import org.junit.jupiter.api.Test;

/**
 * {@code reactor.actor.scheduling.delay} is ready → running, never negative: Micrometer drops a negative
 * sample with a warning in the application's log. An actor taken at the end of the previous turn starts
 * its turn at that turn's end clock (no clock read of its own), and one made ready by a thread outside the
 * pool after that clock was read (then drained from the arrivals by the pick) measured a negative delay
 * (down to -94 ms when the carrier was descheduled in between, in a black-box probe). Such a delay is
 * measured from a fresh clock read instead.
 */
class SchedulingDelayNeverNegativeTest {

    /** A registry whose timers note each negative amount they are given (Micrometer drops them). */
    static final class NegativeSamples extends SimpleMeterRegistry {
        final List<Long> negatives = new CopyOnWriteArrayList<>();
        /** Counted by both carriers at once: atomic (a volatile's ++ lost updates, and the check below failed). */
        final java.util.concurrent.atomic.AtomicLong samples = new java.util.concurrent.atomic.AtomicLong();

        @Override
        protected Timer newTimer(Meter.Id id, DistributionStatisticConfig config, PauseDetector pauseDetector) {
            Timer timer = super.newTimer(id, config, pauseDetector);
            if (!id.getName().equals("reactor.actor.scheduling.delay")) {
                return timer;
            }
            return (Timer) Proxy.newProxyInstance(Timer.class.getClassLoader(), new Class<?>[] {Timer.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("record") && args != null && args.length == 2
                                && args[0] instanceof Long amount) {
                            samples.incrementAndGet();
                            if (amount < 0) {
                                negatives.add(amount);
                            }
                        }
                        try {
                            return method.invoke(timer, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    @Test
    void wakeUpsFromOutsideThePoolBetweenTurnsNeverMeasureANegativeDelay() throws Exception {
        NegativeSamples registry = new NegativeSamples();
        ActorScheduler scheduler = ActorScheduler.builder().name("delay-sign").threads(2)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            // the carriers run short turns back to back: most picks happen at a previous turn's end
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch loopsDone = new CountDownLatch(4);
            for (int i = 0; i < 4; i++) {
                ActorWorker busy = scheduler.createWorker();
                Runnable[] self = new Runnable[1];
                self[0] = () -> {
                    if (stop.get()) {
                        loopsDone.countDown();
                    } else {
                        busy.schedule(self[0]);
                    }
                };
                busy.schedule(self[0]);
            }
            // meanwhile a thread outside the pool wakes idle workers, each wake-up stamping its ready time
            ActorWorker[] targets = new ActorWorker[64];
            for (int i = 0; i < targets.length; i++) {
                targets[i] = scheduler.createWorker();
            }
            int rounds = 1_000;
            for (int r = 0; r < rounds; r++) {
                // one task per worker, all idle: each one a wake-up (a worker with tasks queued is not woken)
                CountDownLatch ran = new CountDownLatch(targets.length);
                for (ActorWorker t : targets) {
                    t.schedule(ran::countDown);
                }
                assertTrue(ran.await(30, TimeUnit.SECONDS), "wake-ups of round " + r + " ran");
            }
            stop.set(true);
            assertTrue(loopsDone.await(30, TimeUnit.SECONDS), "busy loops stopped");
            // every turn records its delay; nearly every wake-up is a turn of its own (a task may still join the
            // turn of the previous round's, which counted down before it ended): the scenario did run
            assertTrue(registry.samples.get() >= (long) rounds * targets.length / 2,
                    "delay samples recorded: " + registry.samples.get());
            assertEquals(List.of(), registry.negatives, "negative scheduling delays (ns)");
        } finally {
            scheduler.dispose();
        }
    }
}
