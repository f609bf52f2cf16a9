package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.Test;

/**
 * A pull-once queued behind long polls while messages remain (the quota ended the turn that was
 * handing them out) must still be answered {@code EMPTY} once the long polls took the rest; it once
 * counted its own creation time as a passed deadline, kept the actor "servable" forever and was never
 * answered.
 */
class PullOnceBehindLongPollsTest {

    @Test
    void pullOnceBehindLongPollsIsAnsweredWhenTheDataRunsOut() throws Exception {
        ActorScheduler scheduler = ActorScheduler.builder().name("pull-once").threads(2).build();
        StaleAppendWakeupTest.DelayedNotificationStore store = new StaleAppendWakeupTest.DelayedNotificationStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            int polls = 200;
            AtomicInteger answered = new AtomicInteger();
            for (int i = 0; i < polls; i++) {
                consumer.pull("s", "g", 1, Duration.ofSeconds(60)).subscribe(r -> {
                    long end = System.nanoTime() + 50_000; // 50 us downstream: ~100 answers per 5 ms turn
                    while (System.nanoTime() < end) {
                        Thread.onSpinWait();
                    }
                    answered.incrementAndGet();
                });
            }
            PullConsumerTest.await(() -> consumer.stats("s", "g").waitingPulls() == polls, "long polls waiting");
            store.hold = true; // the messages are there, but nobody is told
            for (int i = 0; i < 150; i++) {
                consumer.append("s", new byte[] {1});
            }
            // the pull-once wakes the actor, behind 200 long polls and 150 messages
            PullResult once = consumer.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
            assertEquals(PullResult.Status.EMPTY, once.status());
            PullConsumerTest.await(() -> answered.get() == 150, "150 long polls answered");
            PullConsumerTest.await(() -> consumer.stats("s", "g").waitingPulls() == polls - 150,
                    "50 long polls still waiting (the count is updated at the end of a turn)");
        } finally {
            consumer.dispose();
            scheduler.dispose();
        }
    }
}
