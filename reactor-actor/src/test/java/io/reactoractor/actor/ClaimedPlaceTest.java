package io.reactoractor.actor;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import io.reactoractor.internal.mailbox.StalledProducer;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * Messages accepted before a completion or a graceful close are processed, also when they wait behind a
 * place in the mailbox that a slower producer claimed and has not written yet. The mailbox's
 * {@code isEmpty()} answers "empty" then (its class doc: safe for scheduling, because that producer signals
 * the actor once written), and the completion check and both graceful closes read it as "nothing left": they
 * ended the actor and the messages behind the place, told and answered {@code true} before the completion or
 * the close, went to the discard hook once the place was written (a black-box probe: an a -> b -> c chain
 * completed while three producers told and sent, 2 of 5 runs of 100 rounds on a loaded machine). Here the
 * slow producer is stopped at that point ({@link StalledProducer}), as the operating system would stop it:
 * each test fails on the old code.
 */
class ClaimedPlaceTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("claimed-place").threads(2).build();

    @AfterEach
    void tearDown() {
        scheduler.dispose();
    }

    @Test
    void aCompletionWaitsForAClaimedPlaceAndProcessesWhatWasToldBehindIt() throws Exception {
        check(a -> {
            a.complete();
            return null;
        }, true);
    }

    @Test
    void aGroupsGracefulCloseWaitsForAClaimedPlaceAndProcessesWhatWasToldBehindIt() throws Exception {
        check(null, false);
    }

    @Test
    void theSchedulersGracefulCloseWaitsForAClaimedPlaceAndProcessesWhatWasToldBehindIt() throws Exception {
        ActorScheduler s = ActorScheduler.builder().name("claimed-place-close").threads(2).build();
        try {
            Actor<Integer, Integer> a = Actor.identity(s, 16);
            Recorder rec = Recorder.subscribe(a);
            StalledProducer stalled = claimWithCredit(a);
            assertThat(a.tell(1)).isTrue();
            assertThat(a.tell(2)).isTrue();
            rec.awaitTurnsOver(a);
            CompletableFuture<Void> closed = s.disposeGracefully().toFuture();
            TimeUnit.MILLISECONDS.sleep(200); // the close would end now (it polls every millisecond)
            assertThat(closed).as("the close waits for the claimed place").isNotDone();
            assertThat(rec.discarded).isEmpty();
            writeAndSignal(a, stalled, 0);
            closed.get(30, TimeUnit.SECONDS);
            rec.awaitTerminal();
            assertThat(rec.values).containsExactly(0, 1, 2);
            assertThat(rec.discarded).isEmpty();
        } finally {
            s.dispose();
        }
    }

    /** {@code ending} ends the actor (null: its group's graceful close); {@code completes}: onComplete expected. */
    private void check(Function<Actor<Integer, Integer>, Void> ending, boolean completes) throws Exception {
        ActorGroup g = scheduler.group("g", 1);
        Actor<Integer, Integer> a = Actor.identity(g, 16);
        Recorder rec = Recorder.subscribe(a);
        StalledProducer stalled = claimWithCredit(a);
        assertThat(a.tell(1)).isTrue(); // accepted, behind the claimed place
        assertThat(a.tell(2)).isTrue();
        rec.awaitTurnsOver(a);
        CompletableFuture<Void> closed = null;
        if (ending != null) {
            ending.apply(a);
        } else {
            closed = g.disposeGracefully().toFuture();
        }
        TimeUnit.MILLISECONDS.sleep(200); // a completion or a close would have ended the actor by now
        assertThat(rec.terminal.get()).as("no terminal signal while the place is claimed").isNull();
        assertThat(rec.discarded).isEmpty();
        if (closed != null) {
            assertThat(closed).as("the close waits for the claimed place").isNotDone();
        }
        writeAndSignal(a, stalled, 0);
        rec.awaitTerminal();
        if (closed != null) {
            closed.get(30, TimeUnit.SECONDS);
        }
        assertThat(rec.values).containsExactly(0, 1, 2);
        assertThat(rec.discarded).isEmpty();
        if (completes) {
            assertThat(rec.terminal.get()).isEqualTo("complete");
        }
    }

    /** Takes a credit and claims the next place, as a {@code tell} stopped before its store would have. */
    private static StalledProducer claimWithCredit(Actor<Integer, Integer> a) {
        ActorTurnLoop<Integer, Integer> loop = loopOf(a);
        assertThat(loop.credits.tryAcquire()).isTrue();
        return StalledProducer.claim(loop.mailbox);
    }

    /** The stopped producer goes on: writes its place, then signals the actor, as {@code tell} does. */
    private static void writeAndSignal(Actor<Integer, Integer> a, StalledProducer stalled, int message) {
        ActorTurnLoop<Integer, Integer> loop = loopOf(a);
        stalled.write(message);
        loop.cell.signal();
    }

    @SuppressWarnings("unchecked")
    private static ActorTurnLoop<Integer, Integer> loopOf(Actor<Integer, Integer> a) {
        try {
            Field f = Actor.class.getDeclaredField("loop");
            f.setAccessible(true);
            return (ActorTurnLoop<Integer, Integer>) f.get(a);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static final class Recorder {
        final List<Integer> values = new CopyOnWriteArrayList<>();
        final List<Object> discarded = new CopyOnWriteArrayList<>();
        final AtomicReference<String> terminal = new AtomicReference<>();

        static Recorder subscribe(Actor<Integer, Integer> a) {
            Recorder r = new Recorder();
            Flux.from(a).doOnDiscard(Object.class, r.discarded::add)
                    .subscribe(r.values::add, e -> r.terminal.set("error " + e), () -> r.terminal.set("complete"));
            return r;
        }

        /** Waits until the actor's turns for the told messages are over (it found the claimed place "empty"). */
        void awaitTurnsOver(Actor<Integer, Integer> a) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
                    .until(() -> !loopOf(a).cell.isScheduled());
            assertThat(values).isEmpty(); // nothing passes the claimed place
        }

        void awaitTerminal() {
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> terminal.get() != null);
        }
    }
}
