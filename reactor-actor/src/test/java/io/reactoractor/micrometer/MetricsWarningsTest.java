package io.reactoractor.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.distribution.pause.PauseDetector;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.util.TestLogger;
import reactor.util.Loggers;

/**
 * The warnings the Micrometer binding promises, each logged through Reactor's {@code Loggers} when it happens (the
 * loggers are looked up then, so the capture below works whatever ran before in this JVM): a namesake ring left
 * unmetered, a scheduler whose meter ids another owner holds, a timer whose {@code record} fails (once per timer, so
 * a second failing timer is logged too).
 */
class MetricsWarningsTest {

    private final TestLogger log = new TestLogger(false);

    @BeforeEach
    void capture() {
        Loggers.useCustomLoggers(name -> log);
    }

    @AfterEach
    void release() {
        Loggers.resetLoggerFactory();
    }

    private String logged() {
        return log.getErrContent() + log.getOutContent();
    }

    @Test
    void aSecondLiveRingOfTheSameNameIsNotMeteredAndSaysSo() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ActorScheduler s = ActorScheduler.builder().name("namesake").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            RingBuffer<Integer> first = RingBuffer.<Integer>builder(s).name("dup").size(8).build();
            first.handleEventsWith(first.consumer("c", (e, seq, end) -> null));
            first.start();
            assertThat(logged()).doesNotContain("not metered");
            RingBuffer<Integer> second = RingBuffer.<Integer>builder(s).name("dup").size(8).build();
            second.handleEventsWith(second.consumer("c", (e, seq, end) -> null));
            second.start();
            assertThat(registry.find("reactor.actor.ring.cursor").meters()).hasSize(1);
            assertThat(logged()).contains("ring dup").contains("is not metered: a live ring of the same name");
        } finally {
            s.dispose();
        }
    }

    @Test
    void aSecondSchedulerOfTheSameNameGetsNoneOfItsMetersAndSaysSo() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ActorScheduler a = ActorScheduler.builder().name("twin").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        ActorScheduler b = ActorScheduler.builder().name("twin").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            assertThat(logged()).contains("meter reactor.actor.completed")
                    .contains("is already registered by another owner");
        } finally {
            a.dispose();
            b.dispose();
        }
    }

    @Test
    void aFailingTimerIsLoggedOnceAndASecondFailingTimerToo() throws Exception {
        AtomicInteger failures = new AtomicInteger();
        SimpleMeterRegistry registry = new SimpleMeterRegistry() {
            @Override
            protected Timer newTimer(Meter.Id id, DistributionStatisticConfig config, PauseDetector pauseDetector) {
                Timer real = super.newTimer(id, config, pauseDetector);
                return (Timer) java.lang.reflect.Proxy.newProxyInstance(Timer.class.getClassLoader(),
                        new Class<?>[] {Timer.class}, (proxy, method, args) -> {
                            if (method.getName().equals("record")) {
                                failures.incrementAndGet();
                                throw new IllegalStateException("record refused");
                            }
                            return method.invoke(real, args);
                        });
            }
        };
        ActorScheduler s = ActorScheduler.builder().name("failing-timers").threads(1)
                .metrics(MicrometerActorMetrics.of(registry)).build();
        try {
            for (String group : new String[] {"g1", "g2"}) { // each group has its scheduling-delay timer
                CountDownLatch ran = new CountDownLatch(20);
                for (int i = 0; i < 20; i++) {
                    s.group(group, 1).schedule(ran::countDown);
                }
                assertThat(ran.await(10, TimeUnit.SECONDS)).as("the work goes on").isTrue();
            }
            assertThat(failures.get()).as("samples refused").isGreaterThanOrEqualTo(2);
            String logged = logged();
            assertThat(count(logged, "recording on timer")).as(logged).isEqualTo(2);
            assertThat(logged).contains("tag(group=g1)").contains("tag(group=g2)");
        } finally {
            s.dispose();
        }
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }
}
