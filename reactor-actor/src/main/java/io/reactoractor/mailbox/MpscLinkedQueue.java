package io.reactoractor.mailbox;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * An unbounded, lock-free, multi-producer single-consumer linked queue: the mailbox of an actor.
 *
 * <h2>Algorithm</h2>
 * A singly linked list with a permanent "stub" at the head (the last consumed node). A producer
 * allocates a node, swaps it into {@code tail} with one atomic {@code getAndSet} (the only
 * contended instruction on the offer path) and then links the previous tail to it with a volatile
 * store. The consumer follows {@code head.next}.
 *
 * <h2>Memory ordering</h2>
 * <ul>
 *   <li>The node's value is written with a plain store (in its constructor) <em>before</em> the
 *       store of {@code prev.next}; the consumer reads {@code next} with acquire (or stronger), so it
 *       always sees a fully built node.</li>
 *   <li><b>The link is a volatile store, and {@link #isEmpty()} reads it with a volatile load</b>,
 *       because the actor protocol is a Dekker handshake across two variables: a producer links,
 *       then reads the actor's status word ({@code ActorCell.signal}); the consumer clears
 *       {@code SCHEDULED} with a CAS, then asks {@code isEmpty()}. With all four accesses volatile
 *       (sequentially consistent), at least one side sees the other: either the producer sees the
 *       cleared bit and schedules the actor, or the consumer sees the element and keeps it
 *       scheduled. A release store followed by a volatile load may be reordered (store-load), which
 *       would allow both to miss and the message to wait for an unrelated signal. (The counter
 *       increment that follows the link happens to be a full fence on x86, but the Java memory
 *       model gives no such guarantee.)</li>
 *   <li>Between a producer's {@code getAndSet} and its link store, the node is in the queue but not
 *       yet reachable: {@link #poll()} then returns {@code null} instead of spinning. This is safe
 *       for mailboxes because every producer signals the actor <em>after</em> {@code offer}
 *       returns, so the element is picked up by the turn that signal starts.</li>
 *   <li>{@link #isEmpty()} may be called by any thread. It reads {@code head} with acquire; a stale
 *       head only makes it answer "not empty" spuriously, never "empty" while a linked element is
 *       waiting.</li>
 * </ul>
 *
 * <p>{@link #size()} is {@code offered - consumed}: producers bump a counter that lives on the same
 * cache line as {@code tail} (which they already own for the {@code getAndSet}), the consumer bumps
 * a plain counter next to {@code head}. Exact when quiescent, approximate (never negative)
 * otherwise.
 *
 * @param <E> the element type (never {@code null})
 */
public final class MpscLinkedQueue<E> extends MpscLinkedQueueTailField<E> {

    // padding between the producer-written tail (in the superclass) and the consumer-written head
    long p10, p11, p12, p13, p14, p15, p16, p17;

    /** Consumer-owned; other threads read it only with acquire (see {@link #isEmpty()}). */
    private Node<E> head;
    /** Consumer-owned count of polled elements; read by other threads with opaque. */
    private long consumed;

    long p20, p21, p22, p23, p24, p25, p26, p27;

    private static final VarHandle HEAD;
    private static final VarHandle NEXT;
    private static final VarHandle CONSUMED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(MpscLinkedQueue.class, "head", Node.class);
            NEXT = l.findVarHandle(Node.class, "next", Node.class);
            CONSUMED = l.findVarHandle(MpscLinkedQueue.class, "consumed", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Creates an empty queue. */
    public MpscLinkedQueue() {
        Node<E> stub = new Node<>(null);
        head = stub;
        initTail(stub);
    }

    /**
     * Appends an element. Wait-free for producers apart from the single {@code getAndSet}.
     *
     * @param e the element, not {@code null}
     */
    public void offer(E e) {
        Objects.requireNonNull(e, "e");
        Node<E> n = new Node<>(e);
        Node<E> prev = swapTail(n);
        NEXT.setVolatile(prev, n); // volatile, not release: see "Memory ordering" (Dekker with the status word)
        countOffer();
    }

    /**
     * Removes the head element. Consumer thread only.
     *
     * @return the element, or {@code null} if none is linked yet
     */
    public E poll() {
        Node<E> h = head;
        @SuppressWarnings("unchecked")
        Node<E> next = (Node<E>) NEXT.getAcquire(h);
        if (next == null) {
            return null;
        }
        E v = next.value;
        next.value = null;
        HEAD.setRelease(this, next);
        CONSUMED.setOpaque(this, consumed + 1);
        // unlink the old stub so a retained reference to it does not keep the whole chain alive
        NEXT.setOpaque(h, h);
        return v;
    }

    /**
     * Reads the head element without removing it. Consumer thread only.
     *
     * @return the element, or {@code null} if none is linked yet
     */
    public E peek() {
        @SuppressWarnings("unchecked")
        Node<E> next = (Node<E>) NEXT.getAcquire(head);
        return next == null ? null : next.value;
    }

    /**
     * Whether no element is linked. Any thread; may spuriously answer {@code false} (see class doc).
     *
     * @return {@code true} if no element is waiting
     */
    public boolean isEmpty() {
        @SuppressWarnings("unchecked")
        Node<E> h = (Node<E>) HEAD.getAcquire(this);
        Object next = NEXT.getVolatile(h); // volatile: the consumer's half of the Dekker handshake
        // a consumed node points to itself: the head moved on, treat as "maybe not empty"
        return next == null;
    }

    /**
     * An estimate of the number of elements. Any thread; exact when quiescent.
     *
     * @return the number of waiting elements, never negative
     */
    public int size() {
        long s = offered() - (long) CONSUMED.getOpaque(this);
        return s <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, s);
    }

    static final class Node<E> {
        E value;
        volatile Node<E> next;

        Node(E value) {
            this.value = value;
        }
    }
}

/** Holds the producer-side tail, padded away from the consumer's head. */
abstract class MpscLinkedQueueTailPad {
    long p00, p01, p02, p03, p04, p05, p06, p07;
}

abstract class MpscLinkedQueueTailField<E> extends MpscLinkedQueueTailPad {
    private volatile MpscLinkedQueue.Node<E> tail;
    /** Producers' count of offers, on the tail's cache line (already contended by them). */
    private volatile long offered;

    private static final VarHandle TAIL;
    private static final VarHandle OFFERED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            TAIL = l.findVarHandle(MpscLinkedQueueTailField.class, "tail", MpscLinkedQueue.Node.class);
            OFFERED = l.findVarHandle(MpscLinkedQueueTailField.class, "offered", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final void initTail(MpscLinkedQueue.Node<E> stub) {
        TAIL.setRelease(this, stub);
    }

    @SuppressWarnings("unchecked")
    final MpscLinkedQueue.Node<E> swapTail(MpscLinkedQueue.Node<E> n) {
        return (MpscLinkedQueue.Node<E>) TAIL.getAndSet(this, n);
    }

    final void countOffer() {
        OFFERED.getAndAdd(this, 1L);
    }

    final long offered() {
        return (long) OFFERED.getOpaque(this);
    }
}
