package io.reactoractor.benchmarks;

import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.jctools.queues.MpscArrayQueue;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The mailbox queue, {@link MpscChunkedArrayQueue} (chunks of
 * {@value MpscChunkedArrayQueue#DEFAULT_CHUNK_SIZE}, the mailbox's), against JCTools'
 * {@link MpscArrayQueue} (capacity {@value #CAPACITY}), {@link MpscUnboundedXaddArrayQueue} (chunks
 * of {@value #CHUNK}) and the JDK's {@link ConcurrentLinkedQueue}: offers and polls per second with
 * 1 and with 2 producers and one consumer.
 *
 * <h2>Method</h2>
 * JMH thread groups: group {@code p1} runs one producer thread ({@code p1Offer}) and one consumer
 * thread ({@code p1Poll}) on the same queue, group {@code p2} two producers and one consumer, all
 * for the whole iteration. This measures the queue under real concurrent offer/poll traffic (shared
 * cache lines, the consumer chasing the producers), which a batch-then-drain invocation would not.
 * Each invocation is one {@code offer} or one {@code poll}; a failed one (full / empty) is counted
 * separately and then, depending on the {@code backoff} parameter, returns at once ({@code none}: the
 * numbers are the queue's alone, every thread spins) or calls {@link Thread#yield()} ({@code yield}:
 * a thread that cannot make progress hands its core to one that can, which matters when the threads
 * outnumber the cores, see the caveat).
 *
 * <h2>Reading the results</h2>
 * The primary score (invocations/s of the whole group) mixes successful and failed calls: ignore
 * it. The secondary results ({@link AuxCounters}) are the numbers: {@code offers} and {@code polls}
 * (successful calls per second, summed over the group's threads), {@code offersRefused} (the
 * producer was at its in-flight limit, or a bounded queue was full) and {@code pollsEmpty}. In steady
 * state {@code offers} ≈ {@code polls}; the smaller of the two rates is the queue's throughput.
 *
 * <h2>Bounded memory</h2>
 * A producer faster than the consumer would grow an unbounded queue without limit. So each producer
 * may have at most {@value #WINDOW} of its elements in the queue: the element it offers is its own
 * {@link Token}, the consumer counts the tokens it polls in the token, and the producer re-reads that
 * count only when its window is used up (a read of a consumer-written line at most once per
 * window, unless the window is full). The same limit applies to every queue; with 2 producers the
 * queue holds at most {@value #CAPACITY} elements, the array queue's capacity, so the bounded queue
 * is never full earlier than the unbounded ones. The queue is recreated for every iteration, so
 * nothing is carried over.
 *
 * <h2>Which offer</h2>
 * {@code mpscChunked} offers with {@link MpscChunkedArrayQueue#offerRelease}, a release store into the
 * slot, as the actors' mailboxes do and as JCTools' queues do: the store-load fence an actor's wake-up
 * handshake needs is taken by {@code ActorCell.signal()} after the offer (only when the receiver is
 * busy, suspended or terminated), and it is no more part of the queue than it is of JCTools' rows,
 * whose users need the same fence. {@code mpscChunkedVolatile} offers with
 * {@link MpscChunkedArrayQueue#offer}, whose volatile store carries the fence itself: the run queue's
 * arrivals and the pull consumer's commands use it.
 *
 * <h2>Semantics</h2>
 * JCTools' and the JDK's {@code offer}/{@code poll} are the {@code java.util.Queue} ones: their
 * {@code poll} waits (spins) for an element whose producer has claimed a slot but not yet written
 * it. Our queue's {@code poll} returns {@code null} instead (like JCTools' {@code relaxedPoll}),
 * which is enough for a mailbox because every producer signals the actor after its offer; a
 * {@code null} there is counted in {@code pollsEmpty}.
 *
 * <h2>Caveat</h2>
 * Group {@code p2} runs 3 threads: on a 2-core machine one of them is always descheduled. With
 * {@code backoff=none} the running ones spin through their time slices (producers refused at their
 * window while the consumer waits for a core, or the reverse), so {@code p2} then measures the OS
 * scheduler as much as the queue; {@code backoff=yield} is the better-behaved variant there.
 * {@code p1} (2 threads, 2 cores) is meaningful with either.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class MailboxQueueBenchmark {

    /** Capacity of the {@link MpscArrayQueue}. */
    public static final int CAPACITY = 1 << 16;
    /** Chunk size of the {@link MpscUnboundedXaddArrayQueue}. */
    public static final int CHUNK = 1024;
    /** Elements one producer may have in the queue at once (2 producers: {@link #CAPACITY} in all). */
    public static final int WINDOW = CAPACITY / 2;

    @Param({"mpscChunked", "mpscChunkedVolatile", "mpscArray", "mpscXadd", "mpscXadd64", "concurrentLinked"})
    public String queue;

    /** What a thread does after a failed offer or poll: {@code none} or {@code yield}. */
    @Param({"none", "yield"})
    public String backoff;

    BenchQueue q;
    boolean yieldOnFailure;

    @Setup(Level.Iteration)
    public void newQueue() {
        q = BenchQueue.create(queue);
        yieldOnFailure = switch (backoff) {
            case "none" -> false;
            case "yield" -> true;
            default -> throw new IllegalArgumentException("unknown backoff: " + backoff);
        };
    }

    private void failed() {
        if (yieldOnFailure) {
            Thread.yield();
        }
    }

    /** One producer thread's element, window and counters. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Producer {
        /** Successful offers. */
        public long offers;
        /** Offers refused: window used up, or a bounded queue full. */
        public long offersRefused;

        Token token;
        long sent;
        long limit;

        @Setup(Level.Iteration)
        public void reset() {
            offers = 0;
            offersRefused = 0;
            // a new token per iteration: the previous iteration's queue, and its count, are gone
            token = new Token();
            sent = 0;
            limit = WINDOW;
        }
    }

    /** The consumer thread's counters. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Consumer {
        /** Successful polls. */
        public long polls;
        /** Polls that found the queue empty. */
        public long pollsEmpty;

        @Setup(Level.Iteration)
        public void reset() {
            polls = 0;
            pollsEmpty = 0;
        }
    }

    @Benchmark
    @Group("p1")
    @GroupThreads(1)
    public void p1Offer(Producer p) {
        offer(p);
    }

    @Benchmark
    @Group("p1")
    @GroupThreads(1)
    public void p1Poll(Consumer c) {
        poll(c);
    }

    @Benchmark
    @Group("p2")
    @GroupThreads(2)
    public void p2Offer(Producer p) {
        offer(p);
    }

    @Benchmark
    @Group("p2")
    @GroupThreads(1)
    public void p2Poll(Consumer c) {
        poll(c);
    }

    private void offer(Producer p) {
        if (p.sent >= p.limit) {
            p.limit = p.token.consumed() + WINDOW;
            if (p.sent >= p.limit) {
                p.offersRefused++;
                failed();
                return;
            }
        }
        if (q.offer(p.token)) {
            p.sent++;
            p.offers++;
        } else {
            p.offersRefused++;
            failed();
        }
    }

    private void poll(Consumer c) {
        Token t = q.poll();
        if (t == null) {
            c.pollsEmpty++;
            failed();
        } else {
            t.countConsumed();
            c.polls++;
        }
    }

    /**
     * What a producer offers, always the same instance: no allocation outside the queue itself. It
     * carries the consumer's count of polled tokens back to the producer. Padded so that this
     * consumer-written line is not shared with anything a producer writes.
     */
    static final class Token {
        private static final VarHandle CONSUMED;

        static {
            try {
                CONSUMED = MethodHandles.lookup().findVarHandle(Token.class, "consumed", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        long p00, p01, p02, p03, p04, p05, p06, p07;
        private long consumed;
        long p10, p11, p12, p13, p14, p15, p16, p17;

        /** Consumer only: one more of these tokens was polled. */
        void countConsumed() {
            CONSUMED.setRelease(this, consumed + 1);
        }

        /** Producer: how many of these tokens the consumer has polled. */
        long consumed() {
            return (long) CONSUMED.getAcquire(this);
        }
    }

    /**
     * The queues behind one call site. Only one subclass is loaded per JMH fork, so the calls
     * are monomorphic and inlined.
     */
    abstract static class BenchQueue {
        abstract boolean offer(Token t);

        abstract Token poll();

        static BenchQueue create(String name) {
            switch (name) {
                case "mpscChunked":
                    return new Chunked(true);
                case "mpscChunkedVolatile":
                    return new Chunked(false);
                case "mpscArray":
                    return new JcArray();
                case "mpscXadd":
                    return new JcXadd(CHUNK);
                case "mpscXadd64":
                    return new JcXadd(MpscChunkedArrayQueue.DEFAULT_CHUNK_SIZE);
                case "concurrentLinked":
                    return new Clq();
                default:
                    throw new IllegalArgumentException("unknown queue: " + name);
            }
        }
    }

    static final class Chunked extends BenchQueue {
        private final MpscChunkedArrayQueue<Token> q = new MpscChunkedArrayQueue<>();
        private final boolean release;

        Chunked(boolean release) {
            this.release = release;
        }

        @Override
        boolean offer(Token t) {
            // unbounded: always succeeds. The branch is on a final field of a monomorphic call site
            if (release) {
                q.offerRelease(t);
            } else {
                q.offer(t);
            }
            return true;
        }

        @Override
        Token poll() {
            return q.poll();
        }
    }

    static final class JcArray extends BenchQueue {
        private final MpscArrayQueue<Token> q = new MpscArrayQueue<>(CAPACITY);

        @Override
        boolean offer(Token t) {
            return q.offer(t);
        }

        @Override
        Token poll() {
            return q.poll();
        }
    }

    static final class JcXadd extends BenchQueue {
        private final MpscUnboundedXaddArrayQueue<Token> q;

        JcXadd(int chunkSize) {
            q = new MpscUnboundedXaddArrayQueue<>(chunkSize);
        }

        @Override
        boolean offer(Token t) {
            return q.offer(t);
        }

        @Override
        Token poll() {
            return q.poll();
        }
    }

    static final class Clq extends BenchQueue {
        private final ConcurrentLinkedQueue<Token> q = new ConcurrentLinkedQueue<>();

        @Override
        boolean offer(Token t) {
            return q.offer(t);
        }

        @Override
        Token poll() {
            return q.poll();
        }
    }
}
