package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The in-memory store's bound on subjects ({@link InMemoryMessageStore}, "Bounded subjects"): client-chosen
 * subject names cannot grow the store without limit. Empty subjects make room; subjects with messages or a
 * committed offset are never removed; a full store refuses a new subject and creates nothing.
 */
class InMemoryStoreSubjectBoundTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theBoundIsValidatedAndReported() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> InMemoryMessageStore.builder().maxSubjects(0));
        assertTrue(e.getMessage().contains("maxSubjects"), e.getMessage());
        assertEquals(InMemoryMessageStore.DEFAULT_MAX_SUBJECTS, InMemoryMessageStore.create().maxSubjects());
        assertEquals(7, InMemoryMessageStore.builder().maxSubjects(7).build().maxSubjects());
    }

    @Test
    void emptySubjectsMakeRoomAndNothingIsLost() {
        InMemoryMessageStore store = InMemoryMessageStore.builder().maxSubjects(3).build();
        store.append("data", b("x"));
        store.ensureSubject("empty-1");
        store.ensureSubject("empty-2");
        assertEquals(3, store.subjects().size());
        // a fourth subject: the two empty ones go, the one with a message stays
        store.ensureSubject("new");
        assertEquals(java.util.Set.of("data", "new"), store.subjects());
        assertEquals(1, store.endOffset("data"));
        assertEquals("x", store.read("data", 0, 10).get(0).payloadAsString());
        // a removed empty subject reads as before and is created again by its next use, at offset 0
        assertEquals(0, store.endOffset("empty-1"));
        assertEquals(List.of(), store.read("empty-1", 0, 10));
        assertEquals(0, store.append("empty-1", b("y")));
        assertEquals(java.util.Set.of("data", "new", "empty-1"), store.subjects());
    }

    @Test
    void aFullStoreOfDataRefusesANewSubjectAndCreatesNothing() {
        InMemoryMessageStore store = InMemoryMessageStore.builder().maxSubjects(2).build();
        store.append("a", b("1"));
        store.ensureSubject("b");
        store.commit("b", "g", 0); // a committed offset is state too: "b" is never removed now
        SubjectLimitExceededException e = assertThrows(SubjectLimitExceededException.class,
                () -> store.append("c", b("2")));
        assertEquals(2, e.limit());
        assertTrue(e.getMessage().contains("maxSubjects"), e.getMessage());
        assertThrows(SubjectLimitExceededException.class, () -> store.ensureSubject("c"));
        assertEquals(java.util.Set.of("a", "b"), store.subjects());
        assertEquals(0, store.endOffset("c"));
        // existing subjects are unaffected
        assertEquals(1, store.append("a", b("3")));
        assertEquals(0, store.append("b", b("4")));
    }

    /**
     * Appends to subjects that a full store's sweep may be removing at the same moment: every append
     * lands (its offset is readable in the subject it named), none is lost to a removed subject.
     */
    @Test
    @Timeout(60)
    void appendsRacingTheSweepAreNeverLost() throws Exception {
        int threads = 4;
        int perThread = 20_000;
        // room for the 80 subjects that get data, and 20 more: the empty ones fill it and are swept again and again
        int max = threads * (perThread / 1_000) + 20;
        InMemoryMessageStore store = InMemoryMessageStore.builder().maxSubjects(max).build();
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger refused = new AtomicInteger();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            all.add(new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException ex) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    // creators of empty subjects fill the store and trigger sweeps ...
                    try {
                        store.ensureSubject("e" + id + "-" + i);
                    } catch (SubjectLimitExceededException ex) {
                        refused.incrementAndGet();
                    }
                    // ... while each thread appends to its own subject, which starts empty every 1,000
                    try {
                        store.append("s" + id + "-" + (i / 1_000), b(Integer.toString(i)));
                    } catch (SubjectLimitExceededException ex) {
                        refused.incrementAndGet();
                        i--; // retry: the store is momentarily full of subjects holding data
                        Thread.onSpinWait();
                    }
                }
            }));
        }
        all.forEach(Thread::start);
        start.countDown();
        for (Thread t : all) {
            t.join();
        }
        for (int t = 0; t < threads; t++) {
            for (int k = 0; k < perThread / 1_000; k++) {
                String subject = "s" + t + "-" + k;
                assertEquals(1_000, store.endOffset(subject), subject + " lost messages");
                List<Message> got = store.read(subject, 0, 1_000);
                for (int j = 0; j < 1_000; j++) {
                    assertEquals(Integer.toString(k * 1_000 + j), got.get(j).payloadAsString());
                }
            }
        }
        assertTrue(store.subjects().size() <= max + threads, "bounded: " + store.subjects().size());
    }

    /** Through the pull consumer: a pull that needs a new subject in a full store fails with the store's error. */
    @Test
    @Timeout(30)
    void aPullOnANewSubjectInAFullStoreFails() {
        ActorScheduler scheduler = ActorScheduler.builder().name("subject-bound").threads(1).build();
        InMemoryMessageStore store = InMemoryMessageStore.builder().maxSubjects(1).build();
        PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
        try {
            consumer.append("full", b("x"));
            Throwable error = assertThrows(Throwable.class,
                    () -> consumer.pullOnce("other", "g", 10).block(Duration.ofSeconds(10)));
            assertTrue(hasCause(error, SubjectLimitExceededException.class), error.toString());
            assertFalse(store.subjects().contains("other"));
            assertEquals(1, consumer.pullOnce("full", "g", 10).block(Duration.ofSeconds(10)).messages().size());
        } finally {
            consumer.dispose();
            scheduler.dispose();
        }
    }

    /** Whether {@code t} or one of its causes is a {@code type} (also used by {@link InMemoryStoreOffsetBoundTest}). */
    static boolean hasCause(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    /**
     * A pull the full store refuses leaves nothing in the scheduler either: the pair's actor registered
     * with its scheduler group as it was built, before the store was asked, and the refusal left that actor
     * and its group {@code cg.<group>} behind for good (found by a black-box probe: with {@code maxGroups(20)},
     * 19 refused pulls under client-chosen group names made every new group fail).
     */
    @Test
    void aPullTheFullStoreRefusesLeavesNoActorOrSchedulerGroupBehind() {
        ActorScheduler scheduler = ActorScheduler.builder().name("refused-pulls").threads(1).maxGroups(10).build();
        try {
            InMemoryMessageStore store = InMemoryMessageStore.builder().maxSubjects(1).build();
            PullConsumer consumer = PullConsumer.builder(scheduler).store(store).build();
            consumer.append("full", b("x"));
            int actorsBefore = scheduler.stats().actors();
            int groupsBefore = scheduler.groups().size();
            for (int i = 0; i < 30; i++) { // more than maxGroups
                int k = i;
                RuntimeException e = assertThrows(RuntimeException.class,
                        () -> consumer.pullOnce("new-" + k, "group-" + k, 1).block(Duration.ofSeconds(10)));
                assertTrue(e instanceof SubjectLimitExceededException || e.getCause() instanceof SubjectLimitExceededException,
                        e.toString());
            }
            assertEquals(0, consumer.liveGroups());
            assertEquals(actorsBefore, scheduler.stats().actors(), "actors registered");
            assertEquals(groupsBefore, scheduler.groups().size(), "scheduler groups: " + scheduler.groups());
            // the scheduler still takes a new pair
            assertEquals(1, consumer.pullOnce("full", "fresh", 1).block(Duration.ofSeconds(10)).messages().size());
            consumer.dispose();
        } finally {
            scheduler.dispose();
        }
    }
}
