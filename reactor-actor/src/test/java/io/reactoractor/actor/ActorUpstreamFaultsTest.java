package io.reactoractor.actor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * An upstream whose {@code cancel()} throws (rule 3.15 broken upstream): the actor still ends completely. Its
 * other upstreams are cancelled, waiting sends fail, the mailbox goes to the discard hook, the subscriber gets
 * its terminal signal and the actor leaves its group, whichever way it ends; the exception goes to
 * {@code Hooks.onErrorDropped} (it cannot be signalled: the actor is ending) and does not escape
 * {@code dispose()}.
 */
class ActorUpstreamFaultsTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("upstream-faults").threads(2).build();
    private final List<Throwable> dropped = new CopyOnWriteArrayList<>();
    private final List<Throwable> handled = new CopyOnWriteArrayList<>();

    @BeforeEach
    void hooks() {
        Hooks.onErrorDropped(dropped::add);
        Schedulers.onHandleError((t, e) -> handled.add(e));
    }

    @AfterEach
    void tearDown() {
        Hooks.resetOnErrorDropped();
        Schedulers.resetOnHandleError();
        ActorTestSupport.disposeBounded(scheduler);
    }

    /** An upstream that records requests and throws from {@code cancel()}. */
    static final class ThrowingCancel implements Subscription {
        volatile long requested;

        @Override
        public void request(long n) {
            requested += n;
        }

        @Override
        public void cancel() {
            throw new IllegalStateException("cancel boom");
        }
    }

    /** An upstream that records its cancellation. */
    static final class Recording implements Subscription {
        final AtomicBoolean cancelled = new AtomicBoolean();

        @Override
        public void request(long n) {
        }

        @Override
        public void cancel() {
            cancelled.set(true);
        }
    }

    /** A subscriber recording its signals and discards; requests nothing unless told to. */
    static final class Downstream implements CoreSubscriber<Integer> {
        final List<String> signals = new CopyOnWriteArrayList<>();
        final List<Object> discarded = new CopyOnWriteArrayList<>();
        volatile Subscription s;

        @Override
        public Context currentContext() {
            return Operators.enableOnDiscard(Context.empty(), discarded::add);
        }

        @Override
        public void onSubscribe(Subscription s) {
            this.s = s;
        }

        @Override
        public void onNext(Integer t) {
            signals.add("onNext(" + t + ")");
        }

        @Override
        public void onError(Throwable t) {
            signals.add("onError(" + t.getClass().getSimpleName() + ")");
        }

        @Override
        public void onComplete() {
            signals.add("onComplete");
        }
    }

    private static void await(BooleanSupplier condition, String what) {
        Awaitility.await(what).atMost(Duration.ofSeconds(30)).until(condition::getAsBoolean);
    }

    @Test
    void disposeEndsTheActorCompletelyAndDoesNotThrowWhenAnUpstreamsCancelThrows() {
        disposeEndsTheActorCompletelyAlthoughAnUpstreamsCancelThrows("faulty-cancel-dispose");
    }

    @Test
    void disposeEndsTheActorCompletelyWhenTheOnErrorDroppedHookThrowsToo() {
        // the hook that should receive the cancel's failure throws as well: the termination still finishes
        Hooks.resetOnErrorDropped(); // Hooks.onErrorDropped composes: this one replaces the recording one
        Hooks.onErrorDropped(t -> {
            dropped.add(t);
            throw new IllegalStateException("hook boom");
        });
        disposeEndsTheActorCompletelyAlthoughAnUpstreamsCancelThrows("faulty-cancel-throwing-hook");
    }

    /** An actor with a throwing-cancel upstream and a sane one: {@code dispose()} returns normally and it ends completely. */
    private void disposeEndsTheActorCompletelyAlthoughAnUpstreamsCancelThrows(String groupName) {
        ActorGroup group = scheduler.group(groupName, 1);
        Actor<Integer, Integer> actor = Actor.identity(group, 8);
        ThrowingCancel bad = new ThrowingCancel();
        Recording good = new Recording();
        assertThat(actor.tell(1)).isTrue();
        assertThat(actor.tell(2)).isTrue();
        actor.onSubscribe(bad);
        actor.newSubscriber().onSubscribe(good);
        Downstream d = new Downstream();
        actor.subscribe(d);
        await(() -> d.s != null, "onSubscribe");

        assertThatCode(actor::dispose).doesNotThrowAnyException();

        await(actor::isTerminated, "the actor to terminate");
        await(() -> group.actors() == 0, "the actor to leave its group");
        await(good.cancelled::get, "the other upstream to be cancelled too");
        await(() -> d.discarded.size() == 2, "the mailbox's messages to be discarded");
        assertThat(d.discarded).containsExactly(1, 2);
        await(() -> !dropped.isEmpty(), "the cancel's failure to be reported");
        assertThat(dropped).anySatisfy(t -> assertThat(t).hasMessage("cancel boom"));
        assertThat(handled).as("nothing left to a carrier's error handler").isEmpty();
    }

    @Test
    void aSecondSubscriptionWhoseCancelThrowsIsRefusedAndOnSubscribeReturnsNormally() {
        ActorGroup group = scheduler.group("faulty-cancel-second", 1);
        Actor<Integer, Integer> actor = Actor.identity(group, 8);
        ThrowingCancel first = new ThrowingCancel();
        actor.onSubscribe(first);
        ThrowingCancel second = new ThrowingCancel();

        // rule 2.5: the second subscription is cancelled; its throwing cancel must not escape onSubscribe (2.13)
        assertThatCode(() -> actor.onSubscribe(second)).doesNotThrowAnyException();

        assertThat(dropped).singleElement().satisfies(t -> assertThat(t).hasMessage("cancel boom"));
        assertThat(second.requested).as("nothing asked of the refused subscription").isZero();
        Downstream d = new Downstream();
        actor.subscribe(d);
        await(() -> d.s != null, "onSubscribe");
        d.s.request(1);
        actor.onNext(7); // the first upstream still feeds the actor
        await(() -> d.signals.contains("onNext(7)"), "the first upstream's element");
        assertThat(actor.isTerminated()).isFalse();
        actor.dispose();
    }

    @Test
    void aCancellingDownstreamEndsTheActorCompletelyWhenAnUpstreamsCancelThrows() {
        ActorGroup group = scheduler.group("faulty-cancel-downstream", 1);
        Actor<Integer, Integer> actor = Actor.identity(group, 8);
        ThrowingCancel bad = new ThrowingCancel();
        Recording good = new Recording();
        actor.onSubscribe(bad);
        actor.newSubscriber().onSubscribe(good);
        Downstream d = new Downstream();
        actor.subscribe(d);
        await(() -> d.s != null, "onSubscribe");

        d.s.cancel();

        await(actor::isTerminated, "the actor to terminate");
        await(() -> group.actors() == 0, "the actor to leave its group");
        await(good.cancelled::get, "the other upstream to be cancelled");
        await(() -> !dropped.isEmpty(), "the cancel's failure to be reported");
        assertThat(dropped).anySatisfy(t -> assertThat(t).hasMessage("cancel boom"));
        assertThat(handled).as("no turn failed").isEmpty();
    }

    @Test
    void completeEndsTheActorAndSignalsTheSubscriberWhenAnUpstreamsCancelThrows() {
        ActorGroup group = scheduler.group("faulty-cancel-complete", 1);
        Actor<Integer, Integer> actor = Actor.identity(group, 8);
        actor.onSubscribe(new ThrowingCancel());
        Downstream d = new Downstream();
        actor.subscribe(d);
        d.s.request(10);

        actor.complete();

        await(() -> d.signals.contains("onComplete"), "onComplete");
        assertThat(d.signals).containsExactly("onComplete");
        await(() -> group.actors() == 0, "the actor to leave its group");
        assertThat(handled).as("no turn failed").isEmpty();
        // the group, with no actor left, can close at once
        assertThat(group.disposeGracefully().timeout(Duration.ofSeconds(10)).onErrorResume(e -> null)
                .then().block(Duration.ofSeconds(15))).isNull();
        assertThat(group.isDisposed()).isTrue();
    }

    /** An upstream that throws from its {@code throwOn}-th {@code request} call, records its cancellation. */
    static final class ThrowingRequest implements Subscription {
        final AtomicBoolean cancelled = new AtomicBoolean();
        final int throwOn;
        int calls;
        volatile CoreSubscriber<? super Integer> subscriber;
        int next;

        ThrowingRequest(int throwOn) {
            this.throwOn = throwOn;
        }

        @Override
        public void request(long n) {
            if (++calls == throwOn) {
                throw new IllegalStateException("request boom");
            }
            for (long i = 0; i < n && !cancelled.get(); i++) {
                subscriber.onNext(next++);
            }
        }

        @Override
        public void cancel() {
            cancelled.set(true);
        }
    }

    @Test
    void anUpstreamWhoseFirstRequestThrowsFailsTheActorAndOnSubscribeReturnsNormally() {
        Actor<Integer, Integer> actor = Actor.identity(scheduler, 8);
        Downstream d = new Downstream();
        actor.subscribe(d);
        ThrowingRequest up = new ThrowingRequest(1);
        up.subscriber = actor;

        assertThatCode(() -> actor.onSubscribe(up)).as("rule 2.13").doesNotThrowAnyException();

        await(() -> d.signals.contains("onError(IllegalStateException)"), "the request's exception downstream");
        assertThat(up.cancelled).as("the broken upstream is cancelled").isTrue();
        await(actor::isTerminated, "the actor to terminate");
        assertThat(handled).as("no turn failed").isEmpty();
    }

    @Test
    void anUpstreamWhoseLaterRequestThrowsOnACarrierFailsTheActorWithThatError() {
        Actor<Integer, Integer> actor = Actor.identity(scheduler, 8);
        Downstream d = new Downstream();
        ThrowingRequest up = new ThrowingRequest(2); // the first request (8) is served, the replenishment throws
        up.subscriber = actor;
        actor.onSubscribe(up);
        actor.subscribe(d);

        d.s.request(100); // the actor hands the 8 on and frees their places: its request for more throws

        await(() -> d.signals.contains("onError(IllegalStateException)"), "the request's exception downstream");
        // an upstream error ends the actor without draining its mailbox (Actor's class doc): what it had not
        // handed on yet is discarded; nothing of the 8 is lost
        assertThat(d.signals).endsWith("onError(IllegalStateException)");
        await(() -> d.signals.size() - 1 + d.discarded.size() == 8, "the 8 delivered or discarded");
        assertThat(up.cancelled).isTrue();
        assertThat(handled).as("no turn failed").isEmpty();
    }

    @Test
    void aFairPublishOnEndsCompletelyWhenItsUpstreamsCancelThrows() {
        ActorGroup group = scheduler.group("faulty-cancel-publish-on", 1);
        ThrowingCancel up = new ThrowingCancel();
        Downstream d = new Downstream();
        reactor.core.publisher.Flux.<Integer>from(s -> s.onSubscribe(up))
                .transform(ActorOperators.publishOn(group))
                .subscribe(d);
        await(() -> d.s != null, "onSubscribe");
        await(() -> group.actors() == 1, "the publishOn's actor");

        assertThatCode(d.s::cancel).as("rule 3.15 for the publishOn's own subscription").doesNotThrowAnyException();

        await(() -> group.actors() == 0, "the publishOn's actor to leave its group");
        assertThat(dropped).singleElement().satisfies(t -> assertThat(t).hasMessage("cancel boom"));
        assertThat(handled).as("no turn failed").isEmpty();
    }

    @Test
    void aFairPublishOnWhoseUpstreamsReplenishingRequestThrowsFailsWithThatError() {
        ThrowingRequest up = new ThrowingRequest(2); // the first request (the prefetch) is served
        Downstream d = new Downstream();
        reactor.core.publisher.Flux.<Integer>from(s -> {
            up.subscriber = (CoreSubscriber<? super Integer>) s;
            s.onSubscribe(up);
        }).transform(ActorOperators.publishOn(scheduler, 4)).subscribe(d);
        await(() -> d.s != null, "onSubscribe");

        d.s.request(100); // after 3 elements (the prefetch's replenish limit) it asks for more: that throws

        await(() -> d.signals.contains("onError(IllegalStateException)"), "the request's exception downstream");
        assertThat(d.signals).endsWith("onError(IllegalStateException)");
        assertThat(up.cancelled).isTrue();
        assertThat(handled).as("no turn failed").isEmpty();
    }
}
