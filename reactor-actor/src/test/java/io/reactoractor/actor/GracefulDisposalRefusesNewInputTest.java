package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import io.reactoractor.SchedulerHold;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * A graceful disposal refuses new work in every form, as Reactor's schedulers reject new tasks once theirs began
 * ({@code ActorScheduler.disposeGracefully()}, the Actor class doc's Termination section,
 * {@code ActorOperators.publishOn}): {@code tell} answers {@code false}, {@code send} and
 * {@code ActorContext.schedule} are rejected, an actor's upstreams get no new demand, an element reaching the fair
 * {@code publishOn} is rejected; the work held when it began still runs. A black-box probe found the disposal
 * unbounded under live traffic: actors and the fair {@code publishOn} took new input while closing, so it ended only
 * when every producer paused for about a millisecond (a never-pausing producer held it open for good). The upstream
 * cases here are producers that never pause (each request answered on the requesting thread), so without the change
 * their disposal never ends.
 */
class GracefulDisposalRefusesNewInputTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("graceful-input").threads(2).build();

    @AfterEach
    void tearDown() {
        assertTrue(ActorTestSupport.disposeBounded(scheduler));
    }

    /**
     * "A chain of actors drains what its stages held" also when only their group closes gracefully (found by a
     * black-box probe): the group's quiescence check walked its actors one by one and could see the first stage
     * suspended for want of demand, then the second idle after it had asked the first for more, and dispose the
     * group with the first stage's messages still in its mailbox (discarded, though {@code tell} had taken them).
     */
    @Test
    void aGroupsGracefulDisposalDrainsAChainOfItsActors() throws Exception {
        for (int round = 0; round < 200; round++) {
            ActorGroup g = scheduler.group("chain-" + round, 1);
            Actor<Integer, Integer> first = Actor.<Integer, Integer>builder(g).capacity(64).behaviour((m, ctx) -> {
                ctx.emit(2 * m);
                ctx.emit(2 * m + 1);
                return true;
            }).build();
            List<Integer> processed = new CopyOnWriteArrayList<>();
            Actor<Integer, Integer> second = Actor.<Integer, Integer>builder(g).capacity(1).behaviour((m, ctx) -> {
                long until = System.nanoTime() + 20_000; // slow: the drain spans several of the 1 ms checks
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                processed.add(m);
                return true;
            }).build();
            List<Object> discarded = new CopyOnWriteArrayList<>();
            Flux.from(second).doOnDiscard(Object.class, discarded::add).subscribe(x -> { }, e -> { });
            first.subscribe(second);
            for (int i = 0; i < 40; i++) {
                assertTrue(first.tell(i));
            }
            g.disposeGracefully().block(Duration.ofSeconds(30));
            assertEquals(80, processed.size(), "round " + round + ": every message the chain held was processed; "
                    + "discarded " + discarded);
        }
    }

    @Test
    void tellIsRefusedAndSendRejectedWhileTheSchedulerCloses() throws InterruptedException {
        CountDownLatch release = SchedulerHold.holdOpen(scheduler);
        Actor<Integer, Integer> a = Actor.identity(scheduler, 8);
        ActorTestSupport.ValueRecorder<Integer> rec = new ActorTestSupport.ValueRecorder<>();
        Flux.from(a).subscribe(rec);
        assertTrue(a.tell(1));
        awaitTrue(() -> rec.received.size() == 1, "message 1 processed");
        long rejectedBefore = scheduler.stats().rejectedTasks();

        CompletableFuture<Void> closed = scheduler.disposeGracefully().toFuture();

        assertFalse(a.tell(2), "a message told while the scheduler closes is refused, not taken");
        assertThrows(RejectedExecutionException.class, () -> a.send(3).block(Duration.ofSeconds(10)));
        assertEquals(rejectedBefore + 2, scheduler.stats().rejectedTasks(), "the refused tell and send are rejections");
        assertFalse(closed.isDone(), "held open by the blocking task");
        release.countDown();
        closed.orTimeout(10, TimeUnit.SECONDS).join();
        assertTrue(rec.awaitTerminal(10));
        assertEquals(List.of(1), rec.received);
        assertInstanceOf(RejectedExecutionException.class, rec.error.get());
    }

    @Test
    void aSendWaitingForACreditWhenClosingBeginsFailsInsteadOfBeingTaken() throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler).capacity(1).behaviour((m, ctx) -> {
            if (m == 1) {
                entered.countDown();
                awaitQuietly(gate);
            }
            ctx.emit(m);
            return true;
        }).build();
        ActorTestSupport.ValueRecorder<Integer> rec = new ActorTestSupport.ValueRecorder<>();
        Flux.from(a).subscribe(rec);
        assertTrue(a.tell(1)); // holds the only credit until the behaviour consumed it
        assertTrue(entered.await(10, TimeUnit.SECONDS));
        CompletableFuture<Void> sent = a.send(2).toFuture(); // waits for that credit
        CompletableFuture<Void> closed = scheduler.disposeGracefully().toFuture();
        assertFalse(sent.isDone());

        gate.countDown(); // message 1 leaves: its credit would have admitted the waiting send

        Throwable sendError = awaitFailure(sent);
        assertInstanceOf(RejectedExecutionException.class, sendError);
        closed.orTimeout(10, TimeUnit.SECONDS).join();
        assertTrue(rec.awaitTerminal(10));
        assertEquals(List.of(1), rec.received, "the refused send's message was never taken");
        assertInstanceOf(RejectedExecutionException.class, rec.error.get());
    }

    @Test
    void anActorsUpstreamGetsNoNewDemandWhileClosingAndNothingItSentIsLost() throws InterruptedException {
        AtomicLong emitted = new AtomicLong();
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        Actor<Long, Long> a = Actor.identity(scheduler, 16);
        InOrderCounter rec = new InOrderCounter();
        Flux.from(a).subscribe(rec);
        neverPausingSource(emitted).doOnCancel(() -> upstreamCancelled.set(true)).subscribe(a);
        awaitTrue(() -> rec.count.get() > 1_000, "traffic flows");

        // without the change the upstream was granted demand again at every turn, so this never ended
        scheduler.disposeGracefully().block(Duration.ofSeconds(30));

        assertTrue(rec.awaitTerminal());
        assertInstanceOf(RejectedExecutionException.class, rec.error.get());
        assertNull(rec.outOfOrder.get());
        assertEquals(emitted.get(), rec.count.get(), "every element the upstream sent was processed");
        assertTrue(upstreamCancelled.get(), "the upstream is cancelled when the scheduler ends");
    }

    @Test
    void theFairPublishOnRejectsTheFirstElementArrivingWhileClosing() throws InterruptedException {
        List<Object> discarded = new CopyOnWriteArrayList<>();
        AtomicLong emitted = new AtomicLong();
        InOrderCounter rec = publishOnUntilClosed(neverPausingSource(emitted), discarded);

        assertEquals(List.of(rec.count.get()), discarded,
                "the one element that arrived while closing is rejected (the next in order); the ones before it "
                        + "were delivered");
        assertEquals(emitted.get(), rec.count.get() + 1);
    }

    @Test
    void anAsyncFusedSourceSignallingWhileClosingIsCancelledAndCleared() throws InterruptedException {
        List<Object> discarded = new CopyOnWriteArrayList<>();
        AtomicLong emitted = new AtomicLong();
        // limitRate fuses with the operator in ASYNC mode: its queue is the only buffer, polled by the operator
        InOrderCounter rec = publishOnUntilClosed(neverPausingSource(emitted).limitRate(8), discarded);

        // as Reactor's publishOn rejects a fused source's signal: the source cancelled, its queue to the discard
        // hook; every element is delivered or discarded, in order
        for (int i = 0; i < discarded.size(); i++) {
            assertEquals(rec.count.get() + i, discarded.get(i), "discarded in order after the delivered ones");
        }
        assertEquals(emitted.get(), rec.count.get() + discarded.size(), "every element delivered or discarded");
    }

    /**
     * Runs {@code source} through the fair {@code publishOn} (prefetch 8) until traffic flows, then disposes the
     * scheduler gracefully (without the change this never ended); the stream has ended with the rejection, its
     * values in order.
     */
    private InOrderCounter publishOnUntilClosed(Flux<Long> source, List<Object> discarded)
            throws InterruptedException {
        InOrderCounter rec = new InOrderCounter();
        source.transform(ActorOperators.publishOn(scheduler, 8)).doOnDiscard(Object.class, discarded::add)
                .subscribe(rec);
        awaitTrue(() -> rec.count.get() > 1_000, "traffic flows");

        scheduler.disposeGracefully().block(Duration.ofSeconds(30));

        assertTrue(rec.awaitTerminal());
        assertInstanceOf(RejectedExecutionException.class, rec.error.get());
        assertNull(rec.outOfOrder.get());
        return rec;
    }

    @Test
    void aTimerArmedWhileClosingIsRejectedAndOneArmedBeforeRuns() throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        Actor<Integer, Integer> a = Actor.<Integer, Integer>builder(scheduler).capacity(8).behaviour((m, ctx) -> {
            if (m == 0) {
                ctx.schedule(Duration.ofMillis(20), () -> ctx.emit(100)); // before the disposal: it runs
                entered.countDown();
                awaitQuietly(gate);
                ctx.emit(m);
                return true;
            }
            try {
                ctx.schedule(Duration.ZERO, () -> ctx.emit(200));
                ctx.emit(m);
            } catch (RejectedExecutionException e) {
                ctx.emit(-m);
            }
            return true;
        }).build();
        ActorTestSupport.ValueRecorder<Integer> rec = new ActorTestSupport.ValueRecorder<>();
        Flux.from(a).subscribe(rec);
        assertTrue(a.tell(0));
        assertTrue(a.tell(1)); // queued before the disposal: it runs, and arms its timer while closing
        assertTrue(entered.await(10, TimeUnit.SECONDS));
        CompletableFuture<Void> closed = scheduler.disposeGracefully().toFuture();
        gate.countDown();

        closed.orTimeout(10, TimeUnit.SECONDS).join();
        assertTrue(rec.awaitTerminal(10));
        assertEquals(List.of(0, -1, 100), rec.received);
        assertInstanceOf(RejectedExecutionException.class, rec.error.get());
    }

    @Test
    void aClosingGroupRefusesNewInputOfItsOwnActorsOnly() throws InterruptedException {
        ActorGroup closing = scheduler.group("closing", 1);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        Actor<Integer, Integer> busy = Actor.<Integer, Integer>builder(closing).capacity(8).behaviour((m, ctx) -> {
            entered.countDown();
            awaitQuietly(gate); // keeps the group's disposal open
            ctx.emit(m);
            return true;
        }).build();
        Actor<Integer, Integer> inGroup = Actor.identity(closing, 8);
        Actor<Integer, Integer> elsewhere = Actor.identity(scheduler, 8);
        ActorTestSupport.ValueRecorder<Integer> busyRec = new ActorTestSupport.ValueRecorder<>();
        ActorTestSupport.ValueRecorder<Integer> inGroupRec = new ActorTestSupport.ValueRecorder<>();
        ActorTestSupport.ValueRecorder<Integer> elsewhereRec = new ActorTestSupport.ValueRecorder<>();
        Flux.from(busy).subscribe(busyRec);
        Flux.from(inGroup).subscribe(inGroupRec);
        Flux.from(elsewhere).subscribe(elsewhereRec);
        assertTrue(busy.tell(1));
        assertTrue(entered.await(10, TimeUnit.SECONDS));

        CompletableFuture<Void> closed = closing.disposeGracefully().toFuture();

        assertFalse(inGroup.tell(2), "the closing group's actor takes no new message");
        assertThrows(RejectedExecutionException.class, () -> inGroup.send(3).block(Duration.ofSeconds(10)));
        assertTrue(elsewhere.tell(4), "an actor of another group is not closing");
        gate.countDown();
        closed.orTimeout(10, TimeUnit.SECONDS).join();
        assertTrue(busyRec.awaitTerminal(10));
        assertEquals(List.of(1), busyRec.received);
        assertTrue(inGroupRec.awaitTerminal(10));
        assertEquals(List.of(), inGroupRec.received);
        awaitTrue(() -> elsewhereRec.received.equals(List.of(4)), "the other group's actor runs on");
        assertFalse(scheduler.isDisposed());
    }

    @Test
    void aChainOfActorsDrainsWhatItsStagesHeldWhenClosingBegan() throws InterruptedException {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        Actor<Integer, Integer> a = Actor.identity(scheduler, 256);
        Actor<Integer, Integer> b = Actor.<Integer, Integer>builder(scheduler).capacity(8).behaviour((m, ctx) -> {
            if (m == 0) {
                entered.countDown();
                awaitQuietly(gate);
            }
            ctx.emit(m);
            return true;
        }).build();
        ActorTestSupport.ValueRecorder<Integer> rec = new ActorTestSupport.ValueRecorder<>();
        Flux.from(b).subscribe(rec);
        Flux.from(a).map(m -> m).subscribe(b); // b's upstream is the actor a, through an operator
        for (int i = 0; i < 200; i++) {
            assertTrue(a.tell(i));
        }
        assertTrue(entered.await(10, TimeUnit.SECONDS)); // b holds 0 (and up to 7 more); a holds the rest

        CompletableFuture<Void> closed = scheduler.disposeGracefully().toFuture();
        gate.countDown();

        closed.orTimeout(30, TimeUnit.SECONDS).join();
        assertTrue(rec.awaitTerminal(10));
        // b withheld demand from a at first: a's held messages were discarded at the end, though held work runs
        assertEquals(200, rec.received.size(), "what a held went on through b");
        assertInstanceOf(RejectedExecutionException.class, rec.error.get());
    }

    @Test
    void aClosingGroupsActorGivesNoNewDemandToAnActorOfAnOpenGroup() throws InterruptedException {
        ActorGroup closing = scheduler.group("closing", 1);
        Actor<Long, Long> feeder = Actor.identity(scheduler, 16); // default group: stays open
        Actor<Long, Long> fed = Actor.identity(closing, 16);
        AtomicLong emitted = new AtomicLong();
        InOrderCounter rec = new InOrderCounter();
        Flux.from(fed).subscribe(rec);
        Flux.from(feeder).subscribe(fed);
        neverPausingSource(emitted).subscribe(feeder);
        awaitTrue(() -> rec.count.get() > 1_000, "traffic flows");

        // the feeder is not closing: what it emits is new input for the closing group, so it gets no new demand
        closing.disposeGracefully().block(Duration.ofSeconds(30));

        assertTrue(rec.awaitTerminal());
        assertInstanceOf(RejectedExecutionException.class, rec.error.get());
        assertNull(rec.outOfOrder.get());
        assertFalse(scheduler.isDisposed());
    }

    // ------------------------------------------------------------------ helpers

    /**
     * A source that never pauses: each request is answered at once, on the requesting thread (the actor's
     * carrier when it hands out credits, the operator's when it replenishes), so the scheduler never idles while
     * it is subscribed. Counts what it sent.
     */
    private static Flux<Long> neverPausingSource(AtomicLong emitted) {
        return Flux.<Long, Long>generate(() -> 0L, (n, sink) -> {
            sink.next(n);
            return n + 1;
        }).doOnNext(x -> emitted.incrementAndGet()).hide(); // hide: not fused, so the elements arrive as onNext
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Throwable awaitFailure(CompletableFuture<Void> f) {
        try {
            f.get(10, TimeUnit.SECONDS);
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            throw new AssertionError("the send neither failed nor completed: " + e, e);
        }
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting: " + what);
            Thread.onSpinWait();
        }
    }

    /** Counts values that must be 0, 1, 2, ... in order (many of them: no list), and records the terminal signal. */
    private static final class InOrderCounter extends BaseSubscriber<Long> {
        final AtomicLong count = new AtomicLong();
        final AtomicReference<String> outOfOrder = new AtomicReference<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        private final CountDownLatch ended = new CountDownLatch(1);

        @Override
        protected void hookOnNext(Long value) {
            long expected = count.get();
            if (value != expected) {
                outOfOrder.compareAndSet(null, "got " + value + " where " + expected + " was next");
            }
            count.lazySet(expected + 1); // one writer: the stream's signals are serialised
        }

        @Override
        protected void hookOnComplete() {
            ended.countDown();
        }

        @Override
        protected void hookOnError(Throwable t) {
            error.set(t);
            ended.countDown();
        }

        boolean awaitTerminal() throws InterruptedException {
            return ended.await(10, TimeUnit.SECONDS);
        }
    }
}
