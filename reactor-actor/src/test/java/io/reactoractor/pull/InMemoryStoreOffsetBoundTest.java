package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The in-memory store's bound on committed offsets ({@link InMemoryMessageStore}, "Bounded committed
 * offsets"): client-chosen group names cannot grow the store without limit. Offsets unused for the retention
 * make room; a full store of recently used offsets refuses a commit for a new pair and records nothing;
 * pairs that already have an offset keep committing. Time is a hand-driven clock: no test here sleeps.
 */
class InMemoryStoreOffsetBoundTest {

    private static final long HOUR = TimeUnit.HOURS.toNanos(1);

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);

    private InMemoryMessageStore store(int max) {
        return InMemoryMessageStore.builder().maxCommittedOffsets(max).offsetRetention(Duration.ofHours(1))
                .nanoClock(clock::get).build();
    }

    @Test
    void theBoundAndRetentionAreValidatedAndReported() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> InMemoryMessageStore.builder().maxCommittedOffsets(0));
        assertTrue(e.getMessage().contains("maxCommittedOffsets"), e.getMessage());
        for (Duration bad : new Duration[] {null, Duration.ZERO, Duration.ofSeconds(-1), Duration.ofDays(365 * 100)}) {
            e = assertThrows(IllegalArgumentException.class, () -> InMemoryMessageStore.builder().offsetRetention(bad));
            assertTrue(e.getMessage().contains("offsetRetention"), e.getMessage());
        }
        InMemoryMessageStore defaults = InMemoryMessageStore.create();
        assertEquals(InMemoryMessageStore.DEFAULT_MAX_COMMITTED_OFFSETS, defaults.maxCommittedOffsets());
        assertEquals(Duration.ofDays(7), defaults.offsetRetention());
        InMemoryMessageStore set = InMemoryMessageStore.builder().maxCommittedOffsets(9)
                .offsetRetention(Duration.ofMinutes(3)).build();
        assertEquals(9, set.maxCommittedOffsets());
        assertEquals(Duration.ofMinutes(3), set.offsetRetention());
        assertTrue(set.toString().contains("maxCommittedOffsets=9"), set.toString());
    }

    @Test
    void belowTheBoundNothingIsRemovedHoweverOld() {
        InMemoryMessageStore store = store(3);
        store.commit("s", "a", 5);
        store.commit("s", "b", 6);
        clock.addAndGet(1000 * HOUR);
        store.commit("s", "c", 7);
        assertEquals(3, store.committedOffsets());
        assertEquals(5, store.committedOffset("s", "a"));
        assertEquals(6, store.committedOffset("s", "b"));
        assertEquals(7, store.committedOffset("s", "c"));
    }

    @Test
    void aFullStoreOfRecentlyUsedOffsetsRefusesANewPairAndRecordsNothing() {
        InMemoryMessageStore store = store(2);
        store.commit("s", "a", 5);
        store.commit("t", "a", 6);
        clock.addAndGet(HOUR - 1); // both used less than the retention ago
        OffsetLimitExceededException e = assertThrows(OffsetLimitExceededException.class,
                () -> store.commit("s", "new", 1));
        assertEquals(2, e.limit());
        assertTrue(e.getMessage().contains("maxCommittedOffsets") && e.getMessage().contains("new"), e.getMessage());
        assertEquals(-1, store.committedOffset("s", "new"));
        assertEquals(2, store.committedOffsets());
        // the pairs that have an offset keep committing, monotonically
        store.commit("s", "a", 9);
        store.commit("s", "a", 8);
        assertEquals(9, store.committedOffset("s", "a"));
        assertEquals(6, store.committedOffset("t", "a"));
    }

    @Test
    void offsetsUnusedForTheRetentionMakeRoomAndReadAsNeverCommitted() {
        InMemoryMessageStore store = store(2);
        store.commit("s", "old", 5);
        clock.addAndGet(HOUR / 2);
        store.commit("s", "recent", 6);
        clock.addAndGet(HOUR / 2); // "old" unused for exactly the retention, "recent" for half of it
        store.commit("s", "new", 7);
        assertEquals(2, store.committedOffsets());
        assertEquals(-1, store.committedOffset("s", "old"));
        assertEquals(6, store.committedOffset("s", "recent"));
        assertEquals(7, store.committedOffset("s", "new"));
        // the removed pair commits again like a new one (when there is room)
        clock.addAndGet(2 * HOUR);
        store.commit("s", "old", 1);
        assertEquals(1, store.committedOffset("s", "old"));
    }

    @Test
    void aReadIsAUse() {
        InMemoryMessageStore store = store(2);
        store.commit("s", "read", 5);
        store.commit("s", "idle", 6);
        clock.addAndGet(HOUR - 10);
        assertEquals(5, store.committedOffset("s", "read")); // the group started again: its offset is in use
        clock.addAndGet(10);
        store.commit("s", "new", 7);
        assertEquals(5, store.committedOffset("s", "read"));
        assertEquals(-1, store.committedOffset("s", "idle"));
    }

    /**
     * A refusal notes when the oldest offset can expire and does not look again before then; the offset that
     * expires first is found exactly then, and one that was used meanwhile is not removed.
     */
    @Test
    void aRefusalLooksAgainWhenTheOldestOffsetCanExpire() {
        InMemoryMessageStore store = store(2);
        long c0 = clock.get();
        store.commit("s", "first", 1);
        clock.addAndGet(10);
        store.commit("s", "second", 2); // at c0 + 10
        assertThrows(OffsetLimitExceededException.class, () -> store.commit("s", "x", 1));
        clock.set(c0 + HOUR - 10);
        store.commit("s", "first", 3); // used again: now the younger one
        clock.set(c0 + HOUR);
        assertThrows(OffsetLimitExceededException.class, () -> store.commit("s", "x", 1));
        clock.set(c0 + HOUR + 9);
        assertThrows(OffsetLimitExceededException.class, () -> store.commit("s", "x", 1));
        clock.set(c0 + HOUR + 10); // "second" unused for exactly the retention
        store.commit("s", "x", 1);
        assertEquals(3, store.committedOffset("s", "first"));
        assertEquals(-1, store.committedOffset("s", "second"));
        assertEquals(1, store.committedOffset("s", "x"));
    }

    /**
     * A commit to a pair racing the sweep that removes it (the pair unused for the retention until that
     * commit): the commit is never lost. It lands before the sweep looks at the pair (then the pair is in use
     * and kept) or after the removal (then it records the offset in a new entry). Many rounds, each with a
     * fresh full store; a commit written into the removed entry would read as never committed.
     */
    @Test
    @Timeout(60)
    void aCommitRacingTheRemovalOfItsPairIsNeverLost() throws Exception {
        int rounds = 10_000;
        java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(2);
        InMemoryMessageStore[] stores = new InMemoryMessageStore[rounds];
        for (int r = 0; r < rounds; r++) {
            stores[r] = store(8);
            for (int i = 0; i < 7; i++) {
                stores[r].commit("s", "filler-" + i, i);
            }
            stores[r].commit("s", "owner", 0);
        }
        clock.addAndGet(HOUR); // every pair of every store is now unused for the retention
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread owner = new Thread(() -> {
            try {
                for (int r = 0; r < rounds; r++) {
                    barrier.await(10, TimeUnit.SECONDS);
                    stores[r].commit("s", "owner", r + 1);
                }
            } catch (Throwable e) {
                failures.add(e);
            }
        });
        Thread creator = new Thread(() -> {
            try {
                for (int r = 0; r < rounds; r++) {
                    barrier.await(10, TimeUnit.SECONDS);
                    stores[r].commit("s", "new", 1); // full: sweeps, removing every pair not in use
                }
            } catch (Throwable e) {
                failures.add(e);
            }
        });
        owner.start();
        creator.start();
        owner.join();
        creator.join();
        assertEquals(List.of(), failures);
        for (int r = 0; r < rounds; r++) {
            assertEquals(r + 1, stores[r].committedOffset("s", "owner"), "round " + r);
            assertEquals(1, stores[r].committedOffset("s", "new"), "round " + r);
            assertTrue(stores[r].committedOffsets() <= 2, "round " + r + ": the fillers were removed");
        }
    }

    /** Threads asking for new pairs in a full store: the bound holds but for one pair per racing creator. */
    @Test
    @Timeout(60)
    void racingCreatorsPassTheBoundByAtMostOneEach() throws InterruptedException {
        int max = 64;
        int creators = 4;
        InMemoryMessageStore store = store(max);
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger refused = new AtomicInteger();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < creators; t++) {
            int id = t;
            threads.add(new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 5_000; i++) {
                        try {
                            store.commit("s", "c" + id + "-" + i, i);
                        } catch (OffsetLimitExceededException e) {
                            refused.incrementAndGet();
                        }
                        if ((i & 255) == 0) {
                            clock.addAndGet(HOUR / 4); // older pairs expire as time goes on
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        threads.forEach(Thread::start);
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(List.of(), failures);
        assertTrue(refused.get() > 0, "the store was full at times");
        assertTrue(creators * 5_000 - refused.get() > max + creators,
                "expired pairs made room: " + refused.get() + " refused");
        assertTrue(store.committedOffsets() <= max + creators, "bounded: " + store.committedOffsets());
    }

    /**
     * Through the pull consumer: an acknowledgement whose commit is refused fails with the store's error, the
     * group's progress is kept (and reported in its {@link GroupStats}), and its next acknowledgement after room
     * was made commits all of it.
     */
    @Test
    @Timeout(30)
    void aRefusedCommitFailsTheAckAndIsMadeGoodLater() {
        ActorScheduler scheduler = ActorScheduler.builder().name("offset-bound").threads(1).build();
        InMemoryMessageStore store = store(1);
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            store.commit("other", "g", 0); // the one offset the store holds
            for (int i = 0; i < 3; i++) {
                consumer.append("s", ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            PullResult r = consumer.pullOnce("s", "g", 2).block(Duration.ofSeconds(10));
            assertEquals(2, r.messages().size());
            Throwable error = assertThrows(Throwable.class,
                    () -> consumer.ack("s", "g", List.of(0L, 1L)).block(Duration.ofSeconds(10)));
            assertTrue(InMemoryStoreSubjectBoundTest.hasCause(error, OffsetLimitExceededException.class), error.toString());
            assertEquals(-1, store.committedOffset("s", "g"));
            // the figures tell the group's progress, not the store's refusal: nothing acknowledged counts as lag
            GroupStats stats = consumer.stats("s", "g");
            assertEquals(2, stats.acknowledged());
            assertEquals(2, stats.committedOffset(), stats.toString());
            assertEquals(1, stats.lag(), stats.toString());
            clock.addAndGet(HOUR); // "other" expires
            PullResult next = consumer.pullOnce("s", "g", 2).block(Duration.ofSeconds(10));
            assertEquals(1, next.messages().size()); // the acknowledged ones are not delivered again
            assertEquals(2, next.messages().get(0).offset());
            assertEquals(3, consumer.ack("s", "g", List.of(2L)).block(Duration.ofSeconds(10)));
            assertEquals(3, store.committedOffset("s", "g"));
            assertEquals(-1, store.committedOffset("other", "g"));
        } finally {
            consumer.dispose();
            scheduler.dispose();
        }
    }

    /**
     * A group whose commits are refused keeps long-polling: its waiting poll is not failed by the refusal
     * retried at each turn, and is answered when a message arrives; nor does the group retire while it holds
     * progress the store has not recorded (it would start again before it): it retries one idle timeout
     * after each refusal, and retires once the commit is recorded.
     */
    @Test
    @Timeout(30)
    void aRefusedGroupKeepsLongPollingAndDoesNotRetire() throws InterruptedException {
        ActorScheduler scheduler = ActorScheduler.builder().name("offset-bound-poll").threads(1).build();
        InMemoryMessageStore store = store(1);
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).idleTimeout(Duration.ofMillis(1)).build();
        try {
            store.commit("other", "g", 0);
            consumer.append("s", "m0".getBytes(StandardCharsets.UTF_8));
            assertEquals(1, consumer.pullOnce("s", "g", 1).block(Duration.ofSeconds(10)).messages().size());
            assertThrows(Throwable.class, () -> consumer.ack("s", "g", List.of(0L)).block(Duration.ofSeconds(10)));
            reactor.core.publisher.Mono<PullResult> waiting = consumer.pull("s", "g", 1, Duration.ofSeconds(20)).cache();
            waiting.subscribe(r -> { }, e -> { });
            Thread.sleep(50); // the poll waits; the group's turns (its ack timeout timer, the poll) retry the commit
            consumer.append("s", "m1".getBytes(StandardCharsets.UTF_8));
            PullResult r = waiting.block(Duration.ofSeconds(10));
            assertEquals(1, r.messages().size());
            assertEquals(1, r.messages().get(0).offset());
            assertThrows(Throwable.class, () -> consumer.ack("s", "g", List.of(1L)).block(Duration.ofSeconds(10)));
            Thread.sleep(50); // far past the idle timeout: a group without unrecorded progress would retire
            assertEquals(0, consumer.retiredGroups());
            assertEquals(-1, store.committedOffset("s", "g"));
            // room is made: the group's next retry (an idle timeout after the last refusal) commits, then it retires
            clock.addAndGet(HOUR);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (consumer.retiredGroups() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(1, consumer.retiredGroups());
            assertEquals(2, store.committedOffset("s", "g"));
        } finally {
            consumer.dispose();
            scheduler.dispose();
        }
    }

    /**
     * Through the pull consumer, acknowledged on delivery: a pull whose commit is refused still gets its
     * messages (they are taken; a pull left unanswered would lose them), and the group commits them once room
     * was made.
     */
    @Test
    @Timeout(30)
    void aPullAcknowledgedOnDeliveryIsAnsweredWhenItsCommitIsRefused() {
        ActorScheduler scheduler = ActorScheduler.builder().name("offset-bound-auto").threads(1).build();
        InMemoryMessageStore store = store(1);
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            store.commit("other", "g", 0);
            for (int i = 0; i < 3; i++) {
                consumer.append("s", ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            PullResult r = consumer.pull("s", "g", 2, Duration.ofSeconds(5), true).block(Duration.ofSeconds(10));
            assertEquals(2, r.messages().size());
            assertEquals(-1, store.committedOffset("s", "g"));
            // the figures tell the group's progress, not the store's refusal: nothing acknowledged counts as lag
            GroupStats stats = consumer.stats("s", "g");
            assertEquals(2, stats.acknowledged());
            assertEquals(2, stats.committedOffset(), stats.toString());
            assertEquals(1, stats.lag(), stats.toString());
            clock.addAndGet(HOUR); // "other" expires
            PullResult next = consumer.pull("s", "g", 2, Duration.ofSeconds(5), true).block(Duration.ofSeconds(10));
            assertEquals(1, next.messages().size()); // the first two are not delivered again
            assertEquals(2, next.messages().get(0).offset());
            assertEquals(3, store.committedOffset("s", "g"));
        } finally {
            consumer.dispose();
            scheduler.dispose();
        }
    }
}
