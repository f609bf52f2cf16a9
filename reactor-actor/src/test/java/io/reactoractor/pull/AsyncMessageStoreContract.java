package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The contract every {@link AsyncMessageStore} passes, at the store's level and through a
 * {@link PullConsumer} built on it: the in-memory store (adapted) and the Redis store run the same
 * tests. A subclass says how to make a store; each test uses subjects and groups of its own, so a
 * shared backing store needs no cleaning between tests.
 */
public abstract class AsyncMessageStoreContract {

    /** Generous: CI is a busy 2-core machine; no test asserts a latency. */
    protected static final Duration WAIT = Duration.ofSeconds(20);
    private static final AtomicInteger NAMES = new AtomicInteger();

    private final List<PullConsumer> consumers = new ArrayList<>();
    private ActorScheduler scheduler;
    /** The store under test (made before each test). */
    protected AsyncMessageStore store;

    /** @return a new store (closed by {@link #closeStore}) */
    protected abstract AsyncMessageStore newStore();

    /**
     * Releases a store made by {@link #newStore}.
     *
     * @param s the store
     */
    protected void closeStore(AsyncMessageStore s) {
    }

    @BeforeEach
    void setUpContract() {
        scheduler = ActorScheduler.builder().name("store-contract").threads(2).build();
        store = newStore();
    }

    @AfterEach
    void tearDownContract() {
        consumers.forEach(PullConsumer::dispose);
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
        closeStore(store);
    }

    /**
     * @param what a hint for the name
     * @return a name no other test uses
     */
    protected static String unique(String what) {
        return what + "-" + NAMES.incrementAndGet() + "-" + Long.toString(System.nanoTime() & 0xFFFFFF, 36);
    }

    /**
     * @param s text
     * @return its UTF-8 bytes
     */
    protected static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param builder a consumer's builder (given the store under test)
     * @return the consumer (disposed after the test)
     */
    protected PullConsumer consumer(java.util.function.UnaryOperator<PullConsumer.Builder> builder) {
        PullConsumer c = builder.apply(PullConsumer.builder(scheduler).asyncStore(store)).build();
        consumers.add(c);
        return c;
    }

