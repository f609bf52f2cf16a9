package io.reactoractor.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs the demo's core briefly: checks that it produces results for both schedulers, never timings. */
class FairnessDemoTest {

    @Test
    @Timeout(60)
    void shortRunProducesAResultPerScheduler() throws Exception {
        ByteArrayOutputStream live = new ByteArrayOutputStream();
        List<FairnessDemo.Result> results = FairnessDemo.runComparison(Duration.ofMillis(100),
                Duration.ofMillis(500), new PrintStream(live, true, StandardCharsets.UTF_8));

        assertEquals(2, results.size());
        assertEquals("parallel", results.get(0).scheduler());
        assertEquals("actor", results.get(1).scheduler());
        for (FairnessDemo.Result r : results) {
            assertTrue(r.lightTicks() > 0, () -> "no light ticks: " + r);
            assertTrue(r.lightUnfinished() < r.lightTicks(), () -> "light stream never ran: " + r);
            assertTrue(Double.isFinite(r.lightP50Ms()) && r.lightP50Ms() >= 0, () -> r.toString());
            assertTrue(Double.isFinite(r.lightP99Ms()) && r.lightP99Ms() >= r.lightP50Ms(), () -> r.toString());
            assertTrue(Double.isFinite(r.lightMaxMs()) && r.lightMaxMs() >= r.lightP99Ms(), () -> r.toString());
            assertTrue(r.heavyChunksPerSec() > 0, () -> "heavy stream never ran: " + r);
        }
        String out = live.toString(StandardCharsets.UTF_8);
        assertFalse(out.contains("failed"), out);

        String table = FairnessDemo.formatTable(results);
        assertTrue(table.contains("parallel") && table.contains("actor"), table);
        assertTrue(FairnessDemo.verdict(results).startsWith("Verdict: actor"));
    }

    @Test
    void percentileIsNearestRank() {
        long[] ns = {5_000_000, 1_000_000, 2_000_000, 4_000_000, 3_000_000};
        assertEquals(3.0, FairnessDemo.percentileMs(ns, 0.5));
        assertEquals(5.0, FairnessDemo.percentileMs(ns, 0.99));
        assertEquals(5.0, FairnessDemo.percentileMs(ns, 1.0));
        assertTrue(Double.isNaN(FairnessDemo.percentileMs(new long[0], 0.5)));
    }
}
