package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Lost wake-up: an append notification that arrives after the {@code (subject, group)} actor already served that append
 * (the appending thread was descheduled between writing the end offset and running the listeners)
 * flips waitingForData to false and calls resume() on an actor with nothing to do: the actor goes idle,
 * not suspended and not waiting for data, and every later append finds waitingForData == false and does
 * nothing. Waiting pulls then stay unanswered until a command or the timer happens to signal the actor.
 */
class StaleAppendWakeupTest {

    /** An in-memory store whose append notifications the test can hold back and release. */
    static final class DelayedNotificationStore extends ForwardingMessageStore {
        final List<AppendListener> listeners = new CopyOnWriteArrayList<>();
        final List<Runnable> held = new ArrayList<>();
        volatile boolean hold;

        @Override
        public long append(String subject, byte[] payload) {
            long offset = inner.append(subject, payload); // end offset visible now
            Runnable notify = () -> listeners.forEach(l -> l.appended(subject, offset + 1));
            if (hold) {
                held.add(notify); // as if the appending thread were descheduled here
            } else {
                notify.run();
            }
            return offset;
        }

        void releaseHeld() {
            held.forEach(Runnable::run);
            held.clear();
        }

        @Override public Disposable addAppendListener(AppendListener l) {
            listeners.add(l);
            return () -> listeners.remove(l);
        }
    }

    @Test
    void aStaleAppendNotificationMustNotSwallowTheNextOne() throws Exception {
        ActorScheduler scheduler = ActorScheduler.builder().name("stale-wakeup").threads(2).build();
        DelayedNotificationStore store = new DelayedNotificationStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            // two long polls wait: the actor suspends, waitingForData = true
            var first = consumer.pull("s", "g", 1, Duration.ofSeconds(30)).toFuture();
            var second = consumer.pull("s", "g", 1, Duration.ofSeconds(30)).toFuture();
            awaitWaiting(consumer, 2);

            // m0 is appended, its notification is delayed; a command wakes the actor, which serves m0
            store.hold = true;
            store.append("s", new byte[] {0});
            store.hold = false;
            consumer.ack("s", "g", List.of()).block(Duration.ofSeconds(5)); // a command: post() resumes "g"
            assertEquals(0, first.get(5, java.util.concurrent.TimeUnit.SECONDS).messages().get(0).offset());
            awaitWaiting(consumer, 1); // second waits; the actor suspends again, waitingForData = true

            // the stale notification of m0 arrives now: flag true -> false, resume() finds nothing to do
            store.releaseHeld();
            // m1: its notification finds waitingForData == false and does nothing
            store.append("s", new byte[] {1});

            PullResult r = Mono.fromFuture(second).block(Duration.ofSeconds(5)); // was lost before the fix
            assertEquals(1, r.messages().get(0).offset());
        } finally {
            consumer.dispose();
            scheduler.dispose();
        }
    }

    private static void awaitWaiting(PullConsumer consumer, int n) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!(consumer.stats("s", "g").waitingPulls() == n && consumer.stats("s", "g").suspended())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never " + n + " waiting and suspended: " + consumer.stats("s", "g"));
            }
            Thread.sleep(1);
        }
    }
}
