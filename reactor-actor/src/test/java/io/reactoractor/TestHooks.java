package io.reactoractor;

import io.reactoractor.internal.scheduling.SchedulerEngine;
import java.util.function.BooleanSupplier;

/** Access to package-private state of {@code io.reactoractor} for tests in other packages. */
public final class TestHooks {

    private TestHooks() {
    }

    /** @return the engine behind {@code scheduler} */
    public static SchedulerEngine engine(ActorScheduler scheduler) {
        return scheduler.engine();
    }

    /** Waits (up to {@link TestSupport#LONG}) until {@code condition} holds; fails with {@code message}. */
    public static void await(BooleanSupplier condition, String message) {
        TestSupport.await(TestSupport.LONG, condition, message);
    }
}
