package io.reactoractor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.concurrent.atomic.AtomicInteger;

import io.reactoractor.internal.metrics.MetricsBinding;
import io.reactoractor.internal.scheduling.SchedulerEngine;
import io.reactoractor.internal.scheduling.SchedulerMetrics;
import io.reactoractor.internal.scheduling.SchedulingGroup;
import org.junit.jupiter.api.Test;

/**
 * The metrics SPI's calls never throw by contract (the library's Micrometer binding logs a failing registry itself);
 * a binding that throws anyway is counted as an internal error and fails neither the scheduler's construction, a
 * group's creation or disposal, nor {@code dispose()} (which threw the binding's error to its caller before).
 */
class ThrowingMetricsBindingTest {

    /** Every call of the scheduler's metrics throws. */
    static final class ThrowingBinding implements MetricsBinding {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public SchedulerMetrics schedulerMetrics(String scheduler) {
            return new SchedulerMetrics() {
                @Override
                public void bindScheduler(SchedulerEngine engine) {
                    calls.incrementAndGet();
                    throw new IllegalStateException("bindScheduler boom");
                }

                @Override
                public void bindGroup(SchedulerEngine engine, SchedulingGroup group) {
                    calls.incrementAndGet();
                    throw new IllegalStateException("bindGroup boom");
                }

                @Override
                public void unbindGroup(SchedulingGroup group) {
                    calls.incrementAndGet();
                    throw new IllegalStateException("unbindGroup boom");
                }

                @Override
                public void close() {
                    calls.incrementAndGet();
                    throw new IllegalStateException("close boom");
                }
            };
        }
    }

    @Test
    void aBindingThatThrowsIsCountedAndFailsNoLifecycleCall() throws Exception {
        ThrowingBinding binding = new ThrowingBinding();
        ActorScheduler scheduler = ActorScheduler.builder().name("throwing-metrics").threads(1).metrics(binding).build();
        ActorGroup g = scheduler.group("tenant", 2); // bindGroup throws
        java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(1);
        g.schedule(ran::countDown);
        assertThat(ran.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        g.dispose(); // unbindGroup throws
        assertThatCode(scheduler::dispose).doesNotThrowAnyException(); // close throws
        assertThat(binding.calls.get()).as("every lifecycle call reached the binding").isGreaterThanOrEqualTo(4);
        assertThat(scheduler.stats().internalErrors()).isEqualTo(binding.calls.get());
    }
}
