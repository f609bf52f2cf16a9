package io.reactoractor.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The {@code (subject, group)} actor on a store whose fetches may be pipelined
 * ({@link AsyncMessageStore#pipelinedFetches()}, e.g. Redis): more than one fetch outstanding, their
 * answers applied in the order the fetches were issued whatever order they come back in; and each
 * consumer's ack going out in a call of its own while acknowledge slots are free.
 */
class AsyncStorePipelineTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("pipeline-test").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
    }

    @Test
    void fetchesArePipelinedAndTheirAnswersAppliedInTheOrderIssued() throws InterruptedException {
        PipelinedAsyncStore store = new PipelinedAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            for (int i = 0; i < 5_000; i++) {
                c.appendAsync("s", new byte[] {1}).block(WAIT);
            }
            store.hold = true;
            AtomicReference<PullResult> first = new AtomicReference<>();
            c.pull("s", "g", 100, Duration.ofSeconds(30)).subscribe(first::set);
            AsyncMessageStoreContract.await(() -> store.held.size() == 1, "the first fetch");
            store.release(store.held.peek());
            AsyncMessageStoreContract.await(() -> first.get() != null, "the first pull answered");
            assertEquals(LongStream.range(0, 100).boxed().toList(), offsets(first.get()));
            // the pull took what the first fetch brought: read-ahead, two fetches outstanding at once
            AsyncMessageStoreContract.await(() -> store.held.size() == 2, "two read-ahead fetches outstanding: "
                    + store.held.size());
            assertEquals(2, store.maxOutstanding.get());
            List<PipelinedAsyncStore.Held> two = new ArrayList<>(store.held);
            store.hold = false;
            store.release(two.get(1)); // the later fetch answers first
            store.release(two.get(0));
            int expected = two.get(0).messages().size() + two.get(1).messages().size();
            List<Long> got = new ArrayList<>();
            while (got.size() < expected) {
                got.addAll(offsets(c.pull("s", "g", expected - got.size(), Duration.ofSeconds(10)).block(WAIT)));
            }
            // handed out in offset order: the earlier fetch's messages first
            assertEquals(LongStream.range(100, 100 + expected).boxed().toList(), got);
        } finally {
            c.dispose();
        }
    }

    @Test
    void aStoreThatReadsFromTheCallersCursorHasOneFetchOutstanding() {
        PipelinedAsyncStore store = new PipelinedAsyncStore();
        store.pipelined = false;
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            for (int i = 0; i < 5_000; i++) {
                c.appendAsync("s", new byte[] {1}).block(WAIT);
            }
            for (int i = 0; i < 20; i++) {
                PullResult r = c.pull("s", "g", 100, Duration.ofSeconds(10)).block(WAIT);
                c.ack("s", "g", offsets(r)).block(WAIT);
            }
            assertEquals(1, store.maxOutstanding.get());
        } finally {
            c.dispose();
        }
    }

    @Test
    void eachConsumersAckGoesOutInACallOfItsOwnWhileSlotsAreFree() {
        PipelinedAsyncStore store = new PipelinedAsyncStore();
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            long a = c.appendAsync("s", new byte[] {1}).block(WAIT);
            long b = c.appendAsync("s", new byte[] {2}).block(WAIT);
            AtomicReference<Mono<Long>> ackA = new AtomicReference<>();
            AtomicReference<Mono<Long>> ackB = new AtomicReference<>();
            // two consumers' acks handled in one turn of the actor (posted while it answers the pull)
            c.pull("s", "g", 2, Duration.ofSeconds(10))
                    .doOnNext(r -> {
                        ackA.set(c.ack("s", "g", List.of(a)).cache());
                        ackA.get().subscribe();
                        ackB.set(c.ack("s", "g", List.of(b)).cache());
                        ackB.get().subscribe();
                    })
                    .block(WAIT);
            ackA.get().block(WAIT);
            ackB.get().block(WAIT);
            List<long[]> calls = store.acks.stream().filter(o -> o.length > 0).toList();
            assertFalse(calls.stream().anyMatch(o -> o.length > 1), "one call per ack: "
                    + calls.stream().map(Arrays::toString).toList());
            assertTrue(calls.stream().anyMatch(o -> o[0] == a) && calls.stream().anyMatch(o -> o[0] == b),
                    calls.stream().map(Arrays::toString).toList().toString());
        } finally {
            c.dispose();
        }
    }

    private static List<Long> offsets(PullResult r) {
        return r.messages().stream().map(Message::offset).toList();
    }

    @Test
    void aPullOnceWaitsForAHungFetchOnlyBriefly() {
        PipelinedAsyncStore store = new PipelinedAsyncStore();
        store.hold = true; // every fetch stays unanswered: a hung store
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).build();
        try {
            long t0 = System.nanoTime();
            PullResult r = c.pullOnce("s", "g", 1).block(Duration.ofSeconds(10));
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(PullResult.Status.EMPTY, r.status(), "answered, not held by the fetch");
            assertTrue(tookMs < 5_000, "well before a store's command timeout: " + tookMs + " ms");
        } finally {
            store.held.forEach(h -> h.answer().tryEmitValue(List.of()));
            c.dispose();
        }
    }
}
