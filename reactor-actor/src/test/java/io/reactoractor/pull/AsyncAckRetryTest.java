package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * With an {@link AsyncMessageStore}, acknowledgements the store failed to record are kept and sent again, as the
 * synchronous path commits again at the group's turns. A black-box probe found them dropped: messages consumed
 * (acknowledged after {@code onNext}) while the store's acknowledge calls failed were settled here only, nothing
 * sent them again, and once the group's actor retired the next pull delivered all of them a second time.
 */
class AsyncAckRetryTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("async-ack-retry").threads(2).build();
    private final RecordingAsyncStore store = new RecordingAsyncStore();
    private PullConsumer consumer;

    @AfterEach
    void tearDown() {
        if (consumer != null) {
            consumer.dispose();
        }
        scheduler.dispose();
    }

    @Test
    void acknowledgementsTheStoreFailedToRecordAreSentAgainAndTheGroupWaitsForThemBeforeRetiring()
            throws InterruptedException {
        consumer = PullConsumer.builder(scheduler).asyncStore(store).idleTimeout(Duration.ofMillis(100))
                .ackTimeout(Duration.ofSeconds(60)).build();
        for (int i = 0; i < 5; i++) {
            consumer.appendAsync("s", bytes("m" + i)).block(WAIT);
        }
        store.acknowledgeFails = true;
        List<Long> consumed = consumer.consume("s", "g").take(5).map(d -> d.message().offset()).collectList().block(WAIT);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), consumed);

        // the store stays unreachable for several idle timeouts: the group keeps what it could not record
        Thread.sleep(600);
        assertEquals(0, consumer.retiredGroups(), "a group holding unrecorded acknowledgements does not retire");
        assertEquals(Set.of(), store.recordedAcks);
        int callsWhileFailing = store.acknowledgeCalls.get();
        // the retries back off (10 ms doubling): a store that fails at once is not called in a loop of turns
        assertTrue(callsWhileFailing >= 2 && callsWhileFailing <= 30, "acknowledge calls while failing: " + callsWhileFailing);

        store.acknowledgeFails = false;
        await(() -> store.recordedAcks.size() == 5 && store.recordedCommit.get() == 5,
                () -> "recorded once the store is back: " + store.recordedAcks + ", committed " + store.recordedCommit);
        assertEquals(Set.of(0L, 1L, 2L, 3L, 4L), store.recordedAcks);
        await(() -> consumer.retiredGroups() == 1, () -> "the group retires once everything is recorded");

        // the pair's next actor starts where the store says: nothing consumed comes back
        PullResult next = consumer.pull("s", "g", 10, Duration.ofMillis(300)).block(WAIT);
        assertEquals(List.of(), next.messages().stream().map(Message::offset).collect(Collectors.toList()),
                "acknowledged messages delivered again");
    }

    @Test
    void anAckWhoseCallFailedIsToldSoAndTheAcknowledgementStillReachesTheStore() throws InterruptedException {
        consumer = PullConsumer.builder(scheduler).asyncStore(store).idleTimeout(Duration.ZERO)
                .ackTimeout(Duration.ofSeconds(60)).build();
        for (int i = 0; i < 3; i++) {
            consumer.appendAsync("s", bytes("m" + i)).block(WAIT);
        }
        PullResult r = consumer.pull("s", "g", 3, Duration.ofSeconds(10)).block(WAIT);
        List<Long> offsets = r.messages().stream().map(Message::offset).collect(Collectors.toList());
        assertEquals(List.of(0L, 1L, 2L), offsets);
        store.acknowledgeFails = true;
        Throwable e = assertThrows(RuntimeException.class, () -> consumer.ack("s", "g", r.epoch(), offsets).block(WAIT));
        assertInstanceOf(MessageStoreException.class, e, "the caller learns the store did not record it");
        store.acknowledgeFails = false;
        // not retried by the caller: the consumer sends it again after its back-off
        await(() -> store.recordedAcks.containsAll(offsets) && store.recordedCommit.get() == 3,
                () -> "sent again: " + store.recordedAcks + ", committed " + store.recordedCommit);
        // and a later ack is answered at once with what was recorded
        consumer.appendAsync("s", bytes("m3")).block(WAIT);
        PullResult r2 = consumer.pull("s", "g", 1, Duration.ofSeconds(10)).block(WAIT);
        assertEquals(4L, consumer.ack("s", "g", r2.epoch(), List.of(3L)).block(WAIT));
        assertEquals(Set.copyOf(LongStream.range(0, 4).boxed().toList()), store.recordedAcks);
    }

    private static void await(BooleanSupplier condition, java.util.function.Supplier<String> what)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            Thread.sleep(5);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * An ack waiting for an acknowledge call the store never answers ends when the scheduler is disposed, with a
     * rejection made for its subscriber, through its local hook (PullConsumer's class doc: "acknowledgements waiting
     * for the store" end with RejectedExecutionException, one per subscriber with its Context). It used to wait for
     * the store's answer for good.
     */
    @Test
    void anAckWaitingForAStoreThatNeverAnswersEndsWithItsSubscribersRejectionAtTheSchedulersDisposal()
            throws InterruptedException {
        consumer = PullConsumer.builder(scheduler).asyncStore(store).build();
        consumer.appendAsync("s", bytes("m")).block(WAIT);
        PullResult r = consumer.pull("s", "g", 1, Duration.ZERO, false).block(WAIT);
        assertEquals(1, r.messages().size());
        store.acknowledgeHangs = true;
        List<Throwable> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.function.BiFunction<Throwable, Object, Throwable> local = (e, v) -> {
            seen.add(e);
            return new IllegalStateException("mapped by the local hook", e);
        };
        java.util.concurrent.CompletableFuture<Throwable> ended = new java.util.concurrent.CompletableFuture<>();
        consumer.ack("s", "g", List.of(r.messages().get(0).offset()))
                .contextWrite(reactor.util.context.Context.of("reactor.onRejectedExecution.local", local))
                .subscribe(v -> ended.complete(null), ended::complete);
        await(() -> store.acknowledgeCalls.get() > 0, () -> "the acknowledge call is made");
        assertTrue(!ended.isDone(), "the ack waits for the store");
        scheduler.dispose();
        Throwable error = ended.orTimeout(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS).join();
        assertInstanceOf(IllegalStateException.class, error);
        assertInstanceOf(java.util.concurrent.RejectedExecutionException.class, error.getCause());
        assertEquals(1, seen.size(), "the subscriber's hook saw it once");
    }
}
