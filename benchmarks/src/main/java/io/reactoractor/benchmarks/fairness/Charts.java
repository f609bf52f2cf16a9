package io.reactoractor.benchmarks.fairness;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Stroke;
import java.awt.geom.AffineTransform;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * Draws the fairness charts as PNG with plain Java 2D (off-screen, headless), no chart library:
 * <ul>
 *   <li>{@code <scenario>-delay-cdf.png}: the CDF of the light (or outside) work's delay, log x axis, one
 *       line per series, for scenarios that measure a delay;</li>
 *   <li>{@code <scenario>-shares.png}: CPU share over time, one panel per series, one line per consumer
 *       (group, actor or stream), the fair share dashed where the scenario defines one, the warm-up
 *       shaded.</li>
 * </ul>
 */
final class Charts {

    static final int CDF_WIDTH = 1100;
    static final int CDF_HEIGHT = 620;
    static final int PANEL_WIDTH = 440;
    static final int PANEL_HEIGHT = 270;

    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e), new Color(0x9467bd),
        new Color(0x8c564b), new Color(0xe377c2), new Color(0x17becf), new Color(0x7f7f7f), new Color(0xbcbd22),
    };
    private static final Color GRID = new Color(0xe6e6e6);
    private static final Color AXIS = new Color(0x333333);
    private static final Color WARMUP = new Color(0xf2f2f2);
    private static final Font TITLE = new Font(Font.SANS_SERIF, Font.BOLD, 15);
    private static final Font LABEL = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
    private static final Font SMALL = new Font(Font.SANS_SERIF, Font.PLAIN, 11);
    private static final Stroke LINE = new BasicStroke(2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND);
    private static final Stroke DASHED = new BasicStroke(1.3f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
            new float[] {6f, 4f}, 0f);
    private static final Stroke THIN = new BasicStroke(1f);

    private Charts() {
    }

    /** Writes every chart of the report into {@code dir}; returns the files written. */
    static List<Path> write(FairnessReport report, Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        for (Scenario scenario : report.scenarios()) {
            List<ScenarioResult> rs = report.results(scenario);
            if (rs.stream().anyMatch(r -> r.delay() != null)) {
                Path f = dir.resolve(scenario.id() + "-delay-cdf.png");
                ImageIO.write(delayCdf(scenario, rs), "png", f.toFile());
                written.add(f);
            }
            Path f = dir.resolve(scenario.id() + "-shares.png");
            ImageIO.write(shares(scenario, rs), "png", f.toFile());
            written.add(f);
        }
        return written;
    }

    /** One line per series: the fraction of submitted tasks that started within x ms. */
    static BufferedImage delayCdf(Scenario scenario, List<ScenarioResult> rs) {
        BufferedImage img = new BufferedImage(CDF_WIDTH, CDF_HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img);
        String what = "light work";
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (ScenarioResult r : rs) {
            if (r.delay() != null) {
                what = r.delay().what();
                double[][] cdf = r.delay().cdf();
                for (double x : cdf[0]) {
                    if (x > 0) {
                        min = Math.min(min, x);
                        max = Math.max(max, x);
                    }
                }
            }
        }
        if (max == 0) { // nothing ran anywhere: draw empty axes over 0.01..10 ms
            min = 0.01;
            max = 10;
        }
        int loExp = (int) Math.floor(Math.log10(Math.max(min, 1e-4)));
        int hiExp = (int) Math.ceil(Math.log10(max));
        if (hiExp <= loExp) {
            hiExp = loExp + 1;
        }
        Plot p = new Plot(80, 50, CDF_WIDTH - 80 - 330, CDF_HEIGHT - 50 - 60, Math.pow(10, loExp), Math.pow(10, hiExp),
                0, 1, true);
        g.setColor(AXIS);
        g.setFont(TITLE);
        g.drawString(scenario.title() + ": CDF of the " + what + " delay", p.x, 30);

        // grid: decades and their 2..9 multiples on x, every 10 % on y
        for (int e = loExp; e <= hiExp; e++) {
            double decade = Math.pow(10, e);
            for (int m = 1; m <= 9 && (e < hiExp || m == 1); m++) {
                int x = p.px(decade * m);
                g.setColor(m == 1 ? GRID.darker() : GRID);
                g.drawLine(x, p.y, x, p.y + p.h);
            }
            g.setColor(AXIS);
            g.setFont(SMALL);
            centered(g, decadeLabel(e), p.px(decade), p.y + p.h + 16);
        }
        percentGrid(g, p, 10);
        g.setColor(Color.GRAY);
        g.setStroke(DASHED);
        g.drawLine(p.x, p.py(0.99), p.x + p.w, p.py(0.99));
        g.setFont(SMALL);
        g.drawString("p99", p.x + 4, p.py(0.99) - 4);
        g.setStroke(THIN);
        axes(g, p, what + " scheduling delay (ms, log scale)", "tasks started within x (% of submitted)");

        int legendY = p.y + 6;
        int i = 0;
        for (ScenarioResult r : rs) {
            Color c = PALETTE[i++ % PALETTE.length];
            String label = r.series();
            DelayResult d = r.delay();
            if (d != null && d.samples() > 0) {
                double[][] cdf = d.cdf();
                Path2D.Double path = new Path2D.Double();
                path.moveTo(p.x, p.py(0));
                for (int k = 0; k < cdf[0].length; k++) {
                    double x = p.px(Math.max(cdf[0][k], p.xMin));
                    path.lineTo(x, path.getCurrentPoint().getY());
                    path.lineTo(x, p.py(cdf[1][k]));
                }
                path.lineTo(p.x + p.w, path.getCurrentPoint().getY());
                g.setColor(c);
                g.setStroke(LINE);
                g.setClip(p.x, p.y - 2, p.w + 1, p.h + 4);
                g.draw(path);
                g.setClip(null);
                label += String.format(Locale.ROOT, ": p99 %s ms", num(d.p99Ms()));
                if (d.unfinished() > 0) {
                    label += String.format(Locale.ROOT, ", %d of %d never ran", d.unfinished(), d.submitted());
                }
            } else if (d != null) {
                label += String.format(Locale.ROOT, ": starved (0 of %d ran)", d.submitted());
            }
            legendEntry(g, c, false, label, p.x + p.w + 20, legendY);
            legendY += 20;
        }
        g.dispose();
        return img;
    }

    /** One panel per series: each consumer's share of the busy time per sampling interval. */
    static BufferedImage shares(Scenario scenario, List<ScenarioResult> rs) {
        int n = rs.size();
        int cols = n <= 3 ? n : n == 4 ? 2 : n <= 6 ? 3 : 4;
        int rows = (n + cols - 1) / cols;
        List<String> names = rs.get(0).names();
        int legendHeight = 24;
        int top = 40 + legendHeight;
        int width = Math.max(cols * PANEL_WIDTH, 640);
        BufferedImage img = new BufferedImage(width, top + rows * PANEL_HEIGHT + 10, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = canvas(img);
        g.setColor(AXIS);
        g.setFont(TITLE);
        g.drawString(scenario.title() + ": CPU share over time (share of the busy time per "
                + "sampling interval; shaded = warm-up)", 16, 26);
        int lx = 16;
        boolean anyFair = rs.stream().anyMatch(r -> r.fairShares() != null);
        for (int k = 0; k < names.size(); k++) {
            lx = legendEntry(g, PALETTE[k % PALETTE.length], false, names.get(k), lx, 40) + 18;
        }
        if (anyFair) {
            legendEntry(g, Color.GRAY, true, "fair share", lx, 40);
        }
        for (int i = 0; i < n; i++) {
            ScenarioResult r = rs.get(i);
            int ox = (i % cols) * PANEL_WIDTH;
            int oy = top + (i / cols) * PANEL_HEIGHT;
            panel(g, r, ox, oy);
        }
        g.dispose();
        return img;
    }

    private static void panel(Graphics2D g, ScenarioResult r, int ox, int oy) {
        ShareTimeline t = r.timeline();
        double[] ts = t.timesSec();
        double xMin = ts.length == 0 ? 0 : Math.min(0, ts[0] - (ts.length > 1 ? ts[1] - ts[0] : 0));
        double xMax = Math.max(t.windowSec(), ts.length == 0 ? 1 : ts[ts.length - 1]);
        Plot p = new Plot(ox + 62, oy + 26, PANEL_WIDTH - 62 - 16, PANEL_HEIGHT - 26 - 48, xMin, xMax, 0, 1, false);
        g.setColor(AXIS);
        g.setFont(LABEL);
        g.drawString(r.series(), p.x, oy + 16);
        if (xMin < 0) {
            g.setColor(WARMUP);
            g.fillRect(p.x, p.y, p.px(0) - p.x, p.h);
        }
        double step = niceStep((xMax - xMin) / 6);
        for (double x = Math.ceil(xMin / step) * step; x <= xMax + 1e-9; x += step) {
            int px = p.px(x);
            g.setColor(GRID);
            g.drawLine(px, p.y, px, p.y + p.h);
            g.setColor(AXIS);
            g.setFont(SMALL);
            centered(g, num(Math.abs(x) < step * 1e-6 ? 0 : x), px, p.y + p.h + 14);
        }
        percentGrid(g, p, 4);
        axes(g, p, "time since window start (s)", "share");
        g.setClip(p.x, p.y - 2, p.w + 1, p.h + 4);
        for (int k = 0; k < t.names().size(); k++) {
            Color c = PALETTE[k % PALETTE.length];
            if (r.fairShares() != null) {
                g.setColor(c);
                g.setStroke(DASHED);
                int y = p.py(r.fairShares()[k]);
                g.drawLine(p.x, y, p.x + p.w, y);
            }
            Path2D.Double path = new Path2D.Double();
            boolean drawing = false;
            for (int i = 0; i < ts.length; i++) {
                double s = t.shares()[i][k];
                if (Double.isNaN(s)) {
                    drawing = false; // nothing completed in this interval: leave a gap
                    continue;
                }
                if (drawing) {
                    path.lineTo(p.px(ts[i]), p.py(s));
                } else {
                    path.moveTo(p.px(ts[i]), p.py(s));
                    drawing = true;
                }
            }
            g.setColor(c);
            g.setStroke(LINE);
            g.draw(path);
        }
        g.setClip(null);
        g.setStroke(THIN);
    }

    /** Horizontal grid lines over a 0..1 y axis, {@code steps} of them, labelled in percent. */
    private static void percentGrid(Graphics2D g, Plot p, int steps) {
        for (int k = 0; k <= steps; k++) {
            int y = p.py(k / (double) steps);
            g.setColor(GRID);
            g.drawLine(p.x, y, p.x + p.w, y);
            g.setColor(AXIS);
            g.setFont(SMALL);
            rightAligned(g, (k * 100 / steps) + "%", p.x - 5, y + 4);
        }
    }

    /** A plot area in pixels and its data ranges; {@code logX} for a log10 x axis. */
    private static final class Plot {
        final int x;
        final int y;
        final int w;
        final int h;
        final double xMin;
        final double xMax;
        final double yMin;
        final double yMax;
        final boolean logX;

        Plot(int x, int y, int w, int h, double xMin, double xMax, double yMin, double yMax, boolean logX) {
            this.x = x;
            this.y = y;
            this.w = w;
            this.h = h;
            this.xMin = xMin;
            this.xMax = xMax;
            this.yMin = yMin;
            this.yMax = yMax;
            this.logX = logX;
        }

        int px(double v) {
            double f = logX ? (Math.log10(v) - Math.log10(xMin)) / (Math.log10(xMax) - Math.log10(xMin))
                    : (v - xMin) / (xMax - xMin);
            return x + (int) Math.round(f * w);
        }

        int py(double v) {
            return y + h - (int) Math.round((v - yMin) / (yMax - yMin) * h);
        }
    }

    private static Graphics2D canvas(BufferedImage img) {
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        return g;
    }

    /** The frame and both axis titles (the y title rotated). */
    private static void axes(Graphics2D g, Plot p, String xTitle, String yTitle) {
        g.setColor(AXIS);
        g.setStroke(THIN);
        g.drawRect(p.x, p.y, p.w, p.h);
        g.setFont(LABEL);
        centered(g, xTitle, p.x + p.w / 2, p.y + p.h + 34);
        AffineTransform saved = g.getTransform();
        g.rotate(-Math.PI / 2);
        FontMetrics fm = g.getFontMetrics();
        g.drawString(yTitle, -(p.y + p.h / 2) - fm.stringWidth(yTitle) / 2, p.x - 44);
        g.setTransform(saved);
    }

    /** Draws a swatch and a label at (x, y = text baseline); returns the x where the label ends. */
    private static int legendEntry(Graphics2D g, Color c, boolean dashed, String label, int x, int y) {
        g.setColor(c);
        g.setStroke(dashed ? DASHED : LINE);
        g.drawLine(x, y - 4, x + 22, y - 4);
        g.setStroke(THIN);
        g.setColor(AXIS);
        g.setFont(LABEL);
        g.drawString(label, x + 28, y);
        return x + 28 + g.getFontMetrics().stringWidth(label);
    }

    private static void centered(Graphics2D g, String s, int x, int baseline) {
        g.drawString(s, x - g.getFontMetrics().stringWidth(s) / 2, baseline);
    }

    private static void rightAligned(Graphics2D g, String s, int x, int baseline) {
        g.drawString(s, x - g.getFontMetrics().stringWidth(s), baseline);
    }

    private static String decadeLabel(int exp) {
        if (exp >= 0) {
            return String.format(Locale.ROOT, "%.0f", Math.pow(10, exp));
        }
        return String.format(Locale.ROOT, "%." + (-exp) + "f", Math.pow(10, exp));
    }

    /** 1, 2 or 5 times a power of ten, at least {@code raw}. */
    private static double niceStep(double raw) {
        if (!(raw > 0)) {
            return 1;
        }
        double mag = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * mag >= raw) {
                return m * mag;
            }
        }
        return 10 * mag;
    }

    private static String num(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        double a = Math.abs(v);
        String f = a == 0 || a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, f, v).replaceAll("(\\.\\d*?)0+$", "$1").replaceAll("\\.$", "");
    }
}
