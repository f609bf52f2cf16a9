package io.reactoractor.mailbox;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

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
 * Chunks of 2 slots, and a state prepared so that the racing operations sit on a chunk boundary
 * (the next chunk must be linked by the producer and entered by the consumer) or inside a chunk.
 */
public final class MpscChunkedArrayQueueJCStress {

    private MpscChunkedArrayQueueJCStress() {
    }

    /** A queue of 2-slot chunks whose consumer has polled {@code consumed} elements. */
    static MpscChunkedArrayQueue<Object> queueAt(int consumed) {
        MpscChunkedArrayQueue<Object> q = new MpscChunkedArrayQueue<>(2);
        for (int i = 0; i < consumed; i++) {
            q.offer(i);
            q.poll();
        }
        return q;
    }

    /**
     * The actor protocol's Dekker handshake: producer offers, then reads the status word; consumer
     * writes the status word, then asks {@code isEmpty()}. Both missing each other would strand the
     * message (the producer does not schedule, the consumer goes idle).
     */
    abstract static class Dekker {
        final MpscChunkedArrayQueue<Object> q;
        volatile int status;

        Dekker(int consumed) {
            q = queueAt(consumed);
        }

        void producer(II_Result r) {
            q.offer("m");
            r.r1 = status;
        }

        void consumer(II_Result r) {
            status = 1;
            r.r2 = q.isEmpty() ? 1 : 0;
        }
    }

