package io.reactoractor.benchmarks.fairness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Smoke test: one short run yields a share for its step, and the hogs and carriers stop. No timing checks. */
class LoadedWeightsRunnerTest {

    @Test
    @Timeout(60)
    void oneShortRunMeasuresAShareAndStopsItsThreads() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LoadedWeightsRunner.Result r = LoadedWeightsRunner.run(4, 1, 1, 100, 300, 100,
                new PrintStream(out, true, StandardCharsets.UTF_8));
        assertEquals(1, r.shares().length);
        assertTrue(r.shares()[0] > 0 && r.shares()[0] < 1, "both groups ran: " + r.shares()[0]);
        assertEquals(0.2, r.expected(), 1e-9);
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("weight-1 group's share"));
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().startsWith("hog-")),
                "hog threads stopped");
    }
}
