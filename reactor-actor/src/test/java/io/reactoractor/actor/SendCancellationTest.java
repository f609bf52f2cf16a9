package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * A cancelled {@link Actor#send} withdraws its message: cancelled as it subscribes, or while it waits for a
 * credit, the message is never taken (a {@code send(m).timeout(d).retry()} used to deliver it twice).
 */
class SendCancellationTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("send-cancellation").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    private Actor<Integer, Integer> recording(List<Integer> processed) {
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler).capacity(2).behaviour((m, c) -> {
            processed.add(m);
            return true;
        }).build();
        Flux.from(a).subscribe();
        return a;
    }

    @Test
    void aSendCancelledAsItSubscribesSendsNothing() throws InterruptedException {
        List<Integer> processed = new CopyOnWriteArrayList<>();
        Actor<Integer, Integer> a = recording(processed);
        a.send(42).subscribe(new BaseSubscriber<Void>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                cancel(); // a timeout already fired, a disposed composite
            }
        });
        assertTrue(a.send(7).then().block(Duration.ofSeconds(10)) == null);
        long until = System.nanoTime() + 10_000_000_000L;
        while (processed.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(2);
        }
        Thread.sleep(50);
        assertEquals(List.of(7), processed, "only the send nobody cancelled");
    }

    @Test
    void aWaitingSendThatIsCancelledIsNeverTaken() throws InterruptedException {
        List<Integer> processed = new CopyOnWriteArrayList<>();
        Actor<Integer, Integer> a = recording(processed);
        a.suspend(); // nothing leaves the mailbox: no credit comes back
        assertTrue(a.tell(1));
        assertTrue(a.tell(2)); // the mailbox (2) is full
        Disposable waiting = a.send(3).subscribe();
        a.send(4).subscribe(); // waits behind it
        waiting.dispose(); // withdrawn while it waits
        a.resume();
        long until = System.nanoTime() + 10_000_000_000L;
        while (processed.size() < 3 && System.nanoTime() < until) {
            Thread.sleep(2);
        }
        Thread.sleep(50);
        assertEquals(List.of(1, 2, 4), processed);
        // the credit the withdrawn send did not use is free: the mailbox takes two more
        assertTrue(a.tell(5));
        assertTrue(a.tell(6));
    }
}
