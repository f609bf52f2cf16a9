package io.reactoractor.internal.scheduling;

import java.util.Arrays;

/**
 * The ready actors of one {@link SchedulingGroup}, ordered by {@code (vtime, seq)}: a 4-ary min-heap
 * whose keys live <em>inline</em> in two {@code long[]} next to the actor references.
 *
 * <p>Why not {@link VTimeHeap}: with thousands of ready actors the binary heap of entity references
 * spent its time on cache misses: every comparison dereferenced two actor objects to read their
 * {@code vtime}/{@code seq}, and every move wrote the moved actor's {@code heapIndex}, over
 * {@code log2(n)} levels (16 at 65,536 actors). Here a comparison reads the key arrays only (the four
 * children of a node are adjacent: one or two cache lines), the depth is {@code log4(n)} (8 at
 * 65,536), and nothing is written to the actors. The run queue only ever adds, peeks and polls
 * actors (an actor leaves the ready set only by being taken), so no index into the heap is needed.
 *
 * <p>A key is copied at {@link #add}: the run queue never changes a queued actor's virtual time (it
 * is charged at the end of its turn, when it is not queued). Not thread-safe: the run queue's lock
 * guards it.
 */
final class ReadyActorHeap {

    private static final int ARITY = 4;

    private ActorCell[] cells = new ActorCell[16];
    private long[] vtimes = new long[16];
    private long[] seqs = new long[16];
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** @return the actor with the least {@code (vtime, seq)}, or {@code null} */
    ActorCell peek() {
        return size == 0 ? null : cells[0];
    }

    /** @return the virtual time {@link #peek()} was queued with; only when not empty */
    long peekVtime() {
        return vtimes[0];
    }

    /** Adds {@code cell} with its current {@code vtime} and {@code seq} as the key. */
    void add(ActorCell cell) {
        if (size == cells.length) {
            int n = size * 2;
            cells = Arrays.copyOf(cells, n);
            vtimes = Arrays.copyOf(vtimes, n);
            seqs = Arrays.copyOf(seqs, n);
        }
        long v = cell.vtime;
        long s = cell.seq;
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) / ARITY;
            if (!less(v, s, vtimes[parent], seqs[parent])) {
                break;
            }
            set(i, cells[parent], vtimes[parent], seqs[parent]);
            i = parent;
        }
        set(i, cell, v, s);
    }

    /** Removes and returns the actor with the least key, or {@code null}. */
    ActorCell poll() {
        if (size == 0) {
            return null;
        }
        ActorCell top = cells[0];
        int last = --size;
        ActorCell moved = cells[last];
        long v = vtimes[last];
        long s = seqs[last];
        cells[last] = null;
        if (last > 0) {
            siftDown(moved, v, s, last);
        }
        return top;
    }

    private void siftDown(ActorCell cell, long v, long s, int n) {
        int i = 0;
        for (;;) {
            int first = i * ARITY + 1;
            if (first >= n) {
                break;
            }
            int end = Math.min(first + ARITY, n);
            int best = first;
            long bv = vtimes[first];
            long bs = seqs[first];
            for (int c = first + 1; c < end; c++) {
                if (less(vtimes[c], seqs[c], bv, bs)) {
                    best = c;
                    bv = vtimes[c];
                    bs = seqs[c];
                }
            }
            if (!less(bv, bs, v, s)) {
                break;
            }
            set(i, cells[best], bv, bs);
            i = best;
        }
        set(i, cell, v, s);
    }

    private void set(int i, ActorCell cell, long v, long s) {
        cells[i] = cell;
        vtimes[i] = v;
        seqs[i] = s;
    }

    private static boolean less(long v1, long s1, long v2, long s2) {
        return v1 < v2 || (v1 == v2 && s1 < s2);
    }
}