    @JCStressTest
    @Description("Dekker handshake, the element lands inside the consumer's chunk")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "producer first: consumer sees the element")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "consumer first: producer sees the new status")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "interleaved: both see each other")
    @Outcome(id = "0, 1", expect = FORBIDDEN, desc = "both missed: the message would be stranded")
    @State
    public static class DekkerInsideChunk extends Dekker {
        public DekkerInsideChunk() {
            super(1); // head at slot 1 of chunk 0
        }

        @Actor
        public void actor1(II_Result r) {
            producer(r);
        }

        @Actor
        public void actor2(II_Result r) {
            consumer(r);
        }
    }

    @JCStressTest
    @Description("Dekker handshake, the element opens a chunk the producer must link and isEmpty() must follow")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "producer first: consumer sees the element")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "consumer first: producer sees the new status")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "interleaved: both see each other")
    @Outcome(id = "0, 1", expect = FORBIDDEN, desc = "both missed: the message would be stranded")
    @State
    public static class DekkerAcrossChunks extends Dekker {
        public DekkerAcrossChunks() {
            super(2); // head at slot 0 of chunk 1, which does not exist yet
        }

        @Actor
        public void actor1(II_Result r) {
            producer(r);
        }

        @Actor
        public void actor2(II_Result r) {
            consumer(r);
        }
    }

    /** A message whose fields are plain: only the queue's ordering makes them visible. */
    static final class Message {
        int a;
        int b;
    }

    @JCStressTest
    @Description("poll() across a chunk boundary sees the element whole, and nothing is lost")
    @Outcome(id = "1, 2, 1", expect = ACCEPTABLE, desc = "polled by the consumer, fully built")
    @Outcome(id = "-1, -1, 1", expect = ACCEPTABLE, desc = "not there yet: left for a later poll")
    @Outcome(expect = FORBIDDEN, desc = "a half-built element, a lost one or a duplicate")
    @State
    public static class PollSeesWholeElementAcrossChunks {
        final MpscChunkedArrayQueue<Object> q = queueAt(2);

        @Actor
        public void producer() {
            Message m = new Message();
            m.a = 1;
            m.b = 2;
            q.offer(m);
        }

        @Actor
        public void consumer(III_Result r) {
            Message m = (Message) q.poll();
            r.r1 = m == null ? -1 : m.a;
            r.r2 = m == null ? -1 : m.b;
            r.r3 = m == null ? 0 : 1;
        }

        /** After both: the element must be polled exactly once in all. */
        @Arbiter
        public void arbiter(III_Result r) {
            Object rest = q.poll();
            if (rest != null) {
                r.r3++;
            }
            if (q.poll() != null || !q.isEmpty()) {
                r.r3 += 10;
            }
        }
    }

    /**
     * Two producers, then the consumer (the arbiter: jcstress runs no more actors than there are
     * CPUs, and CI machines may have 2). Every element exactly once, whatever order the producers
     * claimed their positions in.
     */
    abstract static class TwoProducers {
        final MpscChunkedArrayQueue<Object> q;

        TwoProducers(int consumed) {
            q = queueAt(consumed);
        }

        void producer1() {
            q.offer(1);
        }

        void producer2() {
            q.offer(2);
        }

        /** What the queue holds, in order, as decimal digits (negative if isEmpty() then disagrees). */
        void drain(I_Result r) {
            int all = 0;
            Object x;
            while ((x = q.poll()) != null) {
                all = all * 10 + (Integer) x;
            }
            r.r1 = q.isEmpty() ? all : -all;
        }
    }

    @JCStressTest
    @Description("two producers claim the positions either side of a chunk boundary")
    @Outcome(id = {"12", "21"}, expect = ACCEPTABLE, desc = "both, in the order they claimed positions")
    @Outcome(expect = FORBIDDEN, desc = "an element lost or duplicated, or isEmpty() wrong afterwards")
    @State
    public static class TwoProducersAcrossABoundary extends TwoProducers {
        public TwoProducersAcrossABoundary() {
            super(1); // positions 1 (chunk 0) and 2 (chunk 1, not linked yet)
        }

        @Actor
        public void actor1() {
            producer1();
        }

        @Actor
        public void actor2() {
            producer2();
        }

        @Arbiter
        public void arbiter(I_Result r) {
            drain(r);
        }
    }

    @JCStressTest
    @Description("two producers both need the next chunk: one links it, the other uses that one")
    @Outcome(id = {"12", "21"}, expect = ACCEPTABLE, desc = "both, in the order they claimed positions")
    @Outcome(expect = FORBIDDEN, desc = "an element lost or duplicated (two chunks linked), or isEmpty() wrong")
    @State
    public static class TwoProducersRaceToLinkAChunk extends TwoProducers {
        public TwoProducersRaceToLinkAChunk() {
            super(2); // positions 2 and 3, both in chunk 1, not linked yet
        }

        @Actor
        public void actor1() {
            producer1();
        }

        @Actor
        public void actor2() {
            producer2();
        }

        @Arbiter
        public void arbiter(I_Result r) {
            drain(r);
        }
    }

    /**
     * A producer and the consumer, which offers too (an actor sending to itself; MPSC allows it),
     * then polls; the arbiter drains the rest.
     */
    abstract static class ProducerAndConsumer {
        final MpscChunkedArrayQueue<Object> q;

        ProducerAndConsumer(int consumed) {
            q = queueAt(consumed);
        }

        void producer() {
            q.offer(1);
        }

        void consumer(II_Result r) {
            q.offer(2);
            Object x = q.poll();
            r.r1 = x == null ? 0 : (Integer) x;
        }

        void drain(II_Result r) {
            int rest = 0;
            Object x;
            while ((x = q.poll()) != null) {
                rest = rest * 10 + (Integer) x;
            }
            r.r2 = rest;
        }
    }

    @JCStressTest
    @Description("a position claimed but not yet written at the head: poll() may answer null; nothing lost")
    @Outcome(id = {"1, 2", "2, 1"}, expect = ACCEPTABLE, desc = "the consumer polled the head, the rest after")
    @Outcome(id = "0, 12", expect = ACCEPTABLE_INTERESTING,
            desc = "the producer's position came first and was not written yet: poll() answered null")
    @Outcome(expect = FORBIDDEN,
            desc = "lost, duplicated, or null although the consumer's own element was at the head")
    @State
    public static class PollMeetsAClaimedPosition extends ProducerAndConsumer {
        public PollMeetsAClaimedPosition() {
            super(1); // positions 1 (chunk 0) and 2 (chunk 1)
        }

        @Actor
        public void actor1() {
            producer();
        }

        @Actor
        public void actor2(II_Result r) {
            consumer(r);
        }

        @Arbiter
        public void arbiter(II_Result r) {
            drain(r);
        }
    }

    @JCStressTest
    @Description("the consumer leaves a chunk (cutting it) while a producer may still walk from it")
    @Outcome(id = {"1, 2", "2, 1"}, expect = ACCEPTABLE, desc = "the consumer polled the head, the rest after")
    @Outcome(id = "0, 12", expect = ACCEPTABLE_INTERESTING,
            desc = "the producer's position came first and was not written yet: poll() answered null")
    @Outcome(expect = FORBIDDEN,
            desc = "lost, duplicated, or null although the consumer's own element was at the head")
    @State
    public static class ProducerWalksPastACutChunk extends ProducerAndConsumer {
        public ProducerWalksPastACutChunk() {
            super(2); // positions 2 and 3 in chunk 1; producerChunk still chunk 0, which the poll cuts
        }

        @Actor
        public void actor1() {
            producer();
        }

        @Actor
        public void actor2(II_Result r) {
            consumer(r);
        }

        @Arbiter
        public void arbiter(II_Result r) {
            drain(r);
        }
    }
}
