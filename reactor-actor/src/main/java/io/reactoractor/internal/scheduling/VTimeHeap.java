package io.reactoractor.internal.scheduling;

import java.util.Arrays;

/**
 * An indexed binary min-heap of {@link SchedulingEntity entities} ordered by
 * {@code (vtime, seq)}. Each entity stores its own index so it can be removed or re-sifted in
 * {@code O(log n)} when its virtual time changes. Not thread-safe: the run queue's lock guards it.
 *
 * @param <T> the entity type
 */
final class VTimeHeap<T extends SchedulingEntity> {

    private SchedulingEntity[] items = new SchedulingEntity[16];
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    @SuppressWarnings("unchecked")
    T peek() {
        return size == 0 ? null : (T) items[0];
    }

    void add(T e) {
        if (e.heapIndex >= 0) {
            throw new IllegalStateException("already queued");
        }
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        int i = size++;
        items[i] = e;
        e.heapIndex = i;
        siftUp(i);
    }

    @SuppressWarnings("unchecked")
    T poll() {
        if (size == 0) {
            return null;
        }
        T top = (T) items[0];
        removeAt(0);
        return top;
    }

    /** Removes {@code e} if it is in this heap. */
    boolean remove(T e) {
        int i = e.heapIndex;
        if (i < 0 || i >= size || items[i] != e) {
            return false;
        }
        removeAt(i);
        return true;
    }

    /** Restores the heap order after {@code e}'s virtual time changed. */
    void update(T e) {
        int i = e.heapIndex;
        if (i < 0 || i >= size || items[i] != e) {
            return;
        }
        if (!siftUp(i)) {
            siftDown(i);
        }
    }

    private void removeAt(int i) {
        SchedulingEntity removed = items[i];
        removed.heapIndex = -1;
        int last = --size;
        if (i != last) {
            SchedulingEntity moved = items[last];
            items[i] = moved;
            moved.heapIndex = i;
            items[last] = null;
            if (!siftUp(i)) {
                siftDown(i);
            }
        } else {
            items[last] = null;
        }
    }

    private static boolean less(SchedulingEntity a, SchedulingEntity b) {
        return a.vtime < b.vtime || (a.vtime == b.vtime && a.seq < b.seq);
    }

    private boolean siftUp(int i) {
        SchedulingEntity e = items[i];
        int start = i;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            SchedulingEntity p = items[parent];
            if (!less(e, p)) {
                break;
            }
            items[i] = p;
            p.heapIndex = i;
            i = parent;
        }
        items[i] = e;
        e.heapIndex = i;
        return i != start;
    }

    private void siftDown(int i) {
        SchedulingEntity e = items[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            SchedulingEntity c = items[child];
            int right = child + 1;
            if (right < size && less(items[right], c)) {
                child = right;
                c = items[child];
            }
            if (!less(c, e)) {
                break;
            }
            items[i] = c;
            c.heapIndex = i;
            i = child;
        }
        items[i] = e;
        e.heapIndex = i;
    }
}
