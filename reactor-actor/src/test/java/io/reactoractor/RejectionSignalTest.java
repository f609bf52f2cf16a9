package io.reactoractor;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Function;

import io.reactoractor.actor.Actor;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Exceptions;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * A stream whose scheduler is disposed under it gets {@code onError(RejectedExecutionException)} "as Reactor's
 * operators signal on a disposed scheduler" (Actor's Javadoc): through {@code Operators.onRejectedExecution}, so the
 * subscriber's {@code reactor.onRejectedExecution.local} hook (or else {@code Hooks.onOperatorError}) sees it, and a
 * fresh exception. The actor and the ring consumer used to signal Reactor's JVM-wide shared rejection without either
 * hook; a subscriber adding a suppressed exception to it changed every later rejection in the JVM. Reactor's
 * {@code publishOn} is the peer in each test.
 */
class RejectionSignalTest {

    private static final String KEY = "rejection-signal-test";

    @AfterEach
    void resetHooks() {
        Hooks.resetOnOperatorError(KEY);
    }

    static final class MappedRejection extends RuntimeException {
        MappedRejection(Throwable cause) {
            super("mapped", cause);
        }
    }

    /** A live stream built by {@code stream}, its scheduler disposed by the returned action after subscription. */
    private interface Setup {
        Runnable subscribe(Function<Flux<Integer>, Flux<Integer>> decorate, AtomicReference<Throwable> got,
                CountDownLatch ended);
    }

    private static Runnable subscribe(Flux<Integer> flux, Function<Flux<Integer>, Flux<Integer>> decorate,
            AtomicReference<Throwable> got, CountDownLatch ended) {
        decorate.apply(flux).subscribe(v -> { }, e -> {
            got.set(e);
            ended.countDown();
        });
        return () -> { };
    }

