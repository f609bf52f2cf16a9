package io.reactoractor.actor;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ActorWorker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * README: "Every task passes through {@code Schedulers.onSchedule}". A task of {@link ActorContext#schedule} did
 * not (only the turn that ran it did, on the carrier): a hook opening a span or capturing state per task missed it.
 * It now passes once, when scheduled, as a task given to a worker ({@link ActorWorker}, Reactor's workers) does.
 */
class ActorContextScheduleHookTest {

    private static final String KEY = "actor-context-schedule-hook";

    @AfterEach
    void reset() {
        Schedulers.resetOnScheduleHook(KEY);
    }

    /** A task the hook recognises. */
    static final class Marked implements Runnable {
        final CountDownLatch ran = new CountDownLatch(1);

        @Override
        public void run() {
            ran.countDown();
        }
    }

    @Test
    void aTaskOfTheActorContextPassesThroughTheScheduleHookOnceAsAWorkersTaskDoes() throws Exception {
        List<Runnable> hooked = new CopyOnWriteArrayList<>();
        AtomicInteger wrappedRuns = new AtomicInteger();
        Schedulers.onScheduleHook(KEY, r -> {
            if (!(r instanceof Marked)) {
                return r;
            }
            hooked.add(r);
            return () -> {
                wrappedRuns.incrementAndGet();
                r.run();
            };
        });
        ActorScheduler s = ActorScheduler.builder().name("context-schedule-hook").threads(1).build();
        try {
            Marked onWorker = new Marked();
            ActorWorker w = s.createWorker();
            w.schedule(onWorker, 1, TimeUnit.MILLISECONDS);
            assertThat(onWorker.ran.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(hooked).as("the peer: a worker's task").containsExactly(onWorker);

            Marked onActor = new Marked();
            Actor<Integer, Integer> actor = Actor.<Integer, Integer>builder(s).behaviour((m, ctx) -> {
                ctx.schedule(Duration.ofMillis(1), onActor);
                ctx.emit(m);
                return true;
            }).build();
            Flux.from(actor).subscribe();
            assertThat(actor.tell(1)).isTrue();
            assertThat(onActor.ran.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(hooked).as("the actor's task, once").containsExactly(onWorker, onActor);
            assertThat(wrappedRuns.get()).as("both ran inside the hook's wrapper").isEqualTo(2);
        } finally {
            s.dispose();
        }
    }
}
