package io.reactoractor.internal.mailbox;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.I_Result;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress tests of {@link MpscChunkedArrayQueue}: the claims of its "Memory ordering" Javadoc.
 * Chunks of 2 slots. Unless a test says otherwise, successive states start at consumed positions
 * 0, 1, 2, 3, 0, ... so that the racing operations land at the start of the first chunk, inside a
 * chunk, on a boundary (the next chunk must be linked by a producer and entered by the consumer,
 * which then cuts the old one while a producer may still walk from it) and in a later chunk; every
 * outcome table below holds for all four.
 */
public final class MpscChunkedArrayQueueJCStress {

    private MpscChunkedArrayQueueJCStress() {
    }

    private static final AtomicInteger STARTS = new AtomicInteger();

    /** A queue of 2-slot chunks whose consumer has polled {@code consumed} elements. */
    static MpscChunkedArrayQueue<Object> queueAt(int consumed) {
        MpscChunkedArrayQueue<Object> q = new MpscChunkedArrayQueue<>(2);
        for (int i = 0; i < consumed; i++) {
            q.offer(i);
            q.poll();
        }
        return q;
    }

    /** The next of the four starting positions (see the class doc). */
    static MpscChunkedArrayQueue<Object> queueAtNextStart() {
        return queueAt(STARTS.getAndIncrement() & 3);
    }

    /** Polls what is left, in order, as decimal digits (elements are 1 and 2). */
    static int drain(MpscChunkedArrayQueue<Object> q) {
        int rest = 0;
        Object x;
        while ((x = q.poll()) != null) {
            rest = rest * 10 + (Integer) x;
        }
        return rest;
    }

    /** The status word of the handshake tests and the consumer's half: write it, then ask isEmpty(). */
    abstract static class HandshakeState {
        final MpscChunkedArrayQueue<Object> q = queueAtNextStart();
        volatile int status;

