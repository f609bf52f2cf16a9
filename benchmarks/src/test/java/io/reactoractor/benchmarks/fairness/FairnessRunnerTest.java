package io.reactoractor.benchmarks.fairness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Smoke test: every scenario runs briefly for every scheduler and yields finite numbers. No timing checks. */
class FairnessRunnerTest {

    @Test
    @Timeout(120)
    void shortRunReportsEveryScheduler() throws Exception {
        FairnessRunner.Options o = FairnessRunner.Options.defaults()
                .withDuration(Duration.ofMillis(300), Duration.ofMillis(100));
        FairnessReport report = FairnessRunner.run(o,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));

        assertEquals(Peer.values().length, report.latency().size());
        Set<Peer> seen = EnumSet.noneOf(Peer.class);
        for (LatencyResult r : report.latency()) {
            seen.add(r.peer());
            assertTrue(r.samples() > 0, () -> "light worker never ran: " + r);
            for (double v : new double[] {r.p50Ms(), r.p99Ms(), r.p999Ms(), r.maxMs(), r.heavyBusyMsPerSec()}) {
                assertTrue(Double.isFinite(v) && v >= 0, () -> "not a finite number: " + r);
            }
            assertTrue(r.p50Ms() <= r.p99Ms() && r.p99Ms() <= r.p999Ms() && r.p999Ms() <= r.maxMs(), r::toString);
        }
        assertEquals(EnumSet.allOf(Peer.class), seen);

        assertEquals(o.groupScenarios().size() * Peer.values().length, report.groups().size());
        for (GroupResult g : report.groups()) {
            assertEquals(g.workersPerGroup().length, g.shares().length);
            double sum = 0;
            for (double s : g.shares()) {
                assertTrue(Double.isFinite(s) && s >= 0, () -> "bad share in " + g);
                sum += s;
            }
            assertEquals(1.0, sum, 1e-9);
            assertTrue(Double.isFinite(g.jain()) && g.jain() > 0 && g.jain() <= 1.0 + 1e-9, () -> "jain " + g.jain());
            assertTrue(g.busyMsPerSec() > 0);
        }

        String md = report.toMarkdown();
        for (Peer p : Peer.values()) {
            assertTrue(md.contains("| " + p.label() + " |"), md);
        }
        assertTrue(md.contains("| p99 |") && md.contains("Jain") && md.contains("fair / FIFO"), md);
    }

    @Test
    void jainIndex() {
        assertEquals(1.0, GroupResult.jain(new double[] {3, 3, 3}), 1e-12);
        assertEquals(0.5, GroupResult.jain(new double[] {1, 0}), 1e-12);
        assertEquals(1.0 / 1.36, GroupResult.jain(new double[] {0.2, 0.8}), 1e-12);
    }

    @Test
    void parsesArguments() {
        FairnessRunner.Options q = FairnessRunner.parse(new String[] {"--quick"});
        assertEquals(Duration.ofSeconds(1), q.duration());
        FairnessRunner.Options d = FairnessRunner.parse(new String[] {"500ms", "--quick", "--threads=3"});
        assertEquals(Duration.ofMillis(500), d.duration());
        assertEquals(3, d.threads());
        assertEquals(Duration.ofSeconds(7), FairnessRunner.parse(new String[] {"7"}).duration());
        assertEquals(Duration.ofSeconds(5), FairnessRunner.parse(new String[] {"5s"}).duration());
    }
}