    private static List<Object[]> setups() {
        Setup reactorPeer = (decorate, got, ended) -> {
            Scheduler p = Schedulers.newParallel("rejection-peer", 1);
            Sinks.Many<Integer> sink = Sinks.many().unicast().onBackpressureBuffer();
            subscribe(sink.asFlux().hide().publishOn(p), decorate, got, ended);
            return () -> {
                p.dispose();
                sink.tryEmitNext(1); // Reactor's publishOn finds out at its next element
            };
        };
        Setup actor = (decorate, got, ended) -> {
            ActorScheduler s = ActorScheduler.builder().name("rejection-actor").threads(1).build();
            subscribe(Flux.from(Actor.<Integer>identity(s, 8)), decorate, got, ended);
            return s::dispose;
        };
        Setup ringConsumer = (decorate, got, ended) -> {
            ActorScheduler s = ActorScheduler.builder().name("rejection-ring").threads(1).build();
            RingBuffer<Integer> ring = RingBuffer.<Integer>builder(s).size(8).build();
            RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, seq, end) -> e);
            ring.start();
            subscribe(Flux.from(c), decorate, got, ended);
            return s::dispose;
        };
        // a consume() stream waiting in its long poll: its pull fails in the pair's actor's termination
        Setup consumeStream = (decorate, got, ended) -> {
            ActorScheduler s = ActorScheduler.builder().name("rejection-consume-stream").threads(1).build();
            PullConsumer consumer = PullConsumer.builder(s).build();
            subscribe(consumer.consume("s", "g").map(d -> 1), decorate, got, ended);
            return s::dispose;
        };
        // a consume() stream with no demand, so no pull in flight: the consumer ends it when the actor terminates
        Setup idleConsumeStream = (decorate, got, ended) -> {
            ActorScheduler s = ActorScheduler.builder().name("rejection-consume-idle").threads(1).build();
            PullConsumer consumer = PullConsumer.builder(s).build();
            consumer.pull("s", "g", 1, Duration.ZERO, false).block(Duration.ofSeconds(10)); // the pair's actor
            decorate.apply(consumer.consume("s", "g").map(d -> 1)).subscribe(new BaseSubscriber<Integer>() {
                @Override
                protected void hookOnSubscribe(Subscription subscription) {
                    // no demand
                }

                @Override
                protected void hookOnError(Throwable e) {
                    got.set(e);
                    ended.countDown();
                }
            });
            return s::dispose;
        };
        // a long poll (pull(..)) waiting in the pair's actor
        Setup waitingPull = (decorate, got, ended) -> {
            ActorScheduler s = ActorScheduler.builder().name("rejection-pull").threads(1).build();
            PullConsumer consumer = PullConsumer.builder(s).build();
            subscribe(consumer.pull("s", "g", 1, Duration.ofSeconds(30), false).map(r -> 1).flux(), decorate, got,
                    ended);
            return s::dispose;
        };
        return List.of(new Object[] {"Reactor publishOn", reactorPeer}, new Object[] {"actor", actor},
                new Object[] {"ring consumer", ringConsumer}, new Object[] {"consume() stream", consumeStream},
                new Object[] {"consume() stream with no pull in flight", idleConsumeStream},
                new Object[] {"waiting pull", waitingPull});
    }

    @Test
    void theSubscribersLocalRejectionHookMapsIt() throws Exception {
        for (Object[] setup : setups()) {
            List<Throwable> seen = new CopyOnWriteArrayList<>();
            BiFunction<Throwable, Object, Throwable> local = (e, v) -> {
                seen.add(e);
                return new MappedRejection(e);
            };
            AtomicReference<Throwable> got = new AtomicReference<>();
            CountDownLatch ended = new CountDownLatch(1);
            Runnable dispose = ((Setup) setup[1]).subscribe(
                    f -> f.contextWrite(Context.of("reactor.onRejectedExecution.local", local)), got, ended);
            Thread.sleep(20);
            dispose.run();
            assertThat(ended.await(10, TimeUnit.SECONDS)).as(setup[0] + " ended").isTrue();
            assertThat(got.get()).as(setup[0] + "").isInstanceOf(MappedRejection.class)
                    .hasCauseInstanceOf(RejectedExecutionException.class);
            assertThat(seen).as(setup[0] + ": the hook saw it once").hasSize(1);
        }
    }

    @Test
    void withoutALocalHookTheGlobalOperatorErrorHookSeesIt() throws Exception {
        for (Object[] setup : setups()) {
            List<Throwable> seen = new CopyOnWriteArrayList<>();
            Hooks.onOperatorError(KEY, (e, v) -> {
                if (e instanceof RejectedExecutionException) {
                    seen.add(e);
                }
                return e;
            });
            AtomicReference<Throwable> got = new AtomicReference<>();
            CountDownLatch ended = new CountDownLatch(1);
            Runnable dispose = ((Setup) setup[1]).subscribe(f -> f, got, ended);
            Thread.sleep(20);
            dispose.run();
            assertThat(ended.await(10, TimeUnit.SECONDS)).as(setup[0] + " ended").isTrue();
            assertThat(got.get()).as(setup[0] + "").isInstanceOf(RejectedExecutionException.class);
            assertThat(seen).as(setup[0] + ": the global hook saw it").containsExactly(got.get());
            Hooks.resetOnOperatorError(KEY);
        }
    }

    @Test
    void itIsAFreshExceptionNotReactorsSharedOne() throws Exception {
        RuntimeException shared = Exceptions.failWithRejected();
        for (Object[] setup : setups()) {
            int before = shared.getSuppressed().length;
            AtomicReference<Throwable> got = new AtomicReference<>();
            CountDownLatch ended = new CountDownLatch(1);
            Runnable dispose = ((Setup) setup[1]).subscribe(
                    f -> f.doOnError(e -> e.addSuppressed(new Exception("added by the application"))), got, ended);
            Thread.sleep(20);
            dispose.run();
            assertThat(ended.await(10, TimeUnit.SECONDS)).as(setup[0] + " ended").isTrue();
            assertThat(got.get()).as(setup[0] + "").isInstanceOf(RejectedExecutionException.class).isNotSameAs(shared);
            assertThat(shared.getSuppressed()).as(setup[0] + ": the shared instance is untouched").hasSize(before);
        }
    }

    @Test
    void aSendRefusedByAClosingSchedulerGoesThroughTheLocalHookToo() {
        ActorScheduler s = ActorScheduler.builder().name("rejection-send").threads(1).build();
        CountDownLatch release = new CountDownLatch(1);
        try {
            Actor<Integer, Integer> actor = Actor.<Integer>identity(s, 8);
            s.schedule(() -> {
                try {
                    release.await(10, TimeUnit.SECONDS); // holds the graceful disposal open
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            s.disposeGracefully().subscribe(); // the actor takes no new input from now on
            BiFunction<Throwable, Object, Throwable> local = (e, v) -> new MappedRejection(e);
            Throwable error = actor.send(1)
                    .contextWrite(Context.of("reactor.onRejectedExecution.local", local))
                    .then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(Duration.ofSeconds(10));
            assertThat(error).isInstanceOf(MappedRejection.class).hasCauseInstanceOf(RejectedExecutionException.class);
        } finally {
            release.countDown();
            s.dispose();
        }
    }

    /**
     * PullConsumer's class doc: the scheduler terminating under a live consumer ends what was under way with
     * {@code RejectedExecutionException}, the consumer itself not disposed (a {@code consume} stream used to end with
     * the consumer's "pull consumer closed" {@code IllegalStateException} while {@code isDisposed()} was false); the
     * consumer's own {@code dispose()} still ends it with {@code IllegalStateException}.
     */
    @Test
    void aConsumeStreamWhoseSchedulerIsDisposedEndsWithARejectionAndTheConsumerStaysUndisposed() throws Exception {
        for (boolean schedulerDisposed : new boolean[] {true, false}) {
            ActorScheduler s = ActorScheduler.builder().name("rejection-consume").threads(1).build();
            PullConsumer consumer = PullConsumer.builder(s).build();
            try {
                AtomicReference<Throwable> got = new AtomicReference<>();
                CountDownLatch ended = new CountDownLatch(1);
                consumer.consume("s", "g").subscribe(d -> { }, e -> {
                    got.set(e);
                    ended.countDown();
                });
                Thread.sleep(50); // waiting in its long poll
                if (schedulerDisposed) {
                    s.dispose();
                } else {
                    consumer.dispose();
                }
                assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
                if (schedulerDisposed) {
                    assertThat(got.get()).isInstanceOf(RejectedExecutionException.class);
                    assertThat(consumer.isDisposed()).isFalse();
                } else {
                    assertThat(got.get()).isInstanceOf(IllegalStateException.class);
                }
            } finally {
                consumer.dispose();
                s.dispose();
            }
        }
    }
}
