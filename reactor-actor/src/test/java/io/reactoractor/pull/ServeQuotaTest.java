package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.Test;

/**
 * Answering waiting pulls runs downstream code; each answer is a task of the {@code (subject, group)} actor's turn, so
 * 1,000 answers of 50 µs each are spread over several turns at the 5 ms quota instead of one 50 ms
 * task (which the scheduler would count as a quota overrun and report as a hog).
 */
class ServeQuotaTest {

    private static long groupTurns(ActorScheduler scheduler) {
        return scheduler.stats().groups().stream().filter(g -> g.name().equals("cg.g"))
                .mapToLong(io.reactoractor.SchedulerStats.GroupStats::turns).sum();
    }

    @Test
    void answeringManyWaitingPullsStaysWithinTheQuota() throws Exception {
        ActorScheduler scheduler = ActorScheduler.builder().name("serve-quota").threads(2).build();
        // notifications held back, so all 1,000 messages are there when the actor wakes: one serve() answers all
        StaleAppendWakeupTest.DelayedNotificationStore store = new StaleAppendWakeupTest.DelayedNotificationStore();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            int polls = 1_000;
            CountDownLatch answered = new CountDownLatch(polls);
            for (int i = 0; i < polls; i++) {
                consumer.pull("s", "g", 1, Duration.ofSeconds(60)).subscribe(r -> {
                    long end = System.nanoTime() + 50_000; // 50 us of downstream work per answer
                    while (System.nanoTime() < end) {
                        Thread.onSpinWait();
                    }
                    answered.countDown();
                });
            }
            while (consumer.stats("s", "g").waitingPulls() < polls) {
                Thread.sleep(5);
            }
            long turnsBefore = groupTurns(scheduler);
            store.hold = true;
            for (int i = 0; i < polls; i++) {
                consumer.append("s", new byte[] {1});
            }
            store.hold = false;
            store.releaseHeld();
            long t0 = System.nanoTime();
            assertTrue(answered.await(30, TimeUnit.SECONDS), () -> "unanswered " + answered.getCount()
                    + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + consumer.stats("s", "g"));
            // 1,000 x 50 us = 50 ms of answers at a 5 ms quota: ten turns or more (one turn before the fix)
            long turns = groupTurns(scheduler) - turnsBefore;
            assertTrue(turns >= 5, () -> "answers ran in " + turns + " turn(s): " + scheduler.stats());
        } finally {
            consumer.dispose();
            scheduler.dispose();
        }
    }
}
