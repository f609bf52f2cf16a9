package io.reactoractor.benchmarks.fairness;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes one CSV per scenario, {@code <scenario id>.csv}, in long format with the header
 * {@code kind,series,name,x,y} so that any tool can filter and plot it:
 * <ul>
 *   <li>{@code metric}: a table row; {@code name} = metric, {@code y} = value (empty if none), also one row
 *       {@code share: <consumer>} per consumer and {@code fair share: <consumer>} where defined;</li>
 *   <li>{@code delay_cdf}: the light-delay CDF; {@code name} = what was delayed, {@code x} = delay in ms,
 *       {@code y} = fraction of the tasks submitted in the window that had started within {@code x};</li>
 *   <li>{@code share}: CPU share over time; {@code name} = consumer, {@code x} = end of the sampling
 *       interval in seconds since the window start (negative = warm-up), {@code y} = share of the busy
 *       time in that interval (empty if nothing completed).</li>
 * </ul>
 */
final class CsvExport {

    static final String HEADER = "kind,series,name,x,y";

    private CsvExport() {
    }

    static List<Path> write(FairnessReport report, Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        for (Scenario scenario : report.scenarios()) {
            Path file = dir.resolve(scenario.id() + ".csv");
            try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
                w.write(HEADER + "\n");
                for (ScenarioResult r : report.results(scenario)) {
                    writeResult(w, r);
                }
            }
            written.add(file);
        }
        return written;
    }

    private static void writeResult(Writer w, ScenarioResult r) throws IOException {
        String series = r.series();
        for (Metric m : r.metrics()) {
            row(w, "metric", series, m.name(), "", num(m.value()));
        }
        for (int i = 0; i < r.names().size(); i++) {
            row(w, "metric", series, "share: " + r.names().get(i), "", num(r.shares()[i]));
            if (r.fairShares() != null) {
                row(w, "metric", series, "fair share: " + r.names().get(i), "", num(r.fairShares()[i]));
            }
        }
        if (r.delay() != null) {
            double[][] cdf = r.delay().cdf();
            for (int i = 0; i < cdf[0].length; i++) {
                row(w, "delay_cdf", series, r.delay().what(), num(cdf[0][i]), num(cdf[1][i]));
            }
        }
        ShareTimeline t = r.timeline();
        for (int i = 0; i < t.timesSec().length; i++) {
            for (int g = 0; g < t.names().size(); g++) {
                row(w, "share", series, t.names().get(g), num(t.timesSec()[i]), num(t.shares()[i][g]));
            }
        }
    }

    private static void row(Writer w, String... fields) throws IOException {
        for (int i = 0; i < fields.length; i++) {
            if (i > 0) {
                w.write(',');
            }
            w.write(quote(fields[i]));
        }
        w.write('\n');
    }

    private static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6g", v) : "";
    }

    /** RFC 4180: quote a field that holds a comma, a quote or a line break; double inner quotes. */
    static String quote(String s) {
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0 && s.indexOf('\r') < 0) {
            return s;
        }
        return '"' + s.replace("\"", "\"\"") + '"';
    }
}
