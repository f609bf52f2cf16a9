package io.reactoractor.actor;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * Faults around the actor's own signals: a downstream {@code onNext} that throws (rule 2.13: the subscription
 * counts as cancelled, the error is not the behaviour's), a second failure while the first one is pending (it
 * goes to {@code Hooks.onErrorDropped}), and one thread's {@code send} then {@code tell} (its order is kept
 * also when the send had to wait for a credit).
 */
class ActorSubscriberFaultsTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("subscriber-faults").threads(2).build();
    private final List<Throwable> handled = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() {
        Schedulers.resetOnHandleError();
        Hooks.resetOnErrorDropped();
        ActorTestSupport.disposeBounded(scheduler);
    }

    /** A raw subscriber (no Reactor wrapper) that records its signals, requests {@code initial} and throws on {@code bad}. */
    static final class ThrowingSubscriber implements CoreSubscriber<Integer> {
        final List<String> signals = new CopyOnWriteArrayList<>();
        final List<Object> discarded = new CopyOnWriteArrayList<>();
        final long initial;
        final int bad;
        volatile Subscription s;

        ThrowingSubscriber(long initial, int bad) {
            this.initial = initial;
            this.bad = bad;
        }

        @Override
        public Context currentContext() {
            return Operators.enableOnDiscard(Context.empty(), discarded::add);
        }

        @Override
        public void onSubscribe(Subscription s) {
            this.s = s;
            signals.add("onSubscribe");
            s.request(initial);
        }

        @Override
        public void onNext(Integer t) {
            signals.add("onNext(" + t + ")");
            if (t == bad) {
                throw new IllegalStateException("subscriber bug on " + t);
            }
        }

        @Override
        public void onError(Throwable t) {
            signals.add("onError(" + t.getMessage() + ")");
        }

        @Override
        public void onComplete() {
            signals.add("onComplete");
        }
    }

    static List<ErrorPolicy> policies() {
        return List.of(ErrorPolicy.stop(), ErrorPolicy.skip(), ErrorPolicy.retry(2, Duration.ofMillis(10)));
    }

    /**
     * Before: under skip the stream went on to onComplete and the error vanished; under stop the subscriber got
     * its own exception as onError; under retry the same element was delivered three times. Each policy saw an
     * error that was the subscriber's.
     */
    @ParameterizedTest
    @MethodSource("policies")
    void aDownstreamOnNextThatThrowsCancelsTheSubscriptionWhateverThePolicy(ErrorPolicy policy) {
        Schedulers.onHandleError((t, e) -> handled.add(e));
        AtomicInteger calls = new AtomicInteger();
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        Actor<Integer, Integer> actor = Actor.<Integer, Integer>builder(scheduler)
                .capacity(16)
                .errorPolicy(policy)
                .behaviour((m, ctx) -> {
                    calls.incrementAndGet();
                    ctx.emit(m);
                    return true;
                })
                .build();
        Flux.range(1, 100).doOnCancel(() -> upstreamCancelled.set(true)).subscribe(actor); // outlives the capacity of 16
        ThrowingSubscriber sub = new ThrowingSubscriber(Long.MAX_VALUE, 2);
        actor.subscribe(sub);

        await(actor::isTerminated, "the actor stops");
        await(() -> handled.size() == 1, "the error reported once");
        assertThat(sub.signals).containsExactly("onSubscribe", "onNext(1)", "onNext(2)");
        assertThat(handled.get(0)).hasMessage("subscriber bug on 2");
        assertThat(upstreamCancelled).isTrue();
        assertThat(calls.get()).as("the behaviour is not called again, nor for the messages after it").isEqualTo(2);
        assertThat(sub.discarded).as("the element the subscriber got is not also discarded").doesNotContain(1, 2);
        assertThat(actor.skippedMessages()).isZero();
        assertThat(actor.scan(reactor.core.Scannable.Attr.CANCELLED)).isEqualTo(true);
    }

    /** Before: the throw escaped the turn from the out buffer's flush, was reported, and the actor went on signalling. */
    @Test
    void aThrowFromABufferedResultsOnNextCancelsTooAndLaterResultsAreDiscarded() {
        Schedulers.onHandleError((t, e) -> handled.add(e));
        Actor<Integer, Integer> actor = Actor.<Integer, Integer>builder(scheduler)
                .capacity(16)
                .behaviour((m, ctx) -> {
                    ctx.emit(m * 10);
                    ctx.emit(m * 10 + 1); // beyond a demand of 1: buffered, flushed by the next request
                    return true;
                })
                .build();
        ThrowingSubscriber sub = new ThrowingSubscriber(1, 11);
        actor.subscribe(sub);
        assertThat(actor.tell(1)).isTrue();
        assertThat(actor.tell(2)).isTrue();
        await(() -> sub.signals.size() == 2, "the first result");
        sub.s.request(1); // flushes 11, which throws
        await(actor::isTerminated, "the actor stops");
        sub.s.request(10); // a cancelled subscription: a no-op
        await(() -> handled.size() == 1, "the error reported once");
        assertThat(sub.signals).containsExactly("onSubscribe", "onNext(10)", "onNext(11)");
        assertThat(sub.discarded).as("the message never processed").contains(2).doesNotContain(10, 11);
    }

    /** Before: the second error was lost without trace (Reactor's merge drops its later errors to the hook). */
    @Test
    void aSecondUpstreamErrorWhileTheFirstIsPendingGoesToOnErrorDropped() {
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        Hooks.onErrorDropped(dropped::add);
        for (boolean subscribedFirst : new boolean[] {false, true}) {
            dropped.clear();
            Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
            CoreSubscriber<Integer> p1 = a.newSubscriber();
            CoreSubscriber<Integer> p2 = a.newSubscriber();
            p1.onSubscribe(Operators.emptySubscription());
            p2.onSubscribe(Operators.emptySubscription());
            ActorTestSupport.TerminalRecorder<Integer> down = new ActorTestSupport.TerminalRecorder<>(s -> s.request(1));
            if (subscribedFirst) {
                a.subscribe(down);
            }
            p1.onError(new IllegalStateException("first"));
            p2.onError(new IllegalStateException("second"));
            if (!subscribedFirst) {
                a.subscribe(down); // the first error waited for a subscriber
            }
            assertThat(down.error).succeedsWithin(Duration.ofSeconds(10)).extracting(Throwable::getMessage)
                    .isEqualTo("first");
            assertThat(dropped).extracting(Throwable::getMessage).as("subscribed first: " + subscribedFirst)
                    .containsExactly("second");
        }
    }

    /**
     * Before: the actor could enqueue a waiting send's message after the sender's next tell (a tell took a
     * credit a turn had just freed, or the send was admitted on the actor's thread and enqueued after the
     * sender went on): 2-4 of 10,000 pairs reordered with upstreams attaching and completing beside.
     */
    @Test
    void oneThreadsSendThenTellKeepTheirOrderAlsoWhenTheSendWaits() throws InterruptedException {
        int pairs = 10_000;
        List<String> violations = new CopyOnWriteArrayList<>();
        AtomicInteger last = new AtomicInteger(); // written by the actor's turns, read by this thread
        AtomicInteger waited = new AtomicInteger();
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler)
                .capacity(8)
                .behaviour((m, ctx) -> {
                    if (m > 0) {
                        if (m != last.get() + 1 && violations.size() < 5) {
                            violations.add(last.get() + " then " + m);
                        }
                        last.set(Math.max(last.get(), m));
                    }
                    return true;
                })
                .build();
        a.subscribe(new ActorTestSupport.TerminalRecorder<>(s -> s.request(Long.MAX_VALUE)));
        CoreSubscriber<Integer> keepOpen = a.newSubscriber(); // never completes: the actor stays open
        keepOpen.onSubscribe(Operators.emptySubscription());
        AtomicBoolean stop = new AtomicBoolean();
        Thread ports = new Thread(() -> {
            while (!stop.get()) {
                Flux.just(-1).subscribe(a.newSubscriber()); // attaches, takes credits, sends one, completes
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        ports.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        Thread sender = new Thread(() -> {
            for (int i = 1; i < 2 * pairs && System.nanoTime() < deadline; i += 2) {
                AtomicBoolean done = new AtomicBoolean();
                a.send(i).subscribe(null, null, () -> done.set(true));
                if (!done.get()) {
                    waited.incrementAndGet();
                }
                while (!a.tell(i + 1) && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
            }
        });
        sender.start();
        sender.join(30_000);
        stop.set(true);
        ports.join(10_000);
        await(() -> last.get() >= 2 * pairs || violations.size() > 0, "every message processed");
        a.dispose();
        assertThat(violations).as("out of order (" + waited.get() + " sends waited)").isEmpty();
        assertThat(last.get()).isEqualTo(2 * pairs);
    }

    /**
     * Waiting sends are served in their order, before later tells. Here no credit is free while they wait, so the
     * tell would be refused also without the rule that refuses a tell while a send waits (that rule, with a credit
     * just freed, is what {@link #oneThreadsSendThenTellKeepTheirOrderAlsoWhenTheSendWaits} catches).
     */
    @Test
    void waitingSendsAreServedInTheirOrderAndATellWhileOneWaitsIsRefused() {
        List<Integer> seen = new ArrayList<>();
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler)
                .capacity(1)
                .behaviour((m, ctx) -> {
                    synchronized (seen) {
                        seen.add(m);
                    }
                    return true;
                })
                .build();
        // no subscriber yet: nothing is processed, so the one credit stays taken
        assertThat(a.tell(1)).isTrue();
        List<String> outcomes = new CopyOnWriteArrayList<>();
        a.send(2).subscribe(null, e -> outcomes.add("error " + e), () -> outcomes.add("sent 2"));
        assertThat(a.tell(3)).as("a tell while a send waits").isFalse();
        a.send(4).subscribe(null, e -> outcomes.add("error " + e), () -> outcomes.add("sent 4"));
        assertThat(outcomes).isEmpty();
        a.subscribe(new ActorTestSupport.TerminalRecorder<>(s -> s.request(Long.MAX_VALUE)));
        await(() -> outcomes.size() == 2, "both sends accepted");
        await(() -> {
            synchronized (seen) {
                return seen.size() == 3;
            }
        }, "three messages processed");
        assertThat(outcomes).containsExactly("sent 2", "sent 4");
        synchronized (seen) {
            assertThat(seen).containsExactly(1, 2, 4);
        }
        a.dispose();
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never: " + what);
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
