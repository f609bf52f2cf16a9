package io.reactoractor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.reactoractor.actor.Actor;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.pull.PullResult;
import io.reactoractor.ring.RingBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Mono;

/**
 * Rule 3.9 on every {@code Mono} of the public API, for a Reactive Streams subscriber (the TCK's, another
 * library's): {@code request(n <= 0)} is answered with {@code onError(IllegalArgumentException)}, and
 * nothing the {@code Mono} would have carried is lost (a pull's messages come back at once). Reactor's
 * {@code Mono.subscribe(Subscriber)} wraps such a subscriber in its {@code StrictSubscriber}, which
 * enforces the rule and cancels the source; a {@code CoreSubscriber} (Reactor's own operators) is trusted
 * and a bad request is only logged, as everywhere in Reactor. This pins that our {@code Mono}s keep going
 * through that path (no custom {@code Mono} subclass that would bypass it) and that the cancel releases
 * what it must.
 */
class ApiMonoRequestValidationTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("mono-3-9").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    /** Subscribes, requests {@code n} at once, and returns the terminal signal (an error, or "complete"). */
    private static Object badRequest(Mono<?> mono, long n) throws Exception {
        CompletableFuture<Object> terminal = new CompletableFuture<>();
        mono.subscribe(new Subscriber<Object>() {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(n);
            }

            @Override
            public void onNext(Object o) {
                terminal.complete("value " + o);
            }

            @Override
            public void onError(Throwable t) {
                terminal.complete(t);
            }

            @Override
            public void onComplete() {
                terminal.complete("complete");
            }
        });
        return terminal.get(5, TimeUnit.SECONDS);
    }

    private static void assertRefused(Supplier<Mono<?>> mono) throws Exception {
        for (long n : new long[] {0, -1, Long.MIN_VALUE}) {
            Object signal = badRequest(mono.get(), n);
            assertInstanceOf(IllegalArgumentException.class, signal, "request(" + n + ")");
            assertTrue(((Throwable) signal).getMessage().contains("3.9"), ((Throwable) signal).getMessage());
        }
    }

    @Test
    void pullConsumerMonos() throws Exception {
        PullConsumer consumer = PullConsumer.builder(scheduler).build();
        try {
            long offset = consumer.append("s", new byte[] {1});
            String epoch = consumer.pullOnce("s", "other", 1).block(Duration.ofSeconds(5)).epoch();
            assertRefused(() -> consumer.appendAsync("s", new byte[] {2}));
            assertRefused(() -> consumer.pull("s", "g", 1, Duration.ofSeconds(1)));
            assertRefused(() -> consumer.pullOnce("s", "g", 1));
            assertRefused(() -> consumer.ack("s", "g", List.of(offset)));
            assertRefused(() -> consumer.ack("s", "g", epoch, List.of(offset)));
            assertRefused(() -> consumer.nack("s", "g", offset));
            assertRefused(() -> consumer.nack("s", "g", epoch, offset));
        } finally {
            consumer.dispose();
        }
    }

    @Test
    void aPullRefusedForABadRequestLosesNoMessage() throws Exception {
        // the default ack timeout is 30 s: a message handed to the refused pull and not released would
        // not come back within this test's 5 s
        PullConsumer consumer = PullConsumer.builder(scheduler).build();
        try {
            consumer.append("s", new byte[] {1});
            CompletableFuture<Subscription> sub = new CompletableFuture<>();
            CompletableFuture<Object> terminal = new CompletableFuture<>();
            consumer.pull("s", "g", 1, Duration.ofSeconds(1)).subscribe(new Subscriber<PullResult>() {
                @Override
                public void onSubscribe(Subscription s) {
                    sub.complete(s);
                }

                @Override
                public void onNext(PullResult r) {
                    terminal.complete(r);
                }

                @Override
                public void onError(Throwable t) {
                    terminal.complete(t);
                }

                @Override
                public void onComplete() {
                }
            });
            // the answer is on its way or already held by the Mono for want of demand: either way the
            // bad request must give it back
            Thread.sleep(100);
            sub.get(5, TimeUnit.SECONDS).request(0);
            assertInstanceOf(IllegalArgumentException.class, terminal.get(5, TimeUnit.SECONDS));

            PullResult next = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertEquals(1, next.messages().size(), "the message came back at once, not after the ack timeout");
            assertEquals(0, next.messages().get(0).offset());
        } finally {
            consumer.dispose();
        }
    }

    @Test
    void actorSend() throws Exception {
        Actor<Integer, Integer> actor = Actor.identity(scheduler, 4);
        assertRefused(() -> actor.send(1));
    }

    @Test
    void ringMonos() throws Exception {
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(4).build();
        ring.publishedConsumer("c", (e, s, eob) -> e);
        ring.start();
        assertRefused(() -> ring.publish(1));
        assertRefused(ring::whenTerminated);
        ring.complete();
    }

    @Test
    void disposeGracefully() throws Exception {
        ActorGroup group = scheduler.group("g", 1);
        assertRefused(group::disposeGracefully);
        assertRefused(() -> scheduler.defaultGroup().disposeGracefully());
        assertRefused(scheduler::disposeGracefully);
        // refused or not, subscribing started the graceful shutdown, as documented
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
        assertTrue(scheduler.isDisposed());
    }
}
