package io.reactoractor.benchmarks.fairness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Smoke test: every scenario runs once for every peer in a tiny configuration and yields sane numbers,
 * Markdown, CSV and PNG. No timing checks: only that results exist, are finite, shares sum to 1 and the
 * light work ran where no peer is expected to starve it.
 */
class FairnessRunnerTest {

    @BeforeAll
    static void headless() {
        System.setProperty("java.awt.headless", "true");
    }

    @Test
    @Timeout(120)
    void everyScenarioRunsOnEveryPeerAndIsWrittenAsMarkdownCsvAndPng(@TempDir Path dir) throws Exception {
        FairnessRunner.Options o = FairnessRunner.Options.defaults()
                .withDuration(Duration.ofMillis(200), Duration.ofMillis(50)).withSample(Duration.ofMillis(50));
        FairnessReport report = FairnessRunner.run(o,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));

        for (Scenario s : Scenario.values()) {
            List<ScenarioResult> rs = report.results(s);
            Set<Peer> peers = rs.stream().map(ScenarioResult::peer).collect(Collectors.toSet());
            assertEquals(Set.of(Peer.values()), peers, s::id);
            // publish-on: Reactor's operator on every peer, the actor operator on the ActorScheduler peers
            assertEquals(s == Scenario.PUBLISH_ON ? Peer.values().length + 2 : Peer.values().length, rs.size(), s::id);
            for (ScenarioResult r : rs) {
                checkResult(r);
            }
        }

        String md = report.toMarkdown();
        for (ScenarioResult r : report.results()) {
            assertTrue(md.contains(" " + r.series() + " |"), r::series);
        }
        for (Scenario s : Scenario.values()) {
            assertTrue(md.contains("(`" + s.id() + "`)"), s::id);
        }
        assertTrue(md.contains("| light p99.9 (ms) |") && md.contains("fair / qmq-pq") && md.contains("Cost of fairness"),
                md);

        List<Path> csv = CsvExport.write(report, dir.resolve("csv"));
        assertEquals(Scenario.values().length, csv.size());
        for (Path f : csv) {
            checkCsv(f, report);
        }

