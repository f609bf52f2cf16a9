package io.reactoractor.internal.scheduling;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress test of the actor handshake end to end, with the real cell and the real mailbox queue (where
 * {@code MpscChunkedArrayQueueJCStress.DekkerHandshake} models the status word with a plain field): a
 * sender publishes a message and calls {@link ActorCell#signal()} while the carrier holding the actor ends
 * its turn ({@link ActorCell#releaseAfterTurn}: clear {@code SCHEDULED} by CAS, then re-check the mailbox).
 * The actor must end up scheduled, by one side or the other. The ordering that makes it so is the
 * mailbox's volatile slot store before the sender's status read ({@link MpscChunkedArrayQueue}, "The
 * Dekker handshake"). Checked for teeth: with the slot store made a release store and no fence in
 * {@code signal()}, the lost wake-up ({@code 0, 1}) shows up in 4 of the 8 quick configurations.
 */
public final class SignalJCStress {

    private SignalJCStress() {
    }

    /** An engine that is never started: scheduling a cell only queues it in the engine's arrivals. */
    private static final SchedulerEngine ENGINE = new SchedulerEngine(new SchedulerEngine.Config("jcstress", 1,
            5_000_000L, 500_000L, true, 50_000_000L, 0, SchedulerMetrics.NONE));
    private static final SchedulingGroup GROUP = ENGINE.group("signal", 1);

    /** A cell whose work is its mailbox, as an actor's is. */
    static final class MailboxCell extends ActorCell {
        final MpscChunkedArrayQueue<Object> mailbox = new MpscChunkedArrayQueue<>(2);

        MailboxCell() {
            super(ENGINE, GROUP, "signal/cell", 1);
        }

        @Override
        protected boolean hasWork() {
            return !mailbox.isEmpty();
        }

        @Override
        protected void runTurn(Turn turn) {
            throw new UnsupportedOperationException("never run");
        }

        @Override
        protected void drainTerminated() {
            while (mailbox.poll() != null) {
                // a terminated actor's messages are discarded (terminate() drains until none is left)
            }
        }
    }

    @JCStressTest
    @Description("a sender publishes a message and signals while the carrier holding the actor ends its turn "
            + "(clears SCHEDULED, then re-checks the mailbox): the actor must stay or become scheduled")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "scheduled, the message waiting for its turn")
    @Outcome(id = "0, 1", expect = FORBIDDEN, desc = "lost wake-up: the message waits and nobody scheduled the actor")
    @Outcome(id = {"1, 0", "0, 0"}, expect = FORBIDDEN, desc = "the message vanished")
    @State
    public static class SendVersusTurnEnd {
        final MailboxCell cell = new MailboxCell();

        public SendVersusTurnEnd() {
            // a carrier holds the actor, its turn running: scheduled, then taken out of the run queue (what
            // is taken with it, other states' cells, is likewise held by nobody's carrier: only the bits count)
            cell.signal();
            drainRunQueue();
        }

        @Actor
        public void sender() {
            cell.mailbox.offer("m");
            cell.signal();
        }

        @Actor
        public void turnEnds() {
            cell.releaseAfterTurn();
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r1 = cell.isScheduled() ? 1 : 0;
            r.r2 = cell.mailbox.isEmpty() ? 0 : 1;
            drainRunQueue(); // what the signals queued: nobody runs this engine
            cell.terminate(); // leaves its group's registry
        }
    }

    private static void drainRunQueue() {
        while (ENGINE.runQueue().take(RunQueue.OUTSIDE, 0L) != null) {
            // taken: as a carrier would
        }
    }
}
