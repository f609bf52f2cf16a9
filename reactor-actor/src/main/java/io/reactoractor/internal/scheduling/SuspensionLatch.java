package io.reactoractor.internal.scheduling;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.BooleanSupplier;

/**
 * The suspend/wake handshake every actor kind needs once: the actor's turn suspends itself because it
 * has nothing useful to do (no downstream demand, no data for a waiting pull), and any thread that
 * changes that (a {@code request(n)}, an append, a command) wakes it. The latch stands for one unit of
 * the cell's suspend count ({@link ActorCell#suspend()}); a set latch means "that unit is held".
 *
 * <h2>States (one {@code volatile boolean}, changed only by CAS)</h2>
 * <pre>
 *   state        | event (thread)                          | next state / action
 *   -------------+-----------------------------------------+----------------------------------------------
 *   clear        | suspend(canProceed) (the actor's turn)  | cell.suspend(); clear-&gt;set; then re-check:
 *                |                                         | canProceed and set-&gt;clear wins: cell.resume(),
 *                |                                         | answers "not suspended"
 *   set          | suspend(..) (turn; only after another   | cell.suspend() then cell.resume(): the unit
 *                | unit of the cell was lifted)            | already held stands; re-check as above
 *   set          | wake() (any)                            | set-&gt;clear wins: cell.resume() (re-schedules
 *                |                                         | the actor if it has work); losers: no-op
 *   clear        | wake() (any)                            | no-op (answers false: the caller may signal)
 * </pre>
 *
 * <h2>Why the order is suspend, publish, re-check</h2>
 * The cell is suspended <em>before</em> the latch is set. A waker that runs in between sees a clear
 * latch and does nothing (or only signals, a no-op while the turn holds {@code SCHEDULED}), but it made
 * its state change first (granted demand, appended), so the turn's re-check after setting the latch
 * sees the change and lifts the unit itself. Setting the latch first would let a waker clear it and
 * call {@code resume()} on a cell that is not suspended yet: that resume would be lost and the actor
 * would stay suspended forever. All accesses are volatile (sequentially consistent): either the waker's
 * CAS sees the latch set, or the turn's re-check, which comes after the latch was set, sees the waker's
 * state change. The CAS makes the unit lifted exactly once however many threads wake at once.
 */
public final class SuspensionLatch {

    private static final VarHandle SET;

    static {
        try {
            SET = MethodHandles.lookup().findVarHandle(SuspensionLatch.class, "set", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ActorCell cell;
    @SuppressWarnings("unused") // through SET
    private volatile boolean set;

    /**
     * @param cell the actor this latch suspends
     */
    public SuspensionLatch(ActorCell cell) {
        this.cell = cell;
    }

    /**
     * The actor's turn only: suspends the actor unless {@code canProceed} says, after the latch is set,
     * that a waker changed something meanwhile.
     *
     * @param canProceed the re-check: whether the turn could go on after all
     * @return {@code true} if the actor stays suspended, {@code false} if the re-check lifted it
     */
    public boolean suspend(BooleanSupplier canProceed) {
        return suspend(canProceed, null);
    }

    /**
     * {@link #suspend(BooleanSupplier)} with a test seam: {@code afterCellSuspended} runs between
     * suspending the cell and setting the latch, the window the ordering argument is about.
     *
     * @param canProceed         the re-check
     * @param afterCellSuspended run in the window, or {@code null}
     * @return {@code true} if the actor stays suspended
     */
    public boolean suspend(BooleanSupplier canProceed, Runnable afterCellSuspended) {
        cell.suspend();
        if (afterCellSuspended != null) {
            afterCellSuspended.run();
        }
        if (!SET.compareAndSet(this, false, true)) {
            cell.resume(); // the latch already holds a unit (another unit was lifted meanwhile): keep one
        }
        if (canProceed.getAsBoolean() && SET.compareAndSet(this, true, false)) {
            cell.resume();
            return false;
        }
        return true;
    }

    /**
     * Any thread: lifts the unit if the latch holds one.
     *
     * @return {@code true} if this call lifted it (and resumed the cell)
     */
    public boolean wake() {
        if (set && SET.compareAndSet(this, true, false)) {
            cell.resume();
            return true;
        }
        return false;
    }

    /** @return whether the latch holds a unit of suspension (a volatile read) */
    public boolean isSet() {
        return set;
    }
}
