package io.reactoractor.internal.scheduling;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The carrier threads and how idle ones wait and are woken.
 *
 * <h2>Idling: spin briefly, then park</h2>
 * A carrier that finds the run queue empty spins ({@code Thread.onSpinWait()}) for a few
 * microseconds watching {@link RunQueue#readyCount()}, then registers as parked and parks. A
 * wake-up costs ~10 µs, so it is only paid when a thread really was asleep.
 *
 * <h2>At most one wake-up per submission</h2>
 * A waker counts the carrier it unparks as spinning (see {@link #idle}), so the submissions that
 * follow before that carrier runs see a spinner and wake nobody; a carrier that takes an actor while
 * more are ready wakes the next one ({@link #propagate}). Go's scheduler counts its woken threads as
 * spinning for the same reason.
 *
 * <h2>No lost wake-up (a Dekker handshake on volatile variables)</h2>
 * <pre>
 *   enqueuer:  make ready ; read spinning ; read parked
 *              (fair order: the arrivals offer's getAndAdd and slot store, both volatile, counted by
 *              readyCount() through the arrivals' indices; FIFO order: ready++, volatile, under its lock)
 *   idler:     parked++ ; spinning-- ; read ready (and the arrivals' indices) ; park
 * </pre>
 * Volatile accesses are sequentially consistent, so either the enqueuer sees the idler registered
 * (and wakes it, or leaves the work to the still-spinning idler) or the idler sees the new work
 * and does not park. A timed park is only a safety net: 1 s for a permanent carrier, so that an idle
 * scheduler costs about one wake-up per carrier and second (each costs tens of microseconds of CPU on
 * a virtual machine: at 100 ms, 0.4-1.1 ms/s per carrier, against 0 for Reactor's parked threads);
 * 100 ms for a compensating carrier, which looks whether it is still needed each time. A carrier back
 * from it that nobody woke looks at the queue once and parks again, without spinning. Nothing else
 * depends on these wake-ups: a run-next occupant stranded behind a long task is rescued by the hog
 * monitor while any carrier runs, and a graceful shutdown polls every 1 ms.
 *
 * <h2>No wake-up per message</h2>
 * The run queue is only touched when an actor goes from idle to scheduled (its status word), and
 * a wake-up is only issued when no carrier is spinning. A carrier that takes an actor while more
 * are ready wakes one more carrier (propagation), so a burst fans out over the pool.
 *
 * <h2>Compensating threads</h2>
 * While the {@link HogMonitor} counts {@code h} carriers stuck in one task, up to
 * {@code min(h, maxCompensating)} extra carriers run; each retires at its next turn boundary or
 * idle check once it is no longer needed.
 */
final class CarrierPool {

    private static final int SPIN_ITERATIONS = 256;
    /** A permanent carrier's safety-net park (see the class comment): wake-ups are its only cost at rest. */
    private static final long PARK_NANOS = 1_000_000_000L;
    /** A compensating carrier's: it looks whether it is still needed after each ({@link #shouldRetire}). */
    private static final long COMPENSATOR_PARK_NANOS = 100_000_000L;
    private static final long SHUTDOWN_POLL_NANOS = 1_000_000L;

    private final SchedulerEngine engine;
    private final RunQueue runQueue;
    /** Slots 0..threads-1: permanent carriers; the rest: compensating carriers (null when free). */
    private final AtomicReferenceArray<CarrierThread> slots;
    private final int threads;
    private final int maxCompensating;

    private final AtomicInteger spinning = new AtomicInteger();
    private final AtomicInteger parked = new AtomicInteger();
    private final AtomicInteger compensators = new AtomicInteger();
    private final AtomicInteger compensatorSeq = new AtomicInteger();
    private final java.util.concurrent.atomic.LongAdder wakeUps = new java.util.concurrent.atomic.LongAdder();
    /** Parks that ended with nobody waking the carrier (the safety-net timeout, or spurious): its cost at rest. */
    private final java.util.concurrent.atomic.LongAdder unwokenParks = new java.util.concurrent.atomic.LongAdder();

    CarrierPool(SchedulerEngine engine, int threads, int maxCompensating) {
        this.engine = engine;
        this.runQueue = engine.runQueue();
        this.threads = threads;
        this.maxCompensating = maxCompensating;
        this.slots = new AtomicReferenceArray<>(threads + maxCompensating);
    }

    void start() {
        String name = engine.config().name();
        for (int i = 0; i < threads; i++) {
            CarrierThread t = new CarrierThread(engine, name + "-" + (i + 1), false, i);
            slots.set(i, t);
            engine.threadStarting();
            t.start();
        }
    }

    /** Called after work was made ready: wakes a parked carrier unless one is spinning. */
    void onWork() {
        if (spinning.get() > 0 || parked.get() == 0) {
            return;
        }
        wakeOne();
    }

    private void wakeOne() {
        int n = slots.length();
        for (int i = 0; i < n; i++) {
            CarrierThread c = slots.get(i);
            if (c != null && c.isParked() && c.tryUnmarkParked()) {
                parked.decrementAndGet();
                spinning.incrementAndGet(); // on its behalf: it spins once it runs (see idle)
                wakeUps.increment();
                LockSupport.unpark(c);
                return;
            }
        }
    }

    void wakeAll() {
        int n = slots.length();
        for (int i = 0; i < n; i++) {
            CarrierThread c = slots.get(i);
            if (c != null) {
                if (c.tryUnmarkParked()) {
                    parked.decrementAndGet();
                    spinning.incrementAndGet(); // on its behalf, as in wakeOne
                }
                LockSupport.unpark(c);
            }
        }
    }

    /**
     * Waits for work. Returns {@code false} when the carrier must exit (the scheduler stopped, or a
     * compensating carrier is no longer needed).
     *
     * <p>The carrier counts as spinning from entry until it sees work or parks, and again from the
     * moment a waker unparks it ({@link #wakeOne} counts it on its behalf, before the unpark) until it
     * sees work or parks again. So a submission that arrives while a woken carrier is still on its way
     * back wakes nobody else: one submission wakes at most one carrier, and a burst fans out one
     * wake-up per taken actor ({@link #propagate}), not one per submission.
     */
    boolean idle(CarrierThread c) {
        spinning.incrementAndGet();
        // spin only when work may be close: on entry (a turn just ended) and after a waker's unpark; after the
        // safety-net timeout nobody submitted anything, and spinning then was most of an idle scheduler's CPU
        // (each carrier 10 times a second: 0.2-1.4 ms/s against 0 for Reactor's parked threads)
        int spins = SPIN_ITERATIONS;
        for (;;) {
            boolean ready = spinForWork(spins); // one look at least, then up to `spins` more
            if (ready || rescueRunNext(c)) {
                spinning.decrementAndGet();
                engine.hogMonitor().carrierBusy();
                return true;
            }
            c.markParked();
            parked.incrementAndGet();
            spinning.decrementAndGet();
            c.clearHogStamp();
            boolean shuttingDown = engine.isShuttingDown();
            if (runQueue.readyCount() == 0 && !engine.isStopping()) {
                // a set interrupt flag makes park return at once: the carrier would spin at a full core
                // until its next turn. No task runs here, so an interrupt that came (from outside, or left by
                // user code after a turn's last task) is nobody's: dropped, as an idle ThreadPoolExecutor
                // worker drops it
                Thread.interrupted();
                parkIdle(shuttingDown ? SHUTDOWN_POLL_NANOS
                        : c.compensating() ? COMPENSATOR_PARK_NANOS : PARK_NANOS);
            }
            if (c.tryUnmarkParked()) {
                // timed out, spurious, or the re-check above saw work: nobody counted this carrier
                parked.decrementAndGet();
                spinning.incrementAndGet();
                spins = 0; // nobody woke it: one look at the queue (above), no spin
                unwokenParks.increment();
            } else {
                spins = SPIN_ITERATIONS; // a waker moved it PARKED -> RUNNING and already counted it as spinning
            }
            if (shuttingDown) {
                engine.checkQuiescence();
            }
            if (engine.isStopping() || (c.compensating() && shouldRetire(c))) {
                spinning.decrementAndGet();
                return false;
            }
        }
    }

    /**
     * The idle loop's spin: looks at the run queue once, then up to {@code spins} more times with
     * {@code Thread.onSpinWait()} between looks. One of the two methods BlockHound's integration allows on a
     * carrier ({@code ActorBlockHoundIntegration}), with {@link #parkIdle}: they call no code but this, so the
     * rest of {@link #idle} (a graceful shutdown's termination signals, which run subscribers' code) stays
     * checked.
     *
     * @return whether an actor is ready
     */
    private boolean spinForWork(int spins) {
        boolean ready = runQueue.readyCount() > 0;
        for (int i = 0; i < spins && !ready; i++) {
            Thread.onSpinWait();
            ready = runQueue.readyCount() > 0;
        }
        return ready;
    }

    /** The idle loop's park (see {@link #spinForWork}): until a waker's unpark or the timeout. */
    private void parkIdle(long nanos) {
        LockSupport.parkNanos(this, nanos);
    }

    /**
     * Before parking: moves actors that have waited too long in another carrier's run-next slot (woken
     * by a task that then ran long) to the run queue, where this carrier takes them.
     *
     * @return whether one was moved
     */
    private boolean rescueRunNext(CarrierThread self) {
        return engine.runNext().rescueOthers(self, System.nanoTime());
    }

    /**
     * @return whether every carrier (permanent and compensating) is parked: no task runs. A carrier leaving
     *         its park is counted out before it runs anything ({@link #idle}, {@link #wakeOne})
     */
    boolean allParked() {
        return parked.get() >= threads + compensators.get();
    }

    /** @return carriers woken from their park so far */
    long wakeUps() {
        return wakeUps.sum();
    }

    /** @return parks that ended without a waker so far (safety-net timeouts, spurious returns) */
    long unwokenParks() {
        return unwokenParks.sum();
    }

    /**
     * After a take: if more actors are ready and nobody is spinning, fan out to a parked carrier. The
     * pool's counters are read first: while every carrier is busy they are rarely written, so this costs
     * two cached reads per turn instead of a read of every carrier queue's ready count (lines the other
     * carriers write at every turn).
     */
    void propagate() {
        if (parked.get() == 0 || spinning.get() > 0) {
            return;
        }
        if (runQueue.readyCount() > 0) {
            wakeOne();
        }
    }

    // ------------------------------------------------------------------ compensation

    /**
     * Starts compensating carriers until {@code min(hogged, maxCompensating)} run. A graceful shutdown
     * compensates too: the queued work it promises to run would otherwise wait behind the hog (until its
     * timeout's {@code dispose()} dropped it); only a terminated engine starts none (a carrier started in
     * the race with termination exits at its first idle check, as the others do).
     */
    void compensate(int hogged) {
        int wanted = Math.min(hogged, maxCompensating);
        for (;;) {
            int c = compensators.get();
            if (c >= wanted || engine.isStopping()) {
                return;
            }
            if (!compensators.compareAndSet(c, c + 1)) {
                continue;
            }
            int slot = freeSlot();
            if (slot < 0) {
                compensators.decrementAndGet();
                return;
            }
            CarrierThread t = new CarrierThread(engine,
                    engine.config().name() + "-comp-" + compensatorSeq.incrementAndGet(), true, slot);
            if (!slots.compareAndSet(slot, null, t)) {
                compensators.decrementAndGet();
                continue;
            }
            engine.threadStarting();
            t.start();
        }
    }

    private int freeSlot() {
        for (int i = threads; i < slots.length(); i++) {
            if (slots.get(i) == null) {
                return i;
            }
        }
        return -1;
    }

    /** Whether a compensating carrier should exit now; if so, it is already unaccounted. */
    boolean shouldRetire(CarrierThread c) {
        for (;;) {
            int n = compensators.get();
            if (n <= Math.min(engine.hogMonitor().hogged(), maxCompensating)) {
                return false;
            }
            if (compensators.compareAndSet(n, n - 1)) {
                release(c);
                return true;
            }
        }
    }

    /**
     * A compensating carrier retires: it is no longer counted as a compensator, but it keeps its slot
     * until its thread exits ({@link #exited}), so the engine's counter sums see its tasks either in its
     * slot or among the exited carriers', never in neither (a counter that drops looks like a reset).
     */
    private void release(CarrierThread c) {
        c.released = true;
    }

    /**
     * Called when a carrier exits for good, after the engine added its counters to the exited sums and
     * under the lock those sums' readers take: frees its slot (a permanent carrier's too, so a carrier is
     * never summed twice), and stops counting a compensating one that exited without retiring (shutdown).
     */
    void exited(CarrierThread c) {
        for (int i = 0; i < slots.length(); i++) {
            if (slots.get(i) == c) {
                if (slots.compareAndSet(i, c, null) && c.compensating() && !c.released) {
                    compensators.decrementAndGet();
                }
                return;
            }
        }
    }

    int compensators() {
        return compensators.get();
    }

    /** @return the most compensating carriers at once ({@code 0}: compensation disabled) */
    int maxCompensating() {
        return maxCompensating;
    }

    /** Visits every live carrier (for the hog monitor and statistics). */
    void forEach(java.util.function.Consumer<CarrierThread> action) {
        for (int i = 0; i < slots.length(); i++) {
            CarrierThread c = slots.get(i);
            if (c != null) {
                action.accept(c);
            }
        }
    }

    boolean isCarrier(Thread t) {
        return t instanceof CarrierThread && ((CarrierThread) t).engineIs(engine);
    }
}
