package io.reactoractor.internal.scheduling;

/**
 * The ready actors of one {@link SchedulingGroup}, taken in virtual-time order at the resolution of a
 * bucket ({@value #BUCKET_NANOS} ns of virtual time): a calendar queue whose cost per operation does
 * not grow with the number of ready actors, with an exact heap for small sets and for the few
 * actors outside the calendar's window.
 *
 * <h2>Why</h2>
 * With tens of thousands of ready actors in one group (a tenant running 65,536 streams), the exact
 * 4-ary heap ({@link ReadyActorHeap}) spent each turn on cache misses: a {@code poll} sifts through
 * {@code log4(n)} levels of key arrays larger than the L2 cache. Ordering within a few tens of
 * microseconds of virtual time is all fairness needs (a turn's minimum slice is 500 µs), so actors
 * whose virtual times fall in the same bucket are taken first-in first-out, and a bucket is found by
 * scanning an occupancy bitmap of {@value #BUCKETS} bits (4 words).
 *
 * <p>A bucket is an array, not a list threaded through the actors: linking a queued actor to the next
 * stored a reference into one long-lived actor pointing at another, usually in another heap region,
 * so every add dirtied a card of its own that G1's concurrent refinement then had to scan (with
 * 65,536 ready actors, refinement took 27 % of the CPU against FIFO order's 17 %). Consecutive adds
 * to an array share its cards.
 *
 * <h2>Structure</h2>
 * <ul>
 *   <li><b>Small sets</b> (fewer than {@value #RING_THRESHOLD} ready actors when an actor arrives)
 *       live in the exact heap only; the calendar's arrays are not even allocated, so the 10,000
 *       small groups of a pull consumer cost nothing extra.</li>
 *   <li><b>The ring</b>: {@value #BUCKETS} buckets, each a first-in first-out circular array of
 *       actors (allocated when the bucket is first used, doubled when full, dropped when it empties
 *       after growing past {@value #KEPT_BUCKET_CAPACITY}; no allocation per operation in steady
 *       state). Ring slot {@code cursor} holds absolute bucket {@code base} ({@code vtime >> SHIFT});
 *       the window covers {@code BUCKETS} buckets from there (about 16.8 ms of virtual time). Taking
 *       an actor moves {@code base} up to its bucket, which frees the slots behind it for later
 *       virtual times.</li>
 *   <li><b>Below the window</b>, an actor slides the window down to its bucket if everything in the
 *       ring still fits (a group's waking actors are placed a little below the actors already queued:
 *       without the slide, every window started by a high arrival sent them all to the heap).</li>
 *   <li><b>Outside the window</b> otherwise (a sleeper placed far below the floor, an actor far ahead
 *       after a long task) an actor goes to the exact heap. {@link #poll} compares the heap's head with the first
 *       bucket's head, so the order stays exact between buckets wherever each actor lives.</li>
 * </ul>
 * Guarantee (tested in {@code ReadyActorQueueTest}): every {@link #poll} returns an actor of the
 * lowest bucket present; actors of one bucket in the ring come out in the order they were added.
 * Not thread-safe: the run queue's lock guards it. A queued actor's virtual time never changes.
 */
final class ReadyActorQueue {

    /** log2 of a bucket's width in nanoseconds of virtual time. */
    static final int SHIFT = 16;
    /** A bucket's width: 65,536 ns (65.5 µs) of virtual time. */
    static final long BUCKET_NANOS = 1L << SHIFT;
    /** Buckets in the ring (a power of two, a multiple of 64): a window of about 16.8 ms. */
    static final int BUCKETS = 256;
    /** From this many ready actors on, arrivals go to the ring. */
    static final int RING_THRESHOLD = 64;

    private static final int MASK = BUCKETS - 1;
    private static final int WORDS = BUCKETS / 64;

    private final ReadyActorHeap heap = new ReadyActorHeap();

    /** A bucket's capacity when first used (a power of two). */
    static final int FIRST_BUCKET_CAPACITY = 16;
    /** A bucket that empties with at most this capacity keeps its array; a larger one drops it. */
    static final int KEPT_BUCKET_CAPACITY = 64;

    // the ring: null while the group is small
    /** Per ring slot: a circular array (capacity a power of two) of its bucket's actors, or null. */
    private ActorCell[][] buckets;
    /** Per ring slot: where its bucket's first actor is in its array. */
    private int[] bucketHead;
    /** Per ring slot: how many actors its bucket holds. */
    private int[] bucketSize;
    private long[] occupied;
    /** Absolute bucket number held by ring slot {@link #cursor}. */
    private long base;
    /**
     * At least the highest absolute bucket in the ring (exact after adds; polls leave it, so it may be
     * stale-high, which only makes the window slide down less often). Valid while the ring is not empty.
     */
    private long top;
    private int cursor;
    private int inRing;

    int size() {
        return inRing + heap.size();
    }

    boolean isEmpty() {
        return inRing == 0 && heap.isEmpty();
    }

    /** @return how many actors are in the exact heap; for tests */
    int heapSize() {
        return heap.size();
    }

    /** @return whether the ring's arrays are allocated (a large group); for tests */
    boolean hasRing() {
        return buckets != null;
    }

    /** @return the slots of the ring's bucket arrays together (0 without a ring); for tests */
    int ringCapacity() {
        int c = 0;
        if (buckets != null) {
            for (ActorCell[] b : buckets) {
                c += b == null ? 0 : b.length;
            }
        }
        return c;
    }

