package io.reactoractor.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.reactoractor.ActorScheduler;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Hooks;
import reactor.core.scheduler.Schedulers;

/**
 * A ring's upstream that breaks rule 3.15 ({@code cancel()} throws) or 3.16 ({@code request(n)} throws): the
 * ring still closes and its consumers still end. A throwing cancel goes to {@code Hooks.onErrorDropped} (the
 * ring is closing: nobody to signal it to) and does not escape {@code complete()}; a throwing request fails
 * the ring with that exception, after the events the upstream emitted before it, and {@code onSubscribe}
 * returns normally (rule 2.13).
 */
class RingUpstreamFaultsTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-upstream-faults").threads(2).build();
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
        scheduler.dispose();
    }

    /** Records what a consumer's subscriber sees; requests everything. */
    static final class Recorder implements Subscriber<Integer> {
        final List<String> signals = new CopyOnWriteArrayList<>();

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Integer t) {
            signals.add("onNext(" + t + ")");
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

    @Test
    void completeClosesTheRingAndDoesNotThrowWhenTheUpstreamsCancelThrows() {
        completeClosesTheRingAlthoughTheUpstreamsCancelThrows();
    }

    @Test
    void completeClosesTheRingWhenTheUpstreamsCancelAndTheOnErrorDroppedHookBothThrow() {
        Hooks.resetOnErrorDropped(); // Hooks.onErrorDropped composes: this one replaces the recording one
        Hooks.onErrorDropped(t -> {
            dropped.add(t);
            throw new IllegalStateException("hook boom");
        });
        completeClosesTheRingAlthoughTheUpstreamsCancelThrows();
    }

    /** A ring whose upstream throws from {@code cancel()}: {@code complete()} returns normally and the ring ends. */
    private void completeClosesTheRingAlthoughTheUpstreamsCancelThrows() {
        RingProcessor<Integer> p = RingProcessor.create(scheduler, 16);
        Recorder r = new Recorder();
        p.subscribe(r);
        p.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
            }

            @Override
            public void cancel() {
                throw new IllegalStateException("cancel boom");
            }
        });
        assertThat(p.ring().tryPublish(1)).isTrue();

        assertThatCode(() -> p.ring().complete()).doesNotThrowAnyException();

        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> r.signals.contains("onComplete"));
        assertThat(r.signals).containsExactly("onNext(1)", "onComplete");
        assertThat(p.ring().whenTerminated().block(Duration.ofSeconds(30))).isNull();
        assertThat(dropped).singleElement().satisfies(t -> assertThat(t).hasMessage("cancel boom"));
        assertThat(handled).isEmpty();
    }

    @Test
    void aSecondUpstreamWhoseCancelThrowsIsRefusedAndOnSubscribeReturnsNormally() {
        RingProcessor<Integer> p = RingProcessor.create(scheduler, 16);
        Recorder r = new Recorder();
        p.subscribe(r);
        p.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
            }

            @Override
            public void cancel() {
            }
        });
        AtomicBoolean asked = new AtomicBoolean();
        Subscription second = new Subscription() {
            @Override
            public void request(long n) {
                asked.set(true);
            }

            @Override
            public void cancel() {
                throw new IllegalStateException("cancel boom");
            }
        };

        // rule 2.5: the second upstream is cancelled; its throwing cancel must not escape onSubscribe (2.13)
        assertThatCode(() -> p.onSubscribe(second)).doesNotThrowAnyException();

        assertThat(dropped).singleElement().satisfies(t -> assertThat(t).hasMessage("cancel boom"));
        assertThat(asked).isFalse();
        p.onNext(1); // the first upstream still feeds the ring
        p.onComplete();
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> r.signals.contains("onComplete"));
        assertThat(r.signals).containsExactly("onNext(1)", "onComplete");
    }

    @Test
    void anUpstreamWhoseRequestThrowsFailsTheRingAfterWhatItEmittedAndOnSubscribeReturnsNormally() {
        RingProcessor<Integer> p = RingProcessor.create(scheduler, 16);
        Recorder r = new Recorder();
        p.subscribe(r);
        AtomicBoolean cancelled = new AtomicBoolean();
        Subscription up = new Subscription() {
            @Override
            public void request(long n) {
                p.onNext(1);
                p.onNext(2);
                throw new IllegalStateException("request boom");
            }

            @Override
            public void cancel() {
                cancelled.set(true);
            }
        };

        assertThatCode(() -> p.onSubscribe(up)).as("rule 2.13").doesNotThrowAnyException();

        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> r.signals.size() == 3);
        assertThat(r.signals).containsExactly("onNext(1)", "onNext(2)", "onError(request boom)");
        assertThat(cancelled).isTrue();
        assertThat(handled).isEmpty();
    }
}