    /**
     * Waits for a condition, polling.
     *
     * @param condition the condition
     * @param what      said when it never holds
     * @throws InterruptedException if interrupted
     */
    protected static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(5);
        }
    }

    private long append(String subject, String payload) {
        return store.append(subject, b(payload)).block(WAIT);
    }

    // ================================================================== the store itself

    /**
     * Bad arguments fail the call itself, naming the argument, before a Mono exists: nothing reaches the
     * store (the Redis store used to build a key named {@code "null"} and send it).
     */
    @Test
    public void badArgumentsFailTheCallNamingTheArgument() {
        String s = unique("args");
        String g = unique("g");
        Message m = new Message(s, 0, 0, b("x"));
        assertThrowsNaming(NullPointerException.class, "subject", () -> store.append(null, b("x")));
        assertThrowsNaming(NullPointerException.class, "payload", () -> store.append(s, null));
        assertThrowsNaming(NullPointerException.class, "subject", () -> store.fetch(null, g, -1, 1));
        assertThrowsNaming(NullPointerException.class, "group", () -> store.fetch(s, null, -1, 1));
        assertThrowsNaming(IllegalArgumentException.class, "maxMessages", () -> store.fetch(s, g, -1, 0));
        assertThrowsNaming(NullPointerException.class, "group", () -> store.acknowledge(s, null, new long[0], -1));
        assertThrowsNaming(NullPointerException.class, "offsets", () -> store.acknowledge(s, g, null, -1));
        assertThrowsNaming(NullPointerException.class, "offsets", () -> store.renew(s, g, null));
        assertThrowsNaming(NullPointerException.class, "subject", () -> store.renewPending(null, g, new long[0]));
        // a negative offset among a call's offsets (the adapter over a MessageStore and the default renew accepted
        // them, where the Redis store threw)
        assertThrowsNaming(IllegalArgumentException.class, "offset", () -> store.acknowledge(s, g, new long[] {0, -3}, -1));
        assertThrowsNaming(IllegalArgumentException.class, "offset", () -> store.renew(s, g, new long[] {-3}));
        assertThrowsNaming(IllegalArgumentException.class, "offset", () -> store.renewPending(s, g, new long[] {-3}));
        assertThrowsNaming(NullPointerException.class, "minIdle", () -> store.reclaim(s, g, 0, null, 1));
        assertThrowsNaming(IllegalArgumentException.class, "cursor",
                () -> store.reclaim(s, g, -1, Duration.ZERO, 1));
        assertThrowsNaming(IllegalArgumentException.class, "maxMessages",
                () -> store.reclaim(s, g, 0, Duration.ZERO, 0));
        assertThrowsNaming(NullPointerException.class, "group", () -> store.position(s, null));
        assertThrowsNaming(NullPointerException.class, "message", () -> store.deadLetter(s, g, null));
        assertThrowsNaming(NullPointerException.class, "group", () -> store.deadLetter(s, null, m));
        // nothing was created by the refused calls
        assertEquals(0, store.position(s, g).block(WAIT).endOffset());
    }

    private static void assertThrowsNaming(Class<? extends RuntimeException> type, String name, Runnable call) {
        RuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(type, call::run);
        assertTrue(String.valueOf(e.getMessage()).contains(name), "the message names " + name + ": " + e);
    }

    /** Appends and fetches: every message once, in order, payloads intact, offsets as appended. */
    @Test
    public void fetchHandsOutAppendedMessagesInOrder() {
        String s = unique("s");
        long o0 = append(s, "a");
        long o1 = append(s, "b");
        long o2 = append(s, "c");
        assertTrue(o0 >= 0 && o0 < o1 && o1 < o2, "offsets increase: " + o0 + ", " + o1 + ", " + o2);
        List<Message> got = store.fetch(s, "g", -1, 10).block(WAIT);
        assertEquals(List.of(o0, o1, o2), got.stream().map(Message::offset).toList());
        assertEquals(List.of("a", "b", "c"), got.stream().map(Message::payloadAsString).toList());
        assertEquals(s, got.get(0).subject());
    }

    /** A group is handed each message once; a second fetch continues after the first. */
    @Test
    public void fetchContinuesAfterTheLastMessageHandedOut() {
        String s = unique("s");
        append(s, "a");
        append(s, "b");
        long o2 = append(s, "c");
        List<Message> first = store.fetch(s, "g", -1, 2).block(WAIT);
        assertEquals(List.of("a", "b"), first.stream().map(Message::payloadAsString).toList());
        List<Message> second = store.fetch(s, "g", first.get(1).offset() + 1, 10).block(WAIT);
        assertEquals(List.of(o2), second.stream().map(Message::offset).toList());
        assertEquals(List.of(), store.fetch(s, "g", o2 + 1, 10).block(WAIT));
    }

    /** Groups do not share positions. */
    @Test
    public void groupsAreIndependent() {
        String s = unique("s");
        append(s, "a");
        append(s, "b");
        assertEquals(2, store.fetch(s, "g1", -1, 10).block(WAIT).size());
        assertEquals(2, store.fetch(s, "g2", -1, 10).block(WAIT).size());
    }

    /** An unknown subject reads as empty. */
    @Test
    public void unknownSubjectIsEmpty() {
        assertEquals(List.of(), store.fetch(unique("none"), "g", -1, 10).block(WAIT));
    }

    /** Payload bytes survive, whatever they are. */
    @Test
    public void binaryPayloadsSurvive() {
        String s = unique("s");
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        store.append(s, all).block(WAIT);
        store.append(s, new byte[0]).block(WAIT);
        List<Message> got = store.fetch(s, "g", -1, 10).block(WAIT);
        assertArrayEquals(all, got.get(0).payload());
        assertArrayEquals(new byte[0], got.get(1).payload());
    }

    /** Offsets are strictly increasing over many appends. */
    @Test
    public void offsetsIncrease() {
        String s = unique("s");
        long last = -1;
        for (int i = 0; i < 200; i++) {
            long o = append(s, "m" + i);
            assertTrue(o > last, "offset " + o + " after " + last);
            last = o;
        }
    }

    /** The committed position follows acknowledgements; the end offset follows appends. */
    @Test
    public void positionFollowsAcknowledgements() {
        String s = unique("s");
        append(s, "a");
        append(s, "b");
        long o2 = append(s, "c");
        List<Message> got = store.fetch(s, "g", -1, 10).block(WAIT);
        long o0 = got.get(0).offset();
        long o1 = got.get(1).offset();
        store.acknowledge(s, "g", new long[] {o0}, o1).block(WAIT);
        AsyncMessageStore.Position p = store.position(s, "g").block(WAIT);
        assertEquals(o2 + 1, p.endOffset());
        assertEquals(o1, p.committedOffset(), "the first unacknowledged message");
        assertEquals(2, p.lag());
        store.acknowledge(s, "g", new long[] {o1, o2}, o2 + 1).block(WAIT);
        p = store.position(s, "g").block(WAIT);
        assertEquals(o2 + 1, p.committedOffset());
        assertEquals(0, p.lag());
    }

    /** Append listeners hear appends (of this process at least). */
    @Test
    public void appendListenersHearAppends() throws InterruptedException {
        String s = unique("s");
        ConcurrentLinkedQueue<String> heard = new ConcurrentLinkedQueue<>();
        Disposable d = store.addAppendListener((subject, end) -> heard.add(subject));
        try {
            append(s, "a");
            await(() -> heard.contains(s), "a listener heard the append to " + s);
        } finally {
            d.dispose();
        }
    }

    /**
     * A listener that throws is the listener's failure only: the append succeeds (the message is stored: a caller
     * retrying a failed append would store it twice) and the listeners after it, a pull consumer's among them,
     * still hear it (the in-memory store failed the append and its consumers' long polls timed out).
     */
    @Test
    public void aThrowingAppendListenerNeitherFailsTheAppendNorSilencesTheOthers() throws InterruptedException {
        Disposable failing = store.addAppendListener((subject, end) -> {
            throw new IllegalStateException("expected test failure: an append listener fails");
        });
        try {
            PullConsumer c = consumer(b -> b); // its listener is registered after the failing one
            String s = unique("s");
            reactor.core.publisher.Mono<PullResult> poll = c.pull(s, "g", 10, Duration.ofSeconds(60)).cache();
            poll.subscribe();
            Thread.sleep(50); // not needed for correctness: lets the poll wait first, most of the time
            c.appendAsync(s, b("hello")).block(WAIT);
            PullResult r = poll.block(WAIT);
            assertEquals(PullResult.Status.MESSAGES, r.status());
            assertEquals(1, r.messages().size(), "stored once");
        } finally {
            failing.dispose();
        }
    }

    // ================================================================== through a PullConsumer

    /** A long poll waiting on an empty subject is answered by an append. */
    @Test
    public void longPollIsAnsweredByAnAppend() throws InterruptedException {
        PullConsumer c = consumer(b -> b);
        String s = unique("s");
        reactor.core.publisher.Mono<PullResult> poll = c.pull(s, "g", 10, Duration.ofSeconds(60)).cache();
        poll.subscribe();
        Thread.sleep(50); // not needed for correctness: lets the poll reach the actor first, most of the time
        c.appendAsync(s, b("hello")).block(WAIT);
        PullResult r = poll.block(WAIT);
        assertEquals(PullResult.Status.MESSAGES, r.status());
        assertEquals("hello", r.messages().get(0).payloadAsString());
    }

    /** Pull-once on nothing answers EMPTY; a long poll on nothing times out. */
    @Test
    public void emptyAndTimedOut() {
        PullConsumer c = consumer(b -> b);
        String s = unique("s");
        assertEquals(PullResult.Status.EMPTY, c.pullOnce(s, "g", 10).block(WAIT).status());
        assertEquals(PullResult.Status.TIMED_OUT, c.pull(s, "g", 10, Duration.ofMillis(200)).block(WAIT).status());
    }

    /** Acknowledged messages are not delivered again; unacknowledged ones are, after the ack timeout. */
    @Test
    public void unacknowledgedMessagesAreRedelivered() {
        PullConsumer c = consumer(b -> b.ackTimeout(Duration.ofMillis(300)));
        String s = unique("s");
        c.appendAsync(s, b("acked")).block(WAIT);
        c.appendAsync(s, b("dropped")).block(WAIT);
        PullResult r = c.pull(s, "g", 10, Duration.ofSeconds(20)).block(WAIT);
        assertEquals(2, r.messages().size());
        c.ack(s, "g", List.of(r.messages().get(0).offset())).block(WAIT);
        PullResult again = c.pull(s, "g", 10, Duration.ofSeconds(20)).block(WAIT);
        assertEquals(List.of("dropped"), again.messages().stream().map(Message::payloadAsString).toList());
        c.ack(s, "g", List.of(again.messages().get(0).offset())).block(WAIT);
        assertEquals(PullResult.Status.TIMED_OUT, c.pull(s, "g", 10, Duration.ofMillis(700)).block(WAIT).status(),
                "nothing left after both were acknowledged");
    }

    /** A message nacked past the policy's attempts goes to the group's dead letters. */
    @Test
    public void nackedMessagesAreDeadLettered() throws InterruptedException {
        PullConsumer c = consumer(b -> b.failurePolicy(FailurePolicy.retryThenDeadLetter(2, Duration.ZERO)));
        String s = unique("s");
        String g = unique("g");
        c.appendAsync(s, b("poison")).block(WAIT);
        for (int i = 0; i < 2; i++) {
            PullResult r = c.pull(s, g, 1, Duration.ofSeconds(20)).block(WAIT);
            assertEquals("poison", r.messages().get(0).payloadAsString(), "delivery " + (i + 1));
            c.nack(s, g, r.messages().get(0).offset()).block(WAIT);
        }
        PullResult dead = c.pull(FailurePolicy.deadLetterSubject(g), "inspect", 1, Duration.ofSeconds(20)).block(WAIT);
        assertEquals(List.of("poison"), dead.messages().stream().map(Message::payloadAsString).toList());
        assertEquals(PullResult.Status.TIMED_OUT, c.pull(s, g, 1, Duration.ofMillis(500)).block(WAIT).status(),
                "the dead-lettered message is not delivered again");
    }

    /** Many messages through several concurrent pollers: each delivered, none lost. */
    @Test
    public void everyMessageIsDeliveredOnce() throws InterruptedException {
        PullConsumer c = consumer(b -> b);
        String s = unique("s");
        int n = 2_000;
        java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        AtomicInteger duplicates = new AtomicInteger();
        List<Disposable> pollers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            pollers.add(reactor.core.publisher.Mono.defer(() -> c.pull(s, "g", 50, Duration.ofSeconds(5), true))
                    .doOnNext(r -> r.messages().forEach(m -> {
                        if (!seen.add(m.payloadAsString())) {
                            duplicates.incrementAndGet();
                        }
                    }))
                    .repeat()
                    .subscribe());
        }
        try {
            for (int i = 0; i < n; i++) {
                c.appendAsync(s, b("m" + i)).block(WAIT);
            }
            await(() -> seen.size() == n, "all " + n + " delivered, got " + seen.size());
            assertEquals(0, duplicates.get());
        } finally {
            pollers.forEach(Disposable::dispose);
        }
    }

    /** A reactive consumer ({@code consume}, ack after onNext) gets every message; the store's position follows. */
    @Test
    public void aReactiveConsumerGetsEveryMessage() throws InterruptedException {
        PullConsumer c = consumer(b -> b);
        String s = unique("s");
        int n = 300;
        for (int i = 0; i < n; i++) {
            c.appendAsync(s, b("m" + i)).block(WAIT);
        }
        List<String> got = c.consume(s, "g").take(n).map(d -> d.message().payloadAsString())
                .collectList().block(WAIT);
        assertEquals(n, got.size());
        assertEquals(n, new java.util.HashSet<>(got).size(), "no duplicates");
        await(() -> {
            AsyncMessageStore.Position p = store.position(s, "g").block(WAIT);
            return p.lag() == 0 && p.pending() == 0;
        }, "every message acknowledged in the store");
    }

    /** The sync {@code append} is refused on an asynchronous store, with a clear error. */
    @Test
    public void syncAppendIsRefused() {
        PullConsumer c = consumer(b -> b);
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> c.append(unique("s"), b("x")));
        assertTrue(e.getMessage().contains("appendAsync"), e.getMessage());
    }

    /** Used by subclasses: waits a little for asynchronous effects (never a correctness condition). */
    protected static void pause(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