        List<Path> png = Charts.write(report, dir.resolve("png"));
        long delayScenarios = report.scenarios().stream()
                .filter(s -> report.results(s).stream().anyMatch(r -> r.delay() != null)).count();
        assertEquals(Scenario.values().length + delayScenarios, png.size());
        for (Path f : png) {
            BufferedImage img = ImageIO.read(f.toFile());
            assertNotNull(img, f::toString);
            assertTrue(img.getWidth() >= 600 && img.getHeight() >= 300, f::toString);
            assertTrue(colouredPixels(img) > 1000, () -> "no lines drawn in " + f);
        }
    }

    private static void checkResult(ScenarioResult r) {
        String id = r.scenario().id() + " / " + r.series();
        assertEquals(r.names().size(), r.shares().length, id);
        double sum = 0;
        for (double s : r.shares()) {
            assertTrue(Double.isFinite(s) && s >= 0 && s <= 1, id);
            sum += s;
        }
        assertEquals(1.0, sum, 1e-9, id);
        if (r.fairShares() != null) {
            assertEquals(r.shares().length, r.fairShares().length, id);
        }
        assertTrue(Double.isFinite(r.busyMsPerSec()) && r.busyMsPerSec() > 0, id);
        assertTrue(!r.metrics().isEmpty(), id);

        ShareTimeline t = r.timeline();
        assertTrue(t.timesSec().length >= 4, id); // 200 ms window / 50 ms samples
        for (double[] interval : t.shares()) {
            double s = 0;
            for (double x : interval) {
                s += x;
            }
            assertTrue(Double.isNaN(s) || Math.abs(s - 1) < 1e-9, id);
        }

        DelayResult d = r.delay();
        boolean delayed = r.scenario() == Scenario.LIGHT || r.scenario() == Scenario.CHURN
                || r.scenario() == Scenario.OUTSIDE || r.scenario() == Scenario.PUBLISH_ON
                || r.scenario() == Scenario.TENANT;
        if (!delayed) {
            assertNull(d, id);
            return;
        }
        assertNotNull(d, id);
        assertTrue(d.submitted() > 0, id);
        assertEquals(d.submitted(), d.samples() + d.unfinished(), id);
        // Reactor's publishOn drain loops may legitimately starve the light stream; so may every peer but
        // the fair one behind 4,096 busy actors in this tiny window (FIFO and qmq-pq run each of them for a
        // whole quota before the light one: a round takes seconds); nothing else should
        boolean mayStarve = r.scenario() == Scenario.PUBLISH_ON
                && r.variant().equals(HotStreams.Operator.PUBLISH_ON.label())
                || r.scenario() == Scenario.TENANT && r.peer() != Peer.ACTOR_FAIR;
        if (!mayStarve) {
            assertTrue(d.samples() > 0, () -> "histogram empty: " + id + " " + d);
        }
        if (d.samples() > 0) {
            assertTrue(d.p50Ms() <= d.p99Ms() && d.p99Ms() <= d.p999Ms() && d.p999Ms() <= d.maxMs(), id);
            double[][] cdf = d.cdf();
            assertTrue(cdf[0].length > 0, id);
            for (int i = 1; i < cdf[0].length; i++) {
                assertTrue(cdf[0][i] > cdf[0][i - 1] && cdf[1][i] >= cdf[1][i - 1], id);
            }
            assertTrue(cdf[1][cdf[1].length - 1] <= 1.0 + 1e-9, id);
        }
    }

    private static void checkCsv(Path f, FairnessReport report) throws Exception {
        List<String> lines = Files.readAllLines(f);
        assertEquals(CsvExport.HEADER, lines.get(0));
        String id = f.getFileName().toString().replace(".csv", "");
        Scenario s = Scenario.fromId(id);
        for (ScenarioResult r : report.results(s)) {
            String prefix = CsvExport.quote(r.series()) + ",";
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("metric," + prefix)), f + " " + r.series());
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("share," + prefix)), f + " " + r.series());
            if (r.delay() != null && r.delay().samples() > 0) {
                assertTrue(lines.stream().anyMatch(l -> l.startsWith("delay_cdf," + prefix)), f + " " + r.series());
            }
        }
        for (String l : lines.subList(1, lines.size())) {
            assertTrue(l.startsWith("metric,") || l.startsWith("share,") || l.startsWith("delay_cdf,"), l);
        }
    }

    private static int colouredPixels(BufferedImage img) {
        int n = 0;
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                int rgb = img.getRGB(x, y);
                int r = (rgb >> 16) & 0xff;
                int g = (rgb >> 8) & 0xff;
                int b = rgb & 0xff;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    n++;
                }
            }
        }
        return n;
    }

    @Test
    void jainIndex() {
        assertEquals(1.0, ScenarioResult.jain(new double[] {3, 3, 3}), 1e-12);
        assertEquals(0.5, ScenarioResult.jain(new double[] {1, 0}), 1e-12);
        assertEquals(1.0 / 1.36, ScenarioResult.jain(new double[] {0.2, 0.8}), 1e-12);
        // weighted: shares exactly proportional to weights 1:2:4 are perfectly fair once divided by the weights
        assertEquals(1.0, ScenarioResult.jain(new double[] {1 / 7.0 / 1, 2 / 7.0 / 2, 4 / 7.0 / 4}), 1e-12);
    }

    @Test
    void parsesArguments() {
        FairnessRunner.Command q = FairnessRunner.parse(new String[] {"--quick"});
        assertEquals(Duration.ofSeconds(3), q.options().duration());
        assertEquals(Duration.ofMillis(500), q.options().warmup());
        assertNull(q.csvDir());
        FairnessRunner.Command d = FairnessRunner.parse(new String[] {"500ms", "--quick", "--threads=3",
            "--sample=20ms", "--csv=out/csv", "--png=out/png", "--peers=tpe,qmq-pq", "--scenarios=light,churn"});
        assertEquals(Duration.ofMillis(500), d.options().duration());
        assertEquals(3, d.options().threads());
        assertEquals(Duration.ofMillis(20), d.options().sample());
        assertEquals(Path.of("out/csv"), d.csvDir());
        assertEquals(Path.of("out/png"), d.pngDir());
        assertEquals(List.of(Peer.TPE, Peer.QMQ_PQ), d.options().peers());
        assertEquals(List.of(Scenario.LIGHT, Scenario.CHURN), d.options().scenarios());
        assertEquals(Duration.ofSeconds(7), FairnessRunner.parse(new String[] {"7"}).options().duration());
        assertEquals(Duration.ofSeconds(5), FairnessRunner.parse(new String[] {"5s"}).options().duration());
        assertThrows(IllegalArgumentException.class, () -> FairnessRunner.parse(new String[] {"--scenarios=nope"}));
        assertThrows(IllegalArgumentException.class, () -> FairnessRunner.parse(new String[] {"--bogus"}));
    }

    @Test
    void csvQuotesFieldsWithCommasAndQuotes() {
        assertEquals("plain", CsvExport.quote("plain"));
        assertEquals("\"group of 1,000 workers\"", CsvExport.quote("group of 1,000 workers"));
        assertEquals("\"say \"\"hi\"\"\"", CsvExport.quote("say \"hi\""));
    }

    @Test
    void everyScenarioHasADescription() {
        List<String> missing = new ArrayList<>();
        for (Scenario s : Scenario.values()) {
            if (s.describe(FairnessRunner.Options.defaults()).isBlank()) {
                missing.add(s.id());
            }
        }
        assertTrue(missing.isEmpty(), missing::toString);
    }
}
