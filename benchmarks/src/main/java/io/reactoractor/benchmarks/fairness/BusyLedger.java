package io.reactoractor.benchmarks.fairness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * Busy time measured by the tasks themselves, per named consumer (a group of actors, one actor, a
 * stream). Shares are computed from these sums, never from a scheduler's own statistics, so every peer
 * is measured the same way.
 */
final class BusyLedger {

    private final List<String> names = new ArrayList<>();
    private final List<LongAdder> busy = new ArrayList<>();

    /** Adds a consumer; call before the load starts. */
    LongAdder add(String name) {
        LongAdder a = new LongAdder();
        names.add(name);
        busy.add(a);
        return a;
    }

    List<String> names() {
        return List.copyOf(names);
    }

    /** Busy nanoseconds completed so far, per consumer, in the order they were added. */
    long[] snapshot() {
        long[] r = new long[busy.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = busy.get(i).sum();
        }
        return r;
    }
}
