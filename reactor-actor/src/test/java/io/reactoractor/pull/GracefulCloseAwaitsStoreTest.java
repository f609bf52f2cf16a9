package io.reactoractor.pull;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * A graceful close of the scheduler, or of the pair's scheduling group {@code cg.<group>}, with an asynchronous
 * store that is slow to answer: the acknowledgements handed in before the close are sent, recorded and answered
 * before it ends (PullConsumer's class doc: acknowledgements go on while it closes; Delivery's: a graceful close
 * runs queued acks). A black-box probe on Redis (DEBUG SLEEP) found the close ended within milliseconds while the
 * group's actor, idle between a call and its answer, waited for the store: every ack failed with
 * RejectedExecutionException and most of the messages came again.
 */
class GracefulCloseAwaitsStoreTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final ActorScheduler scheduler = ActorScheduler.builder().name("graceful-store").threads(2).build();
    private final RecordingAsyncStore store = new RecordingAsyncStore();
    private PullConsumer consumer;

    @AfterEach
    void tearDown() {
        if (consumer != null) {
            consumer.dispose();
        }
        scheduler.dispose();
    }

    /** 20 messages pulled by group {@code g}, then acknowledged one by one (each ack subscribed) with the store slow. */
    private Map<Long, String> pullThenAckWithASlowStore() {
        consumer = PullConsumer.builder(scheduler).asyncStore(store).ackTimeout(Duration.ofSeconds(60)).build();
        for (int i = 0; i < 20; i++) {
            consumer.appendAsync("s", ("m" + i).getBytes(StandardCharsets.UTF_8)).block(WAIT);
        }
        List<Message> got = new ArrayList<>();
        String epoch = null;
        while (got.size() < 20) {
            PullResult r = consumer.pull("s", "g", 100, Duration.ofSeconds(5)).block(WAIT);
            got.addAll(r.messages());
            epoch = r.epoch();
        }
        store.acknowledgeDelay = Duration.ofMillis(200);
        Map<Long, String> outcome = new ConcurrentHashMap<>();
        for (Message m : got) {
            consumer.ack("s", "g", epoch, List.of(m.offset())).subscribe(v -> { },
                    e -> outcome.put(m.offset(), e.getClass().getSimpleName()),
                    () -> outcome.put(m.offset(), "ok"));
        }
        // the group's actor has taken the acks and made its calls (at most 4 at a time): it now waits for the store
        Awaitility.await().atMost(WAIT).until(() -> store.acknowledgeCalls.get() > 0);
        return outcome;
    }

    private void assertEveryAckRecordedAndAnswered(Map<Long, String> outcome) {
        Awaitility.await().atMost(WAIT).until(() -> outcome.size() == 20);
        assertThat(outcome.values()).as("each ack's answer").containsOnly("ok");
        assertThat(store.recordedAcks).containsExactlyInAnyOrderElementsOf(
                LongStream.range(0, 20).boxed().collect(Collectors.toList()));
    }

    @Test
    void theSchedulersGracefulCloseWaitsForTheAcknowledgementsTheStoreHasNotAnsweredYet() {
        Map<Long, String> outcome = pullThenAckWithASlowStore();

        scheduler.disposeGracefully().block(WAIT);

        assertThat(store.recordedAcks).as("recorded by the time the close ended").hasSize(20);
        assertEveryAckRecordedAndAnswered(outcome);
    }

    @Test
    void theGroupsGracefulCloseWaitsForTheAcknowledgementsTheStoreHasNotAnsweredYet() {
        Map<Long, String> outcome = pullThenAckWithASlowStore();
        ActorGroup cg = scheduler.groups().stream().filter(g -> g.name().equals("cg.g")).findFirst().orElseThrow();

        cg.disposeGracefully().block(WAIT);

        assertThat(store.recordedAcks).as("recorded by the time the close ended").hasSize(20);
        assertEveryAckRecordedAndAnswered(outcome);
        // the pair's next actor (a new group) starts where the store says: nothing acknowledged comes again
        PullResult next = consumer.pull("s", "g", 100, Duration.ofMillis(200)).block(WAIT);
        assertThat(next.messages()).isEmpty();
    }

    @Test
    void aStoreThatNeverAnswersHoldsTheCloseUntilItsTimeoutThenDisposeFailsTheAck() {
        consumer = PullConsumer.builder(scheduler).asyncStore(store).ackTimeout(Duration.ofSeconds(60)).build();
        consumer.appendAsync("s", "m".getBytes(StandardCharsets.UTF_8)).block(WAIT);
        PullResult r = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(WAIT);
        store.acknowledgeHangs = true;
        Map<Long, String> outcome = new ConcurrentHashMap<>();
        consumer.ack("s", "g", r.epoch(), List.of(0L)).subscribe(v -> { },
                e -> outcome.put(0L, e.getClass().getSimpleName()), () -> outcome.put(0L, "ok"));
        Awaitility.await().atMost(WAIT).until(() -> store.acknowledgeCalls.get() > 0);

        // as with any graceful disposal of work that does not end: bounded by a timeout, then disposed
        Mono<Void> close = scheduler.disposeGracefully();
        assertThat(close.timeout(Duration.ofMillis(300)).then(Mono.just("ended"))
                .onErrorReturn(java.util.concurrent.TimeoutException.class, "timed out").block(WAIT))
                .isEqualTo("timed out");
        assertThat(scheduler.isDisposed()).isTrue();
        scheduler.dispose();

        Awaitility.await().atMost(WAIT).until(() -> outcome.containsKey(0L));
        assertThat(outcome.get(0L)).isNotEqualTo("ok");
    }

    /**
     * The store fails the acknowledgements while the close begins, then recovers: the pair sends them again
     * after its back-off (its timer must survive the close's start, which removes the timers it does not wait
     * for) and the close ends once the store recorded them. A probe found the retry gone and the close open
     * for good.
     */
    @Test
    void theSchedulersGracefulCloseEndsOnceAStoreThatFailedForAWhileRecordedTheAcknowledgements() {
        consumer = PullConsumer.builder(scheduler).asyncStore(store).ackTimeout(Duration.ofSeconds(60)).build();
        for (int i = 0; i < 10; i++) {
            consumer.appendAsync("s", ("m" + i).getBytes(StandardCharsets.UTF_8)).block(WAIT);
        }
        List<Message> got = new ArrayList<>();
        String epoch = null;
        while (got.size() < 10) {
            PullResult r = consumer.pull("s", "g", 100, Duration.ofSeconds(5)).block(WAIT);
            got.addAll(r.messages());
            epoch = r.epoch();
        }
        store.acknowledgeFails = true;
        for (Message m : got) {
            consumer.ack("s", "g", epoch, List.of(m.offset())).onErrorResume(e -> Mono.empty()).subscribe();
        }
        Awaitility.await().atMost(WAIT).until(() -> store.acknowledgeCalls.get() > 0);
        java.util.concurrent.CompletableFuture<Void> closed = scheduler.disposeGracefully().toFuture();
        Awaitility.await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> !closed.isDone());

        store.acknowledgeFails = false;

        Awaitility.await().atMost(WAIT).until(closed::isDone);
        assertThat(store.recordedAcks).containsExactlyInAnyOrderElementsOf(
                LongStream.range(0, 10).boxed().collect(Collectors.toList()));
    }
}
