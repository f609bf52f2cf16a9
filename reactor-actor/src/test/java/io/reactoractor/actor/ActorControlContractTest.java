package io.reactoractor.actor;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorScheduler;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;

/**
 * The actor's control features against their Javadoc (found by a black-box probe): a cancel stops the actor
 * at once also while a behaviour's {@code resumeAfter} holds it (it waited for the timer, 20 s in the probe);
 * a task of {@code ActorContext.schedule} waits for demand like a message (it ran with none); a
 * {@code Hooks.onOperatorError} hook that throws still leaves the decision to the error policy (the message
 * was retried without end whatever the policy), and one that throws a JVM-fatal error fails the actor or ring
 * as a behaviour throwing it does (that error escaped the policy: the same endless retry).
 */
class ActorControlContractTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-control").threads(2).build();

    @AfterEach
    void tearDown() {
        Hooks.resetOnOperatorError();
        scheduler.dispose();
    }

    private static ConditionFactory await() {
        return Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5));
    }

    /** A subscriber that requests {@code initial}, then only what the test asks for. */
    private static final class Requesting<T> extends BaseSubscriber<T> {
        final long initial;
        final List<T> values = new CopyOnWriteArrayList<>();
        volatile boolean completed;

        Requesting(long initial) {
            this.initial = initial;
        }

        @Override
        protected void hookOnSubscribe(Subscription s) {
            if (initial > 0) {
                s.request(initial);
            }
        }

        @Override
        protected void hookOnNext(T value) {
            values.add(value);
        }

        @Override
        protected void hookOnComplete() {
            completed = true;
        }
    }

    @Test
    void aCancelStopsTheActorAtOnceWhileAResumeAfterHoldsIt() {
        AtomicInteger upstreamCancelled = new AtomicInteger();
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler).behaviour((m, ctx) -> {
            ctx.resumeAfter(Duration.ofMinutes(10));
            return false; // the same message again after the timer
        }).build();
        Flux.just(1).concatWith(Flux.never()).doOnCancel(upstreamCancelled::incrementAndGet).subscribe(a);
        Requesting<Integer> downstream = new Requesting<>(Long.MAX_VALUE);
        a.subscribe(downstream);
        await().until(a::isSuspended);
        downstream.cancel();
        await().until(a::isTerminated);
        await().until(() -> upstreamCancelled.get() == 1);
    }

    /** An actor that emits each message and schedules a task, after {@code delay}, that emits its negation. */
    private Actor<Integer, Integer> emitThenSchedule(Duration delay, AtomicInteger runs) {
        return Actor.<Integer, Integer>builder(scheduler).behaviour((m, ctx) -> {
            ctx.schedule(delay, () -> {
                runs.incrementAndGet();
                ctx.emit(-m);
            });
            ctx.emit(m);
            return true;
        }).build();
    }

    /** Subscribes with a demand of 1, tells {@code 1}, and waits for its result: the demand is used up. */
    private static Requesting<Integer> firstResultTaken(Actor<Integer, Integer> a) {
        Requesting<Integer> downstream = new Requesting<>(1);
        a.subscribe(downstream);
        a.tell(1);
        await().until(() -> downstream.values.size() == 1);
        return downstream;
    }

    @Test
    void aScheduledTaskWaitsForDemandLikeAMessage() {
        AtomicInteger runs = new AtomicInteger();
        Actor<Integer, Integer> a = emitThenSchedule(Duration.ofMillis(20), runs);
        Requesting<Integer> downstream = firstResultTaken(a);
        // demand used up, mailbox empty: the task is due after 20 ms and must wait
        long until = System.nanoTime() + Duration.ofMillis(300).toNanos();
        while (System.nanoTime() < until) {
            assertThat(runs).as("a scheduled task ran without demand").hasValue(0);
            Thread.onSpinWait();
        }
        downstream.request(1);
        await().until(() -> runs.get() == 1 && downstream.values.size() == 2);
        assertThat(downstream.values).containsExactly(1, -1);
    }

    /** A completion runs the tasks already due first, as it processes the messages already in the mailbox. */
    @Test
    void aCompletionRunsTheTasksAlreadyDueFirstLikeMessages() throws InterruptedException {
        AtomicInteger runs = new AtomicInteger();
        Actor<Integer, Integer> a = emitThenSchedule(Duration.ZERO, runs);
        Requesting<Integer> downstream = firstResultTaken(a);
        a.complete();
        Thread.sleep(100);
        assertThat(downstream.completed).as("completed before the task that was due").isFalse();
        assertThat(runs).hasValue(0);
        downstream.request(1);
        await().until(() -> downstream.completed);
        assertThat(downstream.values).containsExactly(1, -1);
        assertThat(a.isTerminated()).isTrue();
    }

    @Test
    void aThrowingOperatorErrorHookLeavesTheDecisionToThePolicy() {
        AtomicInteger calls = new AtomicInteger();
        Hooks.onOperatorError("actor-control-test", (t, v) -> {
            throw new IllegalStateException("expected test failure: the hook fails");
        });
        Actor<Integer, Integer> skipping = Actor.<Integer, Integer>builder(scheduler).errorPolicy(ErrorPolicy.skip())
                .behaviour((m, ctx) -> {
                    calls.incrementAndGet();
                    throw new IllegalArgumentException("expected test failure: the behaviour fails");
                }).build();
        skipping.subscribe(new Requesting<>(Long.MAX_VALUE));
        skipping.tell(1);
        await().until(() -> skipping.skippedMessages() == 1);
        assertThat(calls).as("behaviour calls for one skipped message").hasValue(1);

        AtomicReference<Throwable> error = new AtomicReference<>();
        Actor<Integer, Integer> stopping = Actor.<Integer, Integer>builder(scheduler)
                .behaviour((m, ctx) -> {
                    throw new IllegalArgumentException("expected test failure: the behaviour fails");
                }).build();
        Flux.from(stopping).subscribe(v -> { }, error::set);
        stopping.tell(1);
        await().until(() -> error.get() != null);
        assertThat(error.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("the hook fails");
        assertThat(error.get().getSuppressed()).hasSize(1);
        assertThat(error.get().getSuppressed()[0]).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aThrowingOperatorErrorHookLeavesTheDecisionToARingsPolicy() {
        Hooks.onOperatorError("actor-control-test", (t, v) -> {
            throw new IllegalStateException("expected test failure: the hook fails");
        });
        io.reactoractor.ring.RingBuffer<Integer> ring = io.reactoractor.ring.RingBuffer.<Integer>builder(scheduler)
                .size(8).errorPolicy(io.reactoractor.ring.RingErrorPolicy.SKIP).build();
        List<Integer> handled = new CopyOnWriteArrayList<>();
        io.reactoractor.ring.RingConsumer<Integer, Void> c = ring.consumer("c", (e, seq, eob) -> {
            handled.add(e);
            if (e == 1) {
                throw new IllegalArgumentException("expected test failure: the handler fails");
            }
            return null;
        });
        ring.handleEventsWith(c);
        ring.start();
        for (int i = 0; i < 4; i++) {
            assertThat(ring.tryPublish(i)).isTrue();
        }
        await().until(() -> c.processedEvents() == 4); // handled or skipped
        assertThat(handled).containsExactly(0, 1, 2, 3);
        assertThat(c.skippedEvents()).isEqualTo(1);
        ring.complete();
    }

    @Test
    void anOperatorErrorHookThrowingAJvmFatalErrorFailsTheActorInsteadOfRetryingTheMessage() {
        // a recursive hook overflows its stack: the StackOverflowError must fail the actor as one thrown by the
        // behaviour itself does, whatever the policy (it escaped the policy and the message was retried in a
        // hot loop, tens of thousands of times a second, with no terminal signal)
        Hooks.onOperatorError("actor-control-test", (t, v) -> {
            throw new StackOverflowError("expected test failure: the hook overflows");
        });
        AtomicInteger calls = new AtomicInteger();
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler).errorPolicy(ErrorPolicy.skip())
                .behaviour((m, ctx) -> {
                    if (m == 1) {
                        calls.incrementAndGet();
                        throw new IllegalArgumentException("expected test failure: the behaviour fails");
                    }
                    ctx.emit(m);
                    return true;
                }).build();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Flux.from(a).subscribe(v -> { }, error::set);
        a.tell(1);
        a.tell(2);
        await().until(() -> error.get() != null);
        assertThat(error.get()).isInstanceOf(StackOverflowError.class);
        assertThat(calls).as("behaviour calls for the failed message").hasValue(1);
    }

    @Test
    void anOperatorErrorHookThrowingAJvmFatalErrorFailsTheRingInsteadOfRetryingTheEvent() {
        Hooks.onOperatorError("actor-control-test", (t, v) -> {
            throw new StackOverflowError("expected test failure: the hook overflows");
        });
        io.reactoractor.ring.RingBuffer<Integer> ring = io.reactoractor.ring.RingBuffer.<Integer>builder(scheduler)
                .size(8).errorPolicy(io.reactoractor.ring.RingErrorPolicy.SKIP).build();
        AtomicInteger calls = new AtomicInteger();
        io.reactoractor.ring.RingConsumer<Integer, Integer> c = ring.publishedConsumer("c", (e, seq, eob) -> {
            if (e == 1) {
                calls.incrementAndGet();
                throw new IllegalArgumentException("expected test failure: the handler fails");
            }
            return e;
        });
        ring.handleEventsWith(c);
        ring.start();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Flux.from(c).subscribe(v -> { }, error::set);
        assertThat(ring.tryPublish(1)).isTrue();
        ring.tryPublish(2); // refused if the ring already failed on 1
        await().until(() -> error.get() != null);
        assertThat(error.get()).isInstanceOf(StackOverflowError.class);
        assertThat(calls).as("handler calls for the failed event").hasValue(1);
    }

    @Test
    void delaysTooLongForNanosecondsSaturateInsteadOfLeavingTheActorSuspendedWithNoTimer() {
        // Duration.toNanos() overflows beyond 292 years: resumeAfter threw after suspending the actor, which then
        // stayed suspended with no timer (a behaviour catching the exception could not undo it)
        AtomicReference<reactor.core.Disposable> timer = new AtomicReference<>();
        AtomicReference<reactor.core.Disposable> task = new AtomicReference<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler)
                .behaviour((m, ctx) -> {
                    if (m == 1) {
                        try {
                            task.set(ctx.schedule(Duration.ofSeconds(Long.MAX_VALUE), () -> ctx.emit(-1)));
                            timer.set(ctx.resumeAfter(Duration.ofSeconds(Long.MAX_VALUE)));
                        } catch (RuntimeException e) {
                            thrown.set(e);
                        }
                    }
                    ctx.emit(m);
                    return true;
                }).build();
        Requesting<Integer> sub = new Requesting<>(Long.MAX_VALUE);
        a.subscribe(sub);
        a.tell(1);
        a.tell(2);
        await().until(() -> timer.get() != null || thrown.get() != null);
        assertThat(thrown.get()).isNull();
        assertThat(a.isSuspended()).as("held by the (practically endless) timer").isTrue();
        assertThat(sub.values).containsExactly(1);
        timer.get().dispose(); // the suspension is then the caller's, lifted by resume()
        assertThat(a.resume()).isTrue();
        await().until(() -> sub.values.size() == 2);
        assertThat(sub.values).containsExactly(1, 2);
        assertThat(task.get().isDisposed()).as("the far task waits").isFalse();
        task.get().dispose();
    }
}
