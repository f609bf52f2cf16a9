package io.reactoractor.internal.mailbox;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * An unbounded, lock-free, multi-producer single-consumer queue of linked array chunks: the mailbox
 * of an actor. Unlike a linked queue it allocates nothing per element, only one chunk of
 * {@code chunkSize} slots per {@code chunkSize} elements.
 *
 * <h2>Algorithm</h2>
 * Every element has a position: a producer claims the next one with a single
 * {@code getAndAdd(producerIndex, 1)} (the only contended instruction of {@code offer}), so
 * producers never retry. Position {@code i} lives in chunk number {@code i >>> shift}, slot
 * {@code i & mask}. The chunks form one singly linked list, oldest first; the consumer walks it
 * with {@code consumerIndex} and {@code consumerChunk}, both written only by the consumer thread.
 * <ul>
 *   <li><b>Finding the chunk.</b> A producer reads {@code producerChunk} (a recent chunk)
 *       <em>before</em> its {@code getAndAdd}. {@code producerChunk} only ever points at chunk
 *       {@code k} after some producer claimed a position in chunk {@code k} (it is advanced by
 *       producers that walked there for their own position), and that producer's {@code getAndAdd}
 *       happens-before the store a later producer acquires; so the later producer's
 *       {@code getAndAdd} returns a position in chunk {@code k} or after. The producer therefore only
 *       ever walks <em>forward</em> along {@code next}: usually zero steps, one at a chunk boundary.
 *       A missing {@code next} is appended with a CAS by whichever producer needs it first (losers
 *       of the race use the winner's chunk), so no producer waits for another to allocate.</li>
 *   <li><b>Releasing chunks.</b> When the consumer moves from chunk {@code k} to {@code k + 1} it
 *       replaces {@code k.next} with the marker {@code CUT}. Without that, a consumed chunk that
 *       lived long enough to be promoted to the old generation would keep its young successors
 *       alive (and promote them in turn) until an old-generation collection. A producer that meets
 *       {@code CUT} while walking from a stale chunk restarts from {@code consumerChunk}: that chunk
 *       cannot be past its own, because the consumer cannot leave a chunk before it polled every
 *       position in it, including the producer's still unwritten one. Each restart starts further
 *       along, so the walk ends. This is the only place a producer reads a consumer field.</li>
 *   <li><b>Chunks are never reused</b>, so a {@code null} slot is unambiguous: "not yet written"
 *       at or after {@code consumerIndex}, "consumed" before it.</li>
 * </ul>
 *
 * <h2>Memory ordering</h2>
 * Each access below is tagged in the code with its mode; the reasons:
 * <ul>
 *   <li><b>No half-built element.</b> The element is fully constructed by the producer before it
 *       is stored into its slot with a release store ({@link #offerRelease}) or a volatile one
 *       ({@link #offer}); {@link #poll()} and {@link #peek()} read the slot with acquire, so
 *       everything the producer wrote before the offer is visible to whoever gets the element. A chunk is published by the CAS that
 *       links it (volatile) and read through acquire loads; its {@code index} and {@code slots}
 *       are final.</li>
 *   <li><b>Claimed but not yet written.</b> Between a producer's {@code getAndAdd} and its slot
 *       store, the position is taken but its slot is still {@code null}. {@link #poll()} then
 *       returns {@code null} instead of spinning (even if later positions are already written:
 *       FIFO order is by position), and {@link #isEmpty()} may answer "empty". Both are safe for a
 *       mailbox because <em>every producer signals the actor after {@code offer} returns</em>: the
 *       late producer's own signal (see the handshake below, applied to it) starts the turn that
 *       polls its element and every element behind it. They are not enough for a decision that
 *       ends the consumer (a completion, a graceful close): elements behind the unwritten place
 *       may have been offered, and their producers answered, before that decision, and would be
 *       discarded when the place is written. Such a decision also asks {@link #size()}, which
 *       counts claimed places: a claim that precedes the decision's volatile reads in the
 *       synchronization order is seen there.</li>
 *   <li><b>The Dekker handshake with the status word.</b> The actor protocol is, producer:
 *       publish the element, then read the actor's status word; consumer: CAS-clear
 *       {@code SCHEDULED}, then ask {@link #isEmpty()}. With {@link #offer} the slot store is
 *       <em>volatile</em>, not just release, and every load in {@link #isEmpty()} is volatile, so all of these accesses are
 *       in the single total synchronization order. If the producer's status read saw
 *       {@code SCHEDULED} still set, it comes before the consumer's CAS in that order, hence the
 *       producer's slot store comes before every load of {@code isEmpty()}, and a volatile load
 *       sees the last store before it in that order. Then {@code isEmpty()} finds: (a) a written
 *       element at the head (this producer's or an earlier one): "not empty"; (b) a head position still unwritten by a
 *       slower producer: "empty" is allowed, because that producer's slot store comes
 *       <em>after</em> this load in the order, so its own status read comes after the consumer's
 *       CAS and sees {@code SCHEDULED} cleared, and it schedules the actor; (c) the element already
 *       consumed: nothing is waiting. A release store followed by a volatile load may be reordered
 *       (store-load), which would let both sides miss. To reach the head slot {@code isEmpty()}
 *       may need the next chunk; the producer that linked it did so with a CAS before its slot
 *       store, and a producer that found it linked read {@code next} with a volatile load, so the
 *       same order argument makes the link visible too.
 *       <br><b>With {@link #offerRelease}</b> the store-load fence moves out of the queue: the slot
 *       store is a release store, and the producer must put a full fence
 *       ({@link VarHandle#fullFence()}) between it and the status read it decides on, or decide by
 *       winning a CAS of the status word. This argument rests on the fence semantics the
 *       {@code VarHandle} documentation adopts from C++11 (a {@code fullFence} is a sequentially
 *       consistent fence), not on JLS chapter 17, which models neither fences nor release stores.
 *       The fence plays the volatile slot store's part above: it precedes the producer's status
 *       read, so if that read saw {@code SCHEDULED} still set, the fence precedes the consumer's CAS
 *       and the volatile loads of {@code isEmpty()} that follow it in the total order, and a
 *       <em>volatile</em> load after a fence in that order sees the stores sequenced before the
 *       fence (the acquire loads of {@link #poll()} get no such promise; the handshake's checks all go
 *       through {@code isEmpty()}). Case (b) for a slower {@code offerRelease} producer: if the
 *       consumer's volatile load missed its store, that producer's fence comes after the load, so its
 *       status read comes after the consumer's CAS and sees {@code SCHEDULED} cleared. A producer
 *       that wins the CAS instead needs no fence: its CAS is a volatile write after its slot store,
 *       and every later party that checks the mailbox (the carrier that takes the actor from the run
 *       queue, a resumer, a terminating or draining thread) first touches the status word by a CAS
 *       later in the order, so the slot store happens-before its check. The gain is that the slot's
 *       cache-line miss overlaps the status read instead of stalling the producer at the store;
 *       {@code ActorCell.signal()} is the producer's side.</li>
 *   <li><b>{@link #isEmpty()} from any thread.</b> It reads {@code consumerIndex}, then
 *       {@code consumerChunk}, then the head slot, then {@code consumerIndex} again. The consumer
 *       stores the next {@code consumerIndex} (release) <em>before</em> it clears the polled slot
 *       (release), so a {@code null} slot seen together with an unchanged {@code consumerIndex} is
 *       an unwritten slot, never a just-consumed one (which would hide the elements behind it).
 *       Whenever the reads disagree (the consumer moved meanwhile) the answer is "not empty": a
 *       spurious {@code false} is allowed, a spurious {@code true} is not.</li>
 * </ul>
 *
 * <p>{@link #size()} is {@code producerIndex - consumerIndex}: it counts claimed positions, so it is
 * exact when quiescent and approximate (never negative) otherwise.
 *
 * @param <E> the element type (never {@code null})
 */
public final class MpscChunkedArrayQueue<E> extends MpscChunkedArrayQueueConsumerFields {

    /** Slots per chunk by default: an empty mailbox costs one chunk of this many references. */
    public static final int DEFAULT_CHUNK_SIZE = 64;

    // trailing padding: keeps the consumer fields off the line of whatever object follows
    long p30, p31, p32, p33, p34, p35, p36, p37, p38, p39, p3a, p3b, p3c, p3d, p3e, p3f;

    private static final VarHandle P_INDEX;
    private static final VarHandle P_CHUNK;
    private static final VarHandle CREDITS;
    private static final VarHandle C_INDEX;
    private static final VarHandle C_CHUNK;
    private static final VarHandle NEXT;
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Object[].class);

    /** Stored in {@code next} of a chunk the consumer has left (see "Releasing chunks"). */
    private static final Chunk CUT = new Chunk(-1, 1);

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            P_INDEX = l.findVarHandle(MpscChunkedArrayQueueProducerFields.class, "producerIndex", long.class);
            P_CHUNK = l.findVarHandle(MpscChunkedArrayQueueProducerFields.class, "producerChunk", Chunk.class);
            CREDITS = l.findVarHandle(MpscChunkedArrayQueueProducerFields.class, "credits", long.class);
            C_INDEX = l.findVarHandle(MpscChunkedArrayQueueConsumerFields.class, "consumerIndex", long.class);
            C_CHUNK = l.findVarHandle(MpscChunkedArrayQueueConsumerFields.class, "consumerChunk", Chunk.class);
            NEXT = l.findVarHandle(Chunk.class, "next", Chunk.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Creates an empty queue with chunks of {@value #DEFAULT_CHUNK_SIZE} slots. */
    public MpscChunkedArrayQueue() {
        this(DEFAULT_CHUNK_SIZE);
    }

    /**
     * Creates an empty queue.
     *
     * @param chunkSize slots per chunk, a power of two from 2 to 2<sup>30</sup>
     */
    public MpscChunkedArrayQueue(int chunkSize) {
        super(chunkSize);
        Chunk first = new Chunk(0, chunkSize);
        // release: together with the final fields, safe even if the queue itself is published racily
        C_CHUNK.setRelease(this, first);
        P_CHUNK.setRelease(this, first);
    }

    /**
     * Appends an element. Any thread; lock-free, and wait-free except when it must walk past a
     * chunk the consumer has just left.
     *
     * @param e the element, not {@code null}
     */
    public void offer(E e) {
        Objects.requireNonNull(e, "e");
        // acquire, and before the getAndAdd: never a chunk after the one our position lands in
        Chunk c = (Chunk) P_CHUNK.getAcquire(this);
        long i = (long) P_INDEX.getAndAdd(this, 1L); // volatile RMW: claims position i
        // volatile, not release: the producer's half of the Dekker handshake (class doc)
        SLOT.setVolatile(chunkOf(c, i).slots, (int) i & mask, e);
    }

    /**
     * Appends an element with a release store: like {@link #offer}, but the store may be ordered after
     * a later load of the calling thread. For a producer that reads the consumer's state after offering
     * (the Dekker handshake of the class doc), that load must come after a full fence
     * ({@link VarHandle#fullFence()}, or a volatile read-modify-write the decision rests on): the
     * actor's mailbox uses this with {@code ActorCell.signal()}, which takes the fence only when it does
     * not win the status word's CAS. Any thread; lock-free like {@link #offer}.
     *
     * @param e the element, not {@code null}
     */
    public void offerRelease(E e) {
        Objects.requireNonNull(e, "e");
        // acquire, and before the getAndAdd: never a chunk after the one our position lands in
        Chunk c = (Chunk) P_CHUNK.getAcquire(this);
        long i = (long) P_INDEX.getAndAdd(this, 1L); // volatile RMW: claims position i
        // release: the element is fully built for whoever reads the slot; the handshake's fence is the caller's
        SLOT.setRelease(chunkOf(c, i).slots, (int) i & mask, e);
    }

    /** The chunk of position {@code i}, starting from {@code c} (read before {@code i} was claimed). */
    private Chunk chunkOf(Chunk c, long i) {
        long want = i >>> shift;
        return c.index == want ? c : findChunk(c, want);
    }

    /** Producer slow path: walks forward from {@code c} to chunk {@code want}, appending if needed. */
    private Chunk findChunk(Chunk c, long want) {
        while (c.index < want) {
            // volatile: the link may be what isEmpty() must see before our slot (class doc)
            Chunk next = (Chunk) NEXT.getVolatile(c);
            if (next == null) {
                Chunk fresh = new Chunk(c.index + 1, mask + 1);
                Chunk witness = (Chunk) NEXT.compareAndExchange(c, null, fresh); // volatile CAS
                next = witness == null ? fresh : witness;
            }
            if (next == CUT) {
                // the consumer left c; it cannot be past our chunk (class doc, "Releasing chunks").
                // acquire: the consumer stored consumerChunk before CUT (release), so this is not c
                next = (Chunk) C_CHUNK.getAcquire(this);
            }
            c = next;
        }
        if (c.index != want) {
            throw new IllegalStateException("mailbox chunk " + c.index + " is past position's chunk " + want);
        }
        advanceProducerChunk(c);
        return c;
    }

    /** Moves {@code producerChunk} forward to {@code c}, never backward. */
    private void advanceProducerChunk(Chunk c) {
        Chunk cur = (Chunk) P_CHUNK.getVolatile(this); // volatile: start of a CAS loop
        while (cur.index < c.index) {
            Chunk witness = (Chunk) P_CHUNK.compareAndExchange(this, cur, c); // volatile CAS
            if (witness == cur) {
                return;
            }
            cur = witness;
        }
    }

    /**
     * Removes the head element. Consumer thread only.
     *
     * @return the element, or {@code null} if the head position is empty or claimed but not yet
     *     written (its producer will signal)
     */
    public E poll() {
        long ci = consumerIndex; // plain: only this thread writes it
        Chunk c = consumerChunkAt(ci);
        if (c == null) {
            return null;
        }
        int slot = (int) ci & mask;
        @SuppressWarnings("unchecked")
        E e = (E) SLOT.getAcquire(c.slots, slot); // acquire: the element is fully built
        if (e == null) {
            return null;
        }
        // release, and before clearing the slot: isEmpty() from another thread relies on this order
        C_INDEX.setRelease(this, ci + 1);
        SLOT.setRelease(c.slots, slot, null); // release: see above; also lets the element be collected
        return e;
    }

    /**
     * Reads the head element without removing it. Consumer thread only.
     *
     * @return the element, or {@code null} as for {@link #poll()}
     */
    public E peek() {
        long ci = consumerIndex; // plain: only this thread writes it
        Chunk c = consumerChunkAt(ci);
        @SuppressWarnings("unchecked")
        E e = c == null ? null : (E) SLOT.getAcquire(c.slots, (int) ci & mask); // acquire: fully built
        return e;
    }

    /**
     * Consumer only: the chunk of position {@code ci}, moving {@code consumerChunk} to the next
     * chunk at a boundary, or {@code null} if that chunk is not linked yet.
     */
    private Chunk consumerChunkAt(long ci) {
        Chunk c = consumerChunk; // plain: only this thread writes it
        if (c.index == ci >>> shift) {
            return c;
        }
        // acquire: the appending producer's chunk is fully built
        Chunk next = (Chunk) NEXT.getAcquire(c);
        if (next == null) {
            return null;
        }
        // release, and before CUT: a producer that sees CUT then finds a chunk at least this far
        C_CHUNK.setRelease(this, next);
        NEXT.setRelease(c, CUT); // release: see above
        return next;
    }

    /**
     * Whether no element is waiting at the head. Any thread; may spuriously answer {@code false};
     * answers {@code true} while elements wait only if the head position is claimed but not yet
     * written, whose producer then signals (class doc, "Memory ordering").
     *
     * @return {@code true} if no element is waiting
     */
    public boolean isEmpty() {
        // every load volatile: the consumer's half of the Dekker handshake (class doc)
        long ci = (long) C_INDEX.getVolatile(this);
        Chunk c = (Chunk) C_CHUNK.getVolatile(this);
        long want = ci >>> shift;
        if (c.index != want) {
            if (c.index != want - 1) {
                return false; // the consumer moved on after we read its index: not a quiet queue
            }
            // the consumer has not entered the head position's chunk yet
            c = (Chunk) NEXT.getVolatile(c);
            if (c == null) {
                return true; // not linked: no producer of that chunk has finished its offer
            }
            if (c == CUT) {
                return false; // the consumer moved on meanwhile
            }
        }
        if (SLOT.getVolatile(c.slots, (int) ci & mask) != null) {
            return false;
        }
        // null: unwritten, unless the consumer polled it meanwhile (then it moved: "not empty")
        return (long) C_INDEX.getVolatile(this) == ci;
    }

    /**
     * An estimate of the number of elements (claimed positions). Any thread; exact when quiescent.
     *
     * @return the number of waiting elements, never negative
     */
    public int size() {
        // volatile, consumer index first: the producer index read after it is never smaller
        long consumed = (long) C_INDEX.getVolatile(this);
        long s = (long) P_INDEX.getVolatile(this) - consumed;
        return s <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, s);
    }

    // ------------------------------------------------------------------ the owner's credit counter

    /*
     * A counter the queue never reads: a bounded owner keeps its free capacity here (the actor's
     * mailbox credits, io.reactoractor.actor.InboundCredits). It shares the producers' cache line
     * (producerIndex), because a sender takes a credit and then claims a position: two accesses to
     * one line cost one coherence miss, where a counter in another object cost a second one per
     * message. Every access is volatile (a plain read, a CAS or a getAndAdd), so the owner's own
     * ordering arguments hold as they did with an AtomicLong; nothing here orders the queue's fields.
     */

    /**
     * The owner's counter (volatile read).
     *
     * @return its value
     */
    public long credits() {
        return (long) CREDITS.getVolatile(this);
    }

    /**
     * Sets the owner's counter (volatile store); for its initial value.
     *
     * @param value the new value
     */
    public void setCredits(long value) {
        CREDITS.setVolatile(this, value);
    }

    /**
     * Compare-and-set of the owner's counter (volatile).
     *
     * @param expected the value it must have
     * @param value    the new value
     * @return whether it was set
     */
    public boolean compareAndSetCredits(long expected, long value) {
        return CREDITS.compareAndSet(this, expected, value);
    }

    /**
     * Adds to the owner's counter (volatile read-modify-write).
     *
     * @param delta what to add
     * @return the value after the addition
     */
    public long addCredits(long delta) {
        return (long) CREDITS.getAndAdd(this, delta) + delta;
    }

    /** A chunk of consecutive positions; {@code next} is accessed only through {@link #NEXT}. */
    static final class Chunk {
        /** Chunk number: holds positions {@code [index << shift, (index + 1) << shift)}. */
        final long index;
        final Object[] slots;
        Chunk next;

        Chunk(long index, int size) {
            this.index = index;
            this.slots = new Object[size];
        }
    }
}

/**
 * The read-only chunk geometry, first: HotSpot (JDK 15+) fills the 4-byte gap after a compressed
 * object header with the first 4-byte field it can, and without these that was
 * {@code producerChunk}, 128 bytes away from {@code producerIndex}; while a read-only field placed
 * after the consumer fields would share the line the consumer writes on every poll.
 * {@code unused} closes the next 4-byte gap so no later field moves up here either.
 */
abstract class MpscChunkedArrayQueueGeometry {
    /** Chunk number of position {@code i}: {@code i >>> shift}. */
    final int shift;
    /** Slot of position {@code i} in its chunk: {@code i & mask}. */
    final int mask;
    int unused;

    MpscChunkedArrayQueueGeometry(int chunkSize) {
        if (chunkSize < 2 || chunkSize > (1 << 30) || Integer.bitCount(chunkSize) != 1) {
            throw new IllegalArgumentException("chunkSize must be a power of two in [2, 2^30]: " + chunkSize);
        }
        shift = Integer.numberOfTrailingZeros(chunkSize);
        mask = chunkSize - 1;
    }
}

/**
 * 128 bytes before the producer fields, two cache lines: adjacent-line prefetchers fetch lines in
 * pairs. The same between the producer and consumer fields, and after the consumer fields.
 */
abstract class MpscChunkedArrayQueuePad0 extends MpscChunkedArrayQueueGeometry {
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p0a, p0b, p0c, p0d, p0e, p0f;

    MpscChunkedArrayQueuePad0(int chunkSize) {
        super(chunkSize);
    }
}

/**
 * Written by producers only (with a CAS or getAndAdd), read by the consumer only in size(); one
 * cache line. {@code unused} closes the 4-byte gap after the reference. {@code credits} is not the
 * queue's: it is the counter of a bounded owner ({@link MpscChunkedArrayQueue#credits()}), placed here
 * because every producer that takes a credit then claims a position, and one line costs one miss.
 */
abstract class MpscChunkedArrayQueueProducerFields extends MpscChunkedArrayQueuePad0 {
    long producerIndex;
    long credits;
    MpscChunkedArrayQueue.Chunk producerChunk;
    int unused1;

    MpscChunkedArrayQueueProducerFields(int chunkSize) {
        super(chunkSize);
    }
}

abstract class MpscChunkedArrayQueuePad1 extends MpscChunkedArrayQueueProducerFields {
    long p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p1a, p1b, p1c, p1d, p1e, p1f;

    MpscChunkedArrayQueuePad1(int chunkSize) {
        super(chunkSize);
    }
}

/** Written by the consumer only; read by other threads in isEmpty(), size() and a producer's restart. */
abstract class MpscChunkedArrayQueueConsumerFields extends MpscChunkedArrayQueuePad1 {
    long consumerIndex;
    MpscChunkedArrayQueue.Chunk consumerChunk;
    int unused2;

    MpscChunkedArrayQueueConsumerFields(int chunkSize) {
        super(chunkSize);
    }
}
