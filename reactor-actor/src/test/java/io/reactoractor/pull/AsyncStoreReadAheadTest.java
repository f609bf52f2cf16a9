package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code (subject, group)} actor on an asynchronous store: read-ahead (the next fetch goes out
 * before the buffer runs dry, bounded), renewal of messages that waited in the buffer, a new pull asking
 * the store (a lost append notification costs no more than the next pull), and failing fast through the
 * store's connection state ({@link AsyncMessageStore#connected()}).
 */
class AsyncStoreReadAheadTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("read-ahead-test").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
    }

    @Test
    void theNextFetchGoesOutBeforeTheBufferRunsDryAndTheBufferIsBounded() {
        RecordingAsyncStore store = new RecordingAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            for (int i = 0; i < 20_000; i++) {
                c.appendAsync("s", new byte[] {1}).block(WAIT);
            }
            long taken = 0;
            for (int i = 0; i < 60; i++) {
                PullResult r = c.pull("s", "g", 100, Duration.ofSeconds(10)).block(WAIT);
                assertEquals(100, r.messages().size(), "pull " + i);
                taken += r.messages().size();
                c.ack("s", "g", r.messages().stream().map(Message::offset).toList()).block(WAIT);
                long buffered = store.fetchedMessages() - taken;
                assertTrue(buffered < AsyncStoreCalls.READ_AHEAD_BELOW + AsyncStoreCalls.MAX_FETCH,
                        "read-ahead is bounded: " + buffered + " fetched and not handed out");
            }
            // the waiting pulls want 100; a fetch for more is a read-ahead, for what pulls took since the last one
            assertTrue(store.fetches.stream().anyMatch(f -> f[0] > 100), "read ahead: " + asks(store));
            assertTrue(store.fetches.size() < 60, "fewer fetches than pulls: " + asks(store));
        } finally {
            c.dispose();
        }
    }

    @Test
    void aMessageThatWaitedInTheBufferIsRenewedWhenHandedOut() throws InterruptedException {
        RecordingAsyncStore store = new RecordingAsyncStore();
        // renewed after a quarter of the ack timeout in the buffer: 250 ms
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).ackTimeout(Duration.ofSeconds(1)).build();
        try {
            for (int i = 0; i < 10; i++) {
                c.appendAsync("s", new byte[] {1}).block(WAIT);
            }
            PullResult first = c.pull("s", "g", 1, Duration.ofSeconds(10)).block(WAIT);
            c.ack("s", "g", List.of(first.messages().get(0).offset())).block(WAIT);
            assertEquals(List.of(), List.copyOf(store.renewed), "handed out at once: not renewed");
            AsyncMessageStoreContract.await(() -> store.fetchedMessages() > 1, "read ahead after the first pull");
            Thread.sleep(400);
            PullResult second = c.pull("s", "g", 1, Duration.ofSeconds(10)).block(WAIT);
            long offset = second.messages().get(0).offset();
            AsyncMessageStoreContract.await(() -> store.renewed.contains(offset),
                    "a message 400 ms in the buffer is renewed when handed out: " + store.renewed);
        } finally {
            c.dispose();
        }
    }

    @Test
    void aNewPullAsksTheStoreSoALostNotificationCostsOnlyUntilThen() throws InterruptedException {
        RecordingAsyncStore store = new RecordingAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            c.appendAsync("s", new byte[] {1}).block(WAIT);
            PullResult r0 = c.pull("s", "g", 1, Duration.ofSeconds(10)).block(WAIT);
            c.ack("s", "g", List.of(r0.messages().get(0).offset())).block(WAIT);
            AtomicReference<PullResult> waiting = new AtomicReference<>();
            c.pull("s", "g", 1, Duration.ofSeconds(30)).subscribe(waiting::set);
            // the long poll waits, its group suspended at the end of the turn that took it, and no fetch is under
            // way: none that could still bring the next append (a fetch issued by that turn would be counted in
            // flight from its subscription, inside the turn)
            AsyncMessageStoreContract.await(() -> {
                GroupStats g = c.stats("s", "g");
                return g != null && g.waitingPulls() == 1 && g.suspended() && store.fetchesInFlight.get() == 0;
            }, "the long poll waits, with no fetch under way");
            store.notify = false;
            long offset = c.appendAsync("s", new byte[] {2}).block(WAIT); // its notification is lost
            Thread.sleep(100);
            assertEquals(null, waiting.get(), "no notification, no fetch yet");
            // a new pull, more than 1 ms after the last fetch: it asks the store, and the waiting poll gets the message
            PullResult other = c.pull("s", "g", 1, Duration.ofMillis(200)).block(WAIT);
            AsyncMessageStoreContract.await(() -> waiting.get() != null, "the waiting poll answered");
            assertEquals(List.of(offset), waiting.get().messages().stream().map(Message::offset).toList());
            assertEquals(PullResult.Status.TIMED_OUT, other.status());
        } finally {
            c.dispose();
        }
    }

    @Test
    void aPullFailsAtOnceWhileTheStoreIsDisconnected() {
        RecordingAsyncStore store = new RecordingAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            c.appendAsync("s", new byte[] {1}).block(WAIT);
            store.connected = false;
            AtomicLong before = new AtomicLong(store.fetches.size());
            // a 60 s poll: failed at once, not left waiting (block(WAIT) would time out)
            Throwable e = assertThrows(RuntimeException.class, () -> c.pull("s", "g", 1, Duration.ofSeconds(60)).block(WAIT));
            assertInstanceOf(MessageStoreException.class, e, e.toString());
            assertEquals(before.get(), store.fetches.size(), "failed through the connection state, not a read");
            store.connected = true;
            PullResult r = c.pull("s", "g", 1, Duration.ofSeconds(10)).block(WAIT);
            assertEquals(1, r.messages().size());
        } finally {
            c.dispose();
        }
    }

    /**
     * A fetch that fails while the store says it is disconnected (an outage) does not fail the long polls already
     * waiting: they wait on, as they do when the store goes down with no fetch under way, and get what a later fetch
     * brings once it is reachable again.
     */
    @Test
    void aLongPollWaitingWhenAFetchFailsInAnOutageWaitsOn() throws Exception {
        RecordingAsyncStore store = new RecordingAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            CompletableFuture<PullResult> poll = c.pull("s", "g", 1, Duration.ofSeconds(30)).toFuture();
            // its own first fetch answered (empty) and none under way: the next fetch is the failing one
            AsyncMessageStoreContract.await(() -> c.stats("s", "g").waitingPulls() == 1 && !store.fetches.isEmpty()
                    && store.fetchesInFlight.get() == 0, "the long poll waits, with no fetch under way");
            store.fetchFailure = new java.io.IOException("test: Connection reset");
            store.connected = false; // the store went down: its calls fail, and it says so
            long offset = c.appendAsync("s", new byte[] {1}).block(WAIT); // its notification makes the group fetch
            AsyncMessageStoreContract.await(() -> store.failedFetches.get() > 0, "a fetch failed");
            Thread.sleep(300); // the failure's answer applied on the group's next turn
            assertFalse(poll.isDone(), () -> "the waiting poll was answered: " + poll + " " + (poll.isCompletedExceptionally() ? "" : poll.getNow(null)));
            store.fetchFailure = null; // reachable again: a new pull makes the group fetch
            store.connected = true;
            PullResult other = c.pull("s", "g", 1, Duration.ofMillis(200)).block(WAIT);
            PullResult got = poll.get(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            assertEquals(List.of(offset), got.messages().stream().map(Message::offset).toList());
            assertEquals(PullResult.Status.TIMED_OUT, other.status());
        } finally {
            c.dispose();
        }
    }

    /**
     * A store that tells a failed fetch was its connection's ({@code isConnectionFailure}) while it still says it is
     * connected (a client reports the read the lost connection broke before it reports the connection down): the
     * long polls waiting wait on; and a fetch failure the store does not call so fails them, as before.
     */
    @Test
    void aFetchFailureTheStoreCallsAConnectionFailureLeavesWaitingPollsWaiting() throws Exception {
        RecordingAsyncStore store = new RecordingAsyncStore();
        store.connectionFailure = t -> t instanceof java.io.IOException;
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            CompletableFuture<PullResult> poll = c.pull("s", "g", 1, Duration.ofSeconds(30)).toFuture();
            // its own first fetch answered (empty) and none under way: the next fetch is the failing one
            AsyncMessageStoreContract.await(() -> c.stats("s", "g").waitingPulls() == 1 && !store.fetches.isEmpty()
                    && store.fetchesInFlight.get() == 0, "the long poll waits, with no fetch under way");
            store.fetchFailure = new java.io.IOException("test: Connection reset"); // connected() still says true
            long offset = c.appendAsync("s", new byte[] {1}).block(WAIT); // its notification makes the group fetch
            AsyncMessageStoreContract.await(() -> store.failedFetches.get() > 0, "a fetch failed");
            Thread.sleep(300); // the failure's answer applied on the group's next turn
            assertFalse(poll.isDone(), () -> "the waiting poll was answered: " + poll + " " + (poll.isCompletedExceptionally() ? "" : poll.getNow(null)));
            store.fetchFailure = null;
            PullResult other = c.pull("s", "g", 1, Duration.ofMillis(200)).block(WAIT);
            PullResult got = poll.get(WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            assertEquals(List.of(offset), got.messages().stream().map(Message::offset).toList());
            assertEquals(PullResult.Status.TIMED_OUT, other.status());
        } finally {
            c.dispose();
        }
    }

    /**
     * A nack the failure policy turns into a skip is answered once the store recorded the acknowledgement, as an ack
     * is: answered before, the caller's next pull could reach the store first (a new actor for the pair reads its own
     * pending entries) and get the skipped message again. Both for a message the pair's actor delivered and for one it
     * does not know (delivered by the actor before it, here one whose scheduler group was disposed).
     */
    @Test
    void aSkippingNackIsAnsweredOnceTheStoreRecordedIt() {
        RecordingAsyncStore store = new RecordingAsyncStore();
        store.acknowledgeDelay = Duration.ofMillis(200);
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).failurePolicy(FailurePolicy.skip()).build();
        try {
            c.appendAsync("s", new byte[] {1}).block(WAIT);
            c.appendAsync("s", new byte[] {2}).block(WAIT);
            PullResult first = c.pull("s", "g", 1, Duration.ofSeconds(5)).block(WAIT);
            long known = first.messages().get(0).offset();
            c.nack("s", "g", first.epoch(), known).block(WAIT);
            assertTrue(store.recordedAcks.contains(known), "answered before the store recorded the skip");

            PullResult second = c.pull("s", "g", 1, Duration.ofSeconds(5)).block(WAIT);
            long unknown = second.messages().get(0).offset();
            scheduler.group("cg.g", 1).dispose(); // the next call's actor never delivered it
            c.nack("s", "g", second.epoch(), unknown).block(WAIT);
            assertTrue(store.recordedAcks.contains(unknown), "answered before the store recorded the skip");
        } finally {
            c.dispose();
        }
    }

    private static String asks(RecordingAsyncStore store) {
        List<String> out = new ArrayList<>();
        store.fetches.forEach(f -> out.add(f[0] + "->" + f[1]));
        return out.toString();
    }
}