        final void consume(II_Result r) {
            status = 1;
            r.r2 = q.isEmpty() ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("the actor protocol's Dekker handshake: producer offers, then reads the status word; "
            + "consumer writes the status word, then asks isEmpty()")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "producer first: the consumer sees the element")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "consumer first: the producer sees the new status")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "interleaved: both see each other")
    @Outcome(id = "0, 1", expect = FORBIDDEN,
            desc = "both missed: the producer would not schedule the actor, the consumer would go idle")
    @State
    public static class DekkerHandshake extends HandshakeState {
        @Actor
        public void producer(II_Result r) {
            q.offer("m");
            r.r1 = status;
        }

        @Actor
        public void consumer(II_Result r) {
            consume(r);
        }
    }

    @JCStressTest
    @Description("the same handshake as the actors' mailboxes run it: offerRelease, then a full fence (what "
            + "ActorCell.signal() takes), then the status read; also across a chunk boundary (the link)")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "producer first: the consumer sees the element")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "consumer first: the producer sees the new status")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "interleaved: both see each other")
    @Outcome(id = "0, 1", expect = FORBIDDEN,
            desc = "both missed: the producer would not schedule the actor, the consumer would go idle")
    @State
    public static class DekkerHandshakeWithOfferRelease extends HandshakeState {
        @Actor
        public void producer(II_Result r) {
            q.offerRelease("m");
            VarHandle.fullFence();
            r.r1 = status;
        }

        @Actor
        public void consumer(II_Result r) {
            consume(r);
        }
    }

    /** A message whose fields are plain: only the queue's ordering makes them visible. */
    static final class Message {
        int a;
        int b;
    }

    /**
     * A queue whose head is slot 0 of chunk 1, not linked yet, and the consumer's and the arbiter's halves
     * of the whole-element tests; the producer's half is the test's, with either offer.
     */
    abstract static class WholeElementState {
        final MpscChunkedArrayQueue<Object> q = queueAt(2);

        static Message built() {
            Message m = new Message();
            m.a = 1;
            m.b = 2;
            return m;
        }

        final void consume(III_Result r) {
            Message m = (Message) q.poll();
            r.r1 = m == null ? -1 : m.a;
            r.r2 = m == null ? -1 : m.b;
            r.r3 = m == null ? 0 : 1;
        }

        /** After both: the element must be polled exactly once in all. */
        final void check(III_Result r) {
            if (q.poll() != null) {
                r.r3++;
            }
            if (q.poll() != null || !q.isEmpty()) {
                r.r3 += 10;
            }
        }
    }

    @JCStressTest
    @Description("poll() of an element that opens a new chunk sees it whole, and nothing is lost")
    @Outcome(id = "1, 2, 1", expect = ACCEPTABLE, desc = "polled by the consumer, fully built")
    @Outcome(id = "-1, -1, 1", expect = ACCEPTABLE, desc = "not there yet: left for a later poll")
    @Outcome(expect = FORBIDDEN, desc = "a half-built element, a lost one or a duplicate")
    @State
    public static class PollSeesWholeElementAcrossChunks extends WholeElementState {
        @Actor
        public void producer() {
            q.offer(built());
        }

        @Actor
        public void consumer(III_Result r) {
            consume(r);
        }

        @Arbiter
        public void arbiter(III_Result r) {
            check(r);
        }
    }

    @JCStressTest
    @Description("the same with offerRelease (the actors' mailboxes): a release store publishes the element whole")
    @Outcome(id = "1, 2, 1", expect = ACCEPTABLE, desc = "polled by the consumer, fully built")
    @Outcome(id = "-1, -1, 1", expect = ACCEPTABLE, desc = "not there yet: left for a later poll")
    @Outcome(expect = FORBIDDEN, desc = "a half-built element, a lost one or a duplicate")
    @State
    public static class PollSeesWholeElementAcrossChunksWithOfferRelease extends WholeElementState {
        @Actor
        public void producer() {
            q.offerRelease(built());
        }

        @Actor
        public void consumer(III_Result r) {
            consume(r);
        }

        @Arbiter
        public void arbiter(III_Result r) {
            check(r);
        }
    }

    @JCStressTest
    @Description("two producers, then the consumer (the arbiter: jcstress runs no more actors than there "
            + "are CPUs, and CI machines may have 2)")
    @Outcome(id = {"12", "21"}, expect = ACCEPTABLE, desc = "both, in the order they claimed positions")
    @Outcome(expect = FORBIDDEN,
            desc = "an element lost or duplicated (say, two chunks linked at once), or isEmpty() wrong after")
    @State
    public static class TwoProducers {
        final MpscChunkedArrayQueue<Object> q = queueAtNextStart();

        @Actor
        public void producer1() {
            q.offer(1);
        }

        @Actor
        public void producer2() {
            q.offer(2);
        }

        @Arbiter
        public void consumer(I_Result r) {
            int all = drain(q);
            r.r1 = q.isEmpty() ? all : -all;
        }
    }

    @JCStressTest
    @Description("a producer races the consumer, which offers too (an actor sending to itself) and then polls; "
            + "the arbiter drains the rest")
    @Outcome(id = {"1, 2", "2, 1"}, expect = ACCEPTABLE, desc = "the consumer polled the head, the rest after")
    @Outcome(id = "0, 12", expect = ACCEPTABLE_INTERESTING,
            desc = "the producer's position came first and was not written yet: poll() answered null")
    @Outcome(expect = FORBIDDEN,
            desc = "lost, duplicated, or null although the consumer's own element was at the head")
    @State
    public static class PollRacesAProducer {
        final MpscChunkedArrayQueue<Object> q = queueAtNextStart();

        @Actor
        public void producer() {
            q.offer(1);
        }

        @Actor
        public void consumer(II_Result r) {
            q.offer(2);
            Object x = q.poll();
            r.r1 = x == null ? 0 : (Integer) x;
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r2 = drain(q);
        }
    }
    @JCStressTest
    @Description("isEmpty() from a thread that is neither producer nor consumer (a sender reading the actor's state, "
            + "a metrics scrape) while the consumer polls, also into the next chunk: an element is always waiting")
    @Outcome(id = "1, 2, 0", expect = ACCEPTABLE, desc = "the consumer polled 1 and 2; element 3 was seen waiting")
    @Outcome(id = "1, 2, 1", expect = FORBIDDEN,
            desc = "'empty' while element 3 waits: a consumed slot taken for an unwritten one (hides what follows)")
    @Outcome(expect = FORBIDDEN, desc = "a lost, duplicated or reordered element")
    @State
    public static class IsEmptyFromAnotherThreadWhileTheConsumerPolls {
        final MpscChunkedArrayQueue<Object> q = queueWith123();

        /** Elements 1, 2, 3 at the next start position: the two polls cross a chunk boundary in some starts. */
        private static MpscChunkedArrayQueue<Object> queueWith123() {
            MpscChunkedArrayQueue<Object> q = queueAtNextStart();
            q.offer(1);
            q.offer(2);
            q.offer(3);
            return q;
        }

        @Actor
        public void consumer(III_Result r) {
            Object a = q.poll();
            Object b = q.poll();
            r.r1 = a == null ? -1 : (Integer) a;
            r.r2 = b == null ? -1 : (Integer) b;
        }

        @Actor
        public void observer(III_Result r) {
            r.r3 = q.isEmpty() ? 1 : 0;
        }
    }
}
