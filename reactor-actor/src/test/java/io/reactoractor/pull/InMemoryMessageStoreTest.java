package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

class InMemoryMessageStoreTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void appendsGetConsecutiveOffsetsAndReadBack() {
        InMemoryMessageStore store = InMemoryMessageStore.create();
        assertEquals(0, store.endOffset("a"));
        assertEquals(List.of(), store.read("a", 0, 10));
        for (int i = 0; i < 50; i++) {
            assertEquals(i, store.append("a", b("m" + i)));
        }
        assertEquals(50, store.endOffset("a"));
        assertEquals(0, store.startOffset("a"));
        List<Message> r = store.read("a", 10, 5);
        assertEquals(5, r.size());
        for (int i = 0; i < 5; i++) {
            assertEquals(10 + i, r.get(i).offset());
            assertEquals("m" + (10 + i), r.get(i).payloadAsString());
            assertEquals("a", r.get(i).subject());
        }
        assertEquals(List.of(), store.read("a", 50, 5));
        assertEquals(0, store.endOffset("b"), "subjects are independent");
    }

    @Test
    void retentionDropsTheOldestAndReadsStartAtTheStartOffset() {
        InMemoryMessageStore store = InMemoryMessageStore.builder().retention(100).build();
        for (int i = 0; i < 250; i++) {
            store.append("s", b("m" + i));
        }
        assertEquals(150, store.startOffset("s"));
        assertEquals(250, store.endOffset("s"));
        List<Message> r = store.read("s", 0, 10);
        assertEquals(150, r.get(0).offset());
        assertEquals("m150", r.get(0).payloadAsString());
        List<Message> all = store.read("s", 150, 1000);
        assertEquals(100, all.size());
        assertEquals("m249", all.get(99).payloadAsString());
    }

    @Test
    void commitsAreMonotonicPerSubjectAndGroup() {
        InMemoryMessageStore store = InMemoryMessageStore.create();
        assertEquals(-1, store.committedOffset("s", "g"));
        store.commit("s", "g", 5);
        store.commit("s", "g", 3);
        assertEquals(5, store.committedOffset("s", "g"));
        assertEquals(-1, store.committedOffset("s", "h"));
        assertEquals(-1, store.committedOffset("t", "g"));
        assertThrows(IllegalArgumentException.class, () -> store.commit("s", "g", -1));
    }

    @Test
    void listenersSeeTheNewEndOffsetAndCanBeRemoved() {
        InMemoryMessageStore store = InMemoryMessageStore.create();
        List<String> seen = new ArrayList<>();
        Disposable d = store.addAppendListener((s, end) -> {
            assertEquals(end, store.endOffset(s), "end offset is visible before listeners run");
            seen.add(s + "@" + end);
        });
        store.append("x", b("1"));
        store.append("x", b("2"));
        d.dispose();
        store.append("x", b("3"));
        assertEquals(List.of("x@1", "x@2"), seen);
    }

    @Test
    void badInputIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> InMemoryMessageStore.builder().retention(0));
        InMemoryMessageStore store = InMemoryMessageStore.create();
        assertThrows(IllegalArgumentException.class, () -> store.read("a", 0, 0));
        assertThrows(NullPointerException.class, () -> store.append("a", null));
        assertThrows(NullPointerException.class, () -> store.append(null, new byte[0]));
        // every null names its parameter (read, startOffset, endOffset gave the JDK's '"key" is null', and
        // committedOffset(null, null) answered -1)
        for (org.junit.jupiter.api.function.Executable call : List.<org.junit.jupiter.api.function.Executable>of(
                () -> store.read(null, 0, 1), () -> store.startOffset(null), () -> store.endOffset(null),
                () -> store.committedOffset(null, "g"), () -> store.committedOffset("a", null))) {
            NullPointerException e = assertThrows(NullPointerException.class, call);
            assertTrue("subject".equals(e.getMessage()) || "group".equals(e.getMessage()), e::getMessage);
        }
    }

    /** Many threads appending to a few subjects: every offset used exactly once, contents intact. */
    @Test
    void concurrentAppendsGetUniqueGaplessOffsets() throws Exception {
        InMemoryMessageStore store = InMemoryMessageStore.builder().retention(1_000_000).build();
        int threads = 8;
        int per = 50_000;
        ConcurrentHashMap<String, Boolean> seen = new ConcurrentHashMap<>();
        AtomicLong listenerCalls = new AtomicLong();
        store.addAppendListener((s, e) -> listenerCalls.incrementAndGet());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < per; i++) {
                    String subject = "s" + (i % 2);
                    store.append(subject, b(id + ":" + i));
                }
            });
            th.start();
            ts.add(th);
        }
        start.countDown();
        for (Thread t : ts) {
            t.join();
        }
        long total = 0;
        for (String s : List.of("s0", "s1")) {
            long end = store.endOffset(s);
            total += end;
            long expect = 0;
            for (long from = 0; from < end; ) {
                List<Message> batch = store.read(s, from, 10_000);
                for (Message m : batch) {
                    assertEquals(expect++, m.offset());
                    assertTrue(seen.put(m.payloadAsString(), Boolean.TRUE) == null, "duplicate " + m);
                }
                from += batch.size();
            }
        }
        assertEquals((long) threads * per, total);
        assertEquals((long) threads * per, seen.size());
        assertEquals((long) threads * per, listenerCalls.get());
    }
}
