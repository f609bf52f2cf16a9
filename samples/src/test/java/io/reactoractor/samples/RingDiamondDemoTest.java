package io.reactoractor.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Short run of the ring demo: checks what holds by construction (delivery, order, lag bound), never timings. */
class RingDiamondDemoTest {

    @Test
    @Timeout(120)
    void diamondDeliversEverythingInOrderAndNoConsumerLagsMoreThanTheRing() {
        ActorScheduler scheduler = ActorScheduler.builder().name("ring-demo-test").threads(2).build();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            RingDiamondDemo.Result r = RingDiamondDemo.run(scheduler, 50_000, 1_000, Duration.ofMillis(5), out);
            String printed = bytes.toString(StandardCharsets.UTF_8);
            assertEquals(50_000, r.received(), printed);
            assertTrue(r.inOrder(), printed);
            assertEquals(java.util.Set.of("journal", "replicate", "match"), r.maxLag().keySet());
            r.maxLag().forEach((name, lag) -> assertTrue(lag <= RingDiamondDemo.RING_SIZE,
                    name + " lagged " + lag + " > ring size\n" + printed));
            if (r.reports() > 0) {
                assertTrue(printed.contains("lag journal="), printed);
                assertTrue(printed.contains(" replicate=") && printed.contains(" match="), printed);
            }
        } finally {
            scheduler.dispose();
        }
    }
}
