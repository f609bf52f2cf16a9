package io.reactoractor.actor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Sinks;

/**
 * A user suspension holds messages and terminal signals alike until {@code resume()}, also when it is made
 * while a turn is running (found by a black-box probe: in about 2 % of rounds the turn that was running
 * when {@code suspend()} returned went on to process a message told afterwards, or delivered an upstream's
 * error, without a resume).
 */
class SuspensionHoldsSignalsTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("suspension-holds").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    private static final class Recording extends BaseSubscriber<Integer> {
        final List<String> signals = new CopyOnWriteArrayList<>();
        final CountDownLatch terminated = new CountDownLatch(1);

        @Override
        protected void hookOnSubscribe(Subscription s) {
            request(10); // the actor's first turn starts now, racing the suspend() below
        }

        @Override
        protected void hookOnNext(Integer v) {
            signals.add("next:" + v);
        }

        @Override
        protected void hookOnError(Throwable t) {
            signals.add("error");
            terminated.countDown();
        }

        @Override
        protected void hookOnComplete() {
            signals.add("complete");
            terminated.countDown();
        }
    }

    @Test
    void nothingReachesTheSubscriberBetweenSuspendAndResume() throws Exception {
        for (int round = 0; round < 300; round++) {
            Actor<Integer, Integer> actor = Actor.identity(scheduler, 8);
            Sinks.Many<Integer> upstream = Sinks.many().unicast().onBackpressureError();
            Recording downstream = new Recording();
            actor.subscribe(downstream);
            upstream.asFlux().subscribe(actor);
            actor.suspend();
            upstream.tryEmitNext(1);
            upstream.tryEmitNext(2);
            upstream.tryEmitError(new IllegalStateException("upstream failed"));
            Thread.sleep(3);

            assertThat(downstream.signals).as("round " + round + ", before resume()").isEmpty();
            assertThat(actor.isSuspended()).isTrue();

            actor.resume();
            assertThat(downstream.terminated.await(10, TimeUnit.SECONDS)).isTrue();
            // the error goes first (the class doc's precedence); the messages still queued are discarded
            assertThat(downstream.signals).as("round " + round).containsExactly("error");
        }
    }
}
