package io.reactoractor.actor;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * An actor that fails hands its mailbox to the discard hook <em>before</em> {@code onError}, as Reactor's
 * {@code publishOn} discards its queue first (found by a black-box probe: the discards came after, so a
 * subscriber checking them once it saw the error, as a {@code StepVerifier} does, found none). The same
 * scenario runs on Reactor's {@code publishOn} in the same test.
 */
class ActorDiscardOrderTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("discard-order").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    /** Requests nothing; at onError, copies what was discarded so far. */
    private static final class NoDemand extends BaseSubscriber<Integer> {
        final List<Object> discarded;
        final AtomicReference<List<Object>> atError = new AtomicReference<>();
        final CountDownLatch failed = new CountDownLatch(1);

        NoDemand(List<Object> discarded) {
            this.discarded = discarded;
        }

        @Override
        protected void hookOnSubscribe(Subscription s) {
            // no demand: everything stays queued
        }

        @Override
        protected void hookOnError(Throwable t) {
            atError.set(List.copyOf(discarded));
            failed.countDown();
        }
    }

    private static List<Object> run(Flux<Integer> stage, Sinks.Many<Integer> upstream, java.util.function.BooleanSupplier queued)
            throws InterruptedException {
        List<Object> discarded = new CopyOnWriteArrayList<>();
        NoDemand d = new NoDemand(discarded);
        stage.doOnDiscard(Object.class, discarded::add).subscribe(d);
        for (int i = 1; i <= 3; i++) {
            upstream.tryEmitNext(i);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!queued.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        upstream.tryEmitError(new IllegalStateException("upstream failed"));
        assertThat(d.failed.await(10, TimeUnit.SECONDS)).isTrue();
        return d.atError.get();
    }

    @Test
    void theMailboxIsDiscardedBeforeOnErrorAsReactorsPublishOnDoes() throws Exception {
        for (int round = 0; round < 50; round++) {
            Sinks.Many<Integer> peerUpstream = Sinks.many().unicast().onBackpressureBuffer();
            List<Object> reactor = run(peerUpstream.asFlux().publishOn(Schedulers.single(), false, 32),
                    peerUpstream, () -> true);

            Sinks.Many<Integer> upstream = Sinks.many().unicast().onBackpressureBuffer();
            Actor<Integer, Integer> actor = Actor.identity(scheduler, 8);
            upstream.asFlux().subscribe(actor);
            List<Object> ours = run(Flux.from(actor), upstream, () -> actor.mailboxSize() == 3);

            assertThat(reactor).as("Reactor's publishOn, round " + round).containsExactly(1, 2, 3);
            assertThat(ours).as("round " + round).containsExactly(1, 2, 3);
        }
    }

    @Test
    void underTheStopPolicyTheFailedMessageAndTheRestAreDiscardedBeforeOnError() throws Exception {
        List<Object> discarded = new CopyOnWriteArrayList<>();
        NoDemand d = new NoDemand(discarded);
        Actor<Integer, Integer> actor = Actor.<Integer, Integer>builder(scheduler).capacity(8)
                .errorPolicy(ErrorPolicy.stop()).behaviour((m, ctx) -> {
                    throw new IllegalArgumentException("behaviour failed on " + m);
                }).build();
        Flux.from(actor).doOnDiscard(Object.class, discarded::add).subscribe(d);
        d.request(1); // the first message runs (and fails); the rest wait in the mailbox
        actor.suspend();
        for (int i = 1; i <= 3; i++) {
            assertThat(actor.tell(i)).isTrue();
        }
        actor.resume();
        assertThat(d.failed.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(d.atError.get()).containsExactly(1, 2, 3);
        Thread.sleep(Duration.ofMillis(50).toMillis());
        assertThat(discarded).containsExactly(1, 2, 3); // nothing twice
    }
}