    /** Adds {@code cell}, keyed by its current {@code vtime} (and {@code seq} in the heap). */
    void add(ActorCell cell) {
        if (buckets == null) {
            if (heap.size() < RING_THRESHOLD) {
                heap.add(cell);
                return;
            }
            buckets = new ActorCell[BUCKETS][];
            bucketHead = new int[BUCKETS];
            bucketSize = new int[BUCKETS];
            occupied = new long[WORDS];
        }
        long bucket = cell.vtime >> SHIFT;
        if (inRing == 0) {
            base = bucket; // an empty ring starts its window at the newcomer
            cursor = 0;
            top = bucket;
        }
        long d = bucket - base;
        if (d < 0 && top - bucket < BUCKETS) {
            // below the window, but the ring's entries (all in [base, top]) still fit above it: slide
            // the window down. The slots between the new cursor and the old one are empty (no entry is
            // below base), and every entry keeps its slot: (cursor + bucket - base) is unchanged.
            cursor = (int) ((cursor + d) & MASK);
            base = bucket;
            d = 0;
        }
        if (d < 0 || d >= BUCKETS) {
            heap.add(cell);
            return;
        }
        if (bucket > top) {
            top = bucket;
        }
        int i = (int) ((cursor + d) & MASK);
        ActorCell[] b = buckets[i];
        int n = bucketSize[i];
        if (b == null) {
            b = new ActorCell[FIRST_BUCKET_CAPACITY];
            buckets[i] = b;
            bucketHead[i] = 0;
        } else if (n == b.length) {
            b = grow(i, b);
        }
        b[(bucketHead[i] + n) & (b.length - 1)] = cell;
        bucketSize[i] = n + 1;
        if (n == 0) {
            occupied[i >>> 6] |= 1L << i;
        }
        inRing++;
    }

    /** Replaces the full array {@code b} of ring slot {@code i} by one twice as large, same order. */
    private ActorCell[] grow(int i, ActorCell[] b) {
        int n = b.length;
        if (n >= 1 << 30) {
            throw new IllegalStateException("a ready-queue bucket cannot hold more than " + n + " actors");
        }
        ActorCell[] bigger = new ActorCell[n << 1];
        int h = bucketHead[i];
        System.arraycopy(b, h, bigger, 0, n - h);
        System.arraycopy(b, 0, bigger, n - h, h);
        buckets[i] = bigger;
        bucketHead[i] = 0;
        return bigger;
    }

    /** The first actor of the bucket in the occupied ring slot {@code i}. */
    private ActorCell first(int i) {
        return buckets[i][bucketHead[i]];
    }

    /** @return the actor {@link #poll} would return, or {@code null} */
    ActorCell peek() {
        int i = firstOccupied();
        if (i < 0) {
            return heap.peek();
        }
        ActorCell r = first(i);
        return heapFirst(r) ? heap.peek() : r;
    }

    /** @return the virtual time of {@link #peek()}; only when not empty */
    long peekVtime() {
        int i = firstOccupied();
        if (i < 0) {
            return heap.peekVtime();
        }
        ActorCell r = first(i);
        return heapFirst(r) ? heap.peekVtime() : r.vtime;
    }

    /** Removes and returns an actor of the lowest bucket present, or {@code null}. */
    ActorCell poll() {
        int i = firstOccupied();
        if (i < 0) {
            return heap.poll();
        }
        ActorCell[] b = buckets[i];
        int h = bucketHead[i];
        ActorCell r = b[h];
        if (heapFirst(r)) {
            return heap.poll();
        }
        b[h] = null; // a dequeued actor must not stay reachable from here
        int n = bucketSize[i] - 1;
        bucketSize[i] = n;
        if (n == 0) {
            occupied[i >>> 6] &= ~(1L << i);
            bucketHead[i] = 0;
            if (b.length > KEPT_BUCKET_CAPACITY) {
                buckets[i] = null; // a burst's array is not kept for the quiet times after it
            }
        } else {
            bucketHead[i] = (h + 1) & (b.length - 1);
        }
        // slide the window up to the bucket just served: every ring entry is at or above it
        base += (i - cursor) & MASK;
        cursor = i;
        if (--inRing == 0 && heap.size() < RING_THRESHOLD / 2) {
            buckets = null; // shrunk: give the arrays back, a small group lives in the heap again
            bucketHead = null;
            bucketSize = null;
            occupied = null;
        }
        return r;
    }

    /** Whether the heap's head comes before {@code ringHead} (by virtual time, then arrival). */
    private boolean heapFirst(ActorCell ringHead) {
        if (heap.isEmpty()) {
            return false;
        }
        long hv = heap.peekVtime();
        return hv < ringHead.vtime || (hv == ringHead.vtime && heap.peek().seq < ringHead.seq);
    }

    /** @return the ring slot of the lowest occupied bucket (scanning from {@link #cursor}), or -1 */
    private int firstOccupied() {
        if (inRing == 0) {
            return -1;
        }
        int w = cursor >>> 6;
        long bits = occupied[w] & (-1L << (cursor & 63)); // slots at or after the cursor in its word
        for (int k = 0; k <= WORDS; k++) {
            if (bits != 0) {
                return (w << 6) + Long.numberOfTrailingZeros(bits);
            }
            w = (w + 1) & (WORDS - 1);
            bits = occupied[w];
        }
        throw new IllegalStateException("ring count " + inRing + " but no occupied bucket");
    }
}
