package io.reactoractor.benchmarks.fairness;

/** CPU-bound stand-in for work: spins for a given wall time. */
final class Busy {

    private Busy() {
    }

    /** Spins for {@code nanos} and returns the nanoseconds actually spent. */
    static long burn(long nanos) {
        long start = System.nanoTime();
        long now;
        do {
            Thread.onSpinWait();
            now = System.nanoTime();
        } while (now - start < nanos);
        return now - start;
    }
}
