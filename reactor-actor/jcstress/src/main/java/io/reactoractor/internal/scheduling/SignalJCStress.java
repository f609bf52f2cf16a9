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
 * The actor must end up scheduled, by one side or the other. The sender publishes as the actors' mailboxes
 * do, with {@link MpscChunkedArrayQueue#offerRelease}; the ordering that makes the handshake hold is the
 * full fence {@code signal()} takes before the status read it decides on ({@link MpscChunkedArrayQueue},
 * "The Dekker handshake"). The other two tests are the same handshake against a resume (the actor
 * suspended) and against a terminated actor's drain. Checked for teeth: without that fence each of the
 * three fails in the quick mode (the forbidden {@code 0, 1} in 11-12 of their 24 configurations).
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
            joinGroup();
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

    /** What every test here shares: the cell, a sender as an actor's mailbox sends, and what the arbiter reads. */
    abstract static class SendState {
        final MailboxCell cell = new MailboxCell();

        /** A send: the message published with a release store, then the signal (which fences). */
        final void send() {
            cell.mailbox.offerRelease("m");
            cell.signal();
        }

        /** r1: the actor is scheduled; r2: a message waits in its mailbox. */
        final void observe(II_Result r) {
            r.r1 = cell.isScheduled() ? 1 : 0;
            r.r2 = cell.mailbox.isEmpty() ? 0 : 1;
        }
    }

    @JCStressTest
    @Description("a sender publishes a message and signals while the carrier holding the actor ends its turn "
            + "(clears SCHEDULED, then re-checks the mailbox): the actor must stay or become scheduled")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "scheduled, the message waiting for its turn")
    @Outcome(id = "0, 1", expect = FORBIDDEN, desc = "lost wake-up: the message waits and nobody scheduled the actor")
    @Outcome(id = {"1, 0", "0, 0"}, expect = FORBIDDEN, desc = "the message vanished")
    @State
    public static class SendVersusTurnEnd extends SendState {
        public SendVersusTurnEnd() {
            // a carrier holds the actor, its turn running: scheduled, then taken out of the run queue (what
            // is taken with it, other states' cells, is likewise held by nobody's carrier: only the bits count)
            cell.signal();
            drainRunQueue();
        }

        @Actor
        public void sender() {
            send();
        }

        @Actor
        public void turnEnds() {
            cell.releaseAfterTurn();
        }

        @Arbiter
        public void arbiter(II_Result r) {
            observe(r);
            drainRunQueue(); // what the signals queued: nobody runs this engine
            cell.terminate(); // leaves its group's registry
        }
    }

    @JCStressTest
    @Description("a sender publishes a message and signals while another thread lifts the actor's only "
            + "suspension (CAS, then re-checks the mailbox): the actor must become scheduled")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "scheduled, the message waiting for its turn")
    @Outcome(id = "0, 1", expect = FORBIDDEN, desc = "lost wake-up: resumed with a message and not scheduled")
    @Outcome(id = {"1, 0", "0, 0"}, expect = FORBIDDEN, desc = "the message vanished")
    @State
    public static class SendVersusResume extends SendState {
        public SendVersusResume() {
            cell.suspend(); // idle and suspended: a signal leaves it alone, the resume must schedule it
        }

        @Actor
        public void sender() {
            send();
        }

        @Actor
        public void resumer() {
            cell.resume();
        }

        @Arbiter
        public void arbiter(II_Result r) {
            observe(r);
            drainRunQueue();
            cell.terminate();
        }
    }

    @JCStressTest
    @Description("a sender publishes a message and signals while the carrier holding a terminated actor ends "
            + "its turn (clears SCHEDULED, then drains): the message is drained by one side or the other")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "drained, by the turn's end or by the sender's signal")
    @Outcome(id = "0, 1", expect = FORBIDDEN, desc = "stranded: a terminated actor keeps a message nobody drains")
    @Outcome(id = {"1, 0", "1, 1"}, expect = FORBIDDEN, desc = "a terminated actor left scheduled")
    @State
    public static class SendVersusTerminatedTurnEnd extends SendState {
        public SendVersusTerminatedTurnEnd() {
            // a carrier holds the actor (scheduled, out of the run queue) when it is terminated: the holder drains
            cell.signal();
            drainRunQueue();
            cell.terminate();
        }

        @Actor
        public void sender() {
            send();
        }

        @Actor
        public void turnEnds() {
            cell.releaseAfterTurn();
        }

        @Arbiter
        public void arbiter(II_Result r) {
            observe(r);
        }
    }

    private static void drainRunQueue() {
        while (ENGINE.runQueue().take(RunQueue.OUTSIDE, 0L) != null) {
            // taken: as a carrier would
        }
    }
}
