package io.reactoractor.benchmarks.fairness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * The scenario runs: each builds a fresh scheduler of one peer, starts its load, samples the busy time
 * of every consumer through the warm-up and the measured window, then stops everything so the next run
 * starts on idle CPUs.
 */
final class Scenarios {

    private Scenarios() {
    }

    /** Runs {@code scenario} on {@code peer}: one result, or one per variant (the publishOn operators). */
    static List<ScenarioResult> run(Scenario scenario, Peer peer, FairnessRunner.Options o)
            throws InterruptedException {
        switch (scenario) {
            case LIGHT:
                return List.of(light(peer, o));
            case GROUPS_2_8:
            case GROUPS_1_2_4_8: {
                int[] sizes = scenario.equalGroups();
                String[] names = new String[sizes.length];
                int[] weights = new int[sizes.length];
                for (int i = 0; i < sizes.length; i++) {
                    names[i] = "g" + (i + 1) + " (" + workers(sizes[i]) + ")";
                    weights[i] = 1;
                }
                return List.of(groups(scenario, peer, o, names, sizes, weights));
            }
            case WEIGHTED: {
                int[] w = Scenario.WEIGHTS;
                String[] names = new String[w.length];
                int[] sizes = new int[w.length];
                for (int i = 0; i < w.length; i++) {
                    names[i] = "weight " + w[i] + " (" + workers(Scenario.WORKERS_PER_WEIGHTED_GROUP) + ")";
                    sizes[i] = Scenario.WORKERS_PER_WEIGHTED_GROUP;
                }
                return List.of(groups(scenario, peer, o, names, sizes, w));
            }
            case MANY_VS_ONE:
                return List.of(groups(scenario, peer, o,
                        new String[] {"group of " + workers(o.manyActors()), "group of " + workers(1)},
                        new int[] {o.manyActors(), 1}, new int[] {1, 1}));
            case GAMER:
                return List.of(gamer(peer, o));
            case CHURN:
                return List.of(churn(peer, o));
            case OUTSIDE:
                return List.of(outside(peer, o));
            case PUBLISH_ON: {
                List<ScenarioResult> r = new ArrayList<>();
                r.add(publishOn(peer, o, HotStreams.Operator.PUBLISH_ON));
                if (peer.hasGroups()) {
                    r.add(publishOn(peer, o, HotStreams.Operator.ACTOR_OPERATOR));
                }
                return r;
            }
            case TENANT:
                return List.of(tenant(peer, o));
            default:
                throw new AssertionError(scenario);
        }
    }

    private static String workers(int n) {
        return String.format(java.util.Locale.ROOT, "%,d worker%s", n, n == 1 ? "" : "s");
    }

    static ScenarioResult light(Peer peer, FairnessRunner.Options o) throws InterruptedException {
        try (Run run = new Run(peer, o)) {
            LongAdder heavyBusy = run.ledger.add("heavy");
            LongAdder lightBusy = run.ledger.add("light");
            HeavyLoad heavy = run.heavy();
            heavy.add(run.scheduler, o.heavyWorkers(), heavyBusy);
            LightProbe light = run.lightActor(lightBusy);
            heavy.start();
            Window w = run.observeWith(light);
            light.stopAndDrain(drainNanos(o));
            DelayResult d = light.result("light actor");
            List<Metric> m = new ArrayList<>(delayMetrics("light", d));
            m.add(Metric.number("heavy busy-ms/s", w.busyMsPerSec(0), "%.0f", true));
            return w.result(Scenario.LIGHT, peer, "", m, null, d);
        }
    }

    static ScenarioResult groups(Scenario scenario, Peer peer, FairnessRunner.Options o, String[] names,
            int[] sizes, int[] weights) throws InterruptedException {
        try (Run run = new Run(peer, o)) {
            HeavyLoad heavy = run.heavy();
            for (int i = 0; i < sizes.length; i++) {
                heavy.add(peer.group(run.scheduler, "g" + (i + 1), weights[i]), sizes[i], run.ledger.add(names[i]));
            }
            heavy.start();
            Window w = run.observe();
            double[] shares = w.shares();
            double weightSum = 0;
            for (int x : weights) {
                weightSum += x;
            }
            double[] fair = new double[weights.length];
            double[] perWeight = new double[weights.length];
            boolean weighted = false;
            for (int i = 0; i < weights.length; i++) {
                fair[i] = weights[i] / weightSum;
                perWeight[i] = shares[i] / weights[i];
                weighted |= weights[i] != weights[0];
            }
            List<Metric> m = new ArrayList<>();
            m.add(Metric.number(weighted ? "Jain (share / weight)" : "Jain", ScenarioResult.jain(perWeight), "%.3f",
                    true));
            for (int i = 0; i < names.length; i++) {
                m.add(Metric.percent("share: " + names[i], shares[i], false));
            }
            m.add(Metric.number("busy-ms/s", w.busyMsPerSec(), "%.0f", true));
            return w.result(scenario, peer, "", m, fair, null);
        }
    }

    static ScenarioResult gamer(Peer peer, FairnessRunner.Options o) throws InterruptedException {
        try (Run run = new Run(peer, o)) {
            LongAdder gamerBusy = run.ledger.add("gamer");
            HeavyLoad heavy = run.heavy();
            for (int i = 0; i < o.heavyWorkers(); i++) {
                heavy.add(run.scheduler, 1, run.ledger.add("steady-" + (i + 1)));
            }
            BurstySleeper gamer = new BurstySleeper(run.scheduler.createWorker(), Scenario.GAMER_BURST_TASKS,
                    o.heavyTaskNanos(), Scenario.GAMER_SLEEP_NANOS, gamerBusy);
            run.onClose(gamer::stop);
            heavy.start();
            gamer.start();
            Window w = run.observe();
            double[] shares = w.shares();
            double fairShare = 1.0 / shares.length;
            double[] fair = new double[shares.length];
            java.util.Arrays.fill(fair, fairShare);
            double steady = (1 - shares[0]) / o.heavyWorkers();
            List<Metric> m = new ArrayList<>();
            m.add(Metric.percent("gamer share", shares[0], false));
            m.add(Metric.percent("fair share", fairShare, false));
            m.add(Metric.number("gamer / fair share", shares[0] / fairShare, "%.2f", true));
            m.add(Metric.percent("steady actor share (mean)", steady, false));
            m.add(Metric.number("Jain (all actors)", ScenarioResult.jain(shares), "%.3f", true));
            m.add(Metric.number("busy-ms/s", w.busyMsPerSec(), "%.0f", true));
            return w.result(Scenario.GAMER, peer, "", m, fair, null);
        }
    }

    static ScenarioResult churn(Peer peer, FairnessRunner.Options o) throws InterruptedException {
        try (Run run = new Run(peer, o)) {
            LongAdder longBusy = run.ledger.add("long-lived (" + o.heavyWorkers() + ")");
            LongAdder churnBusy = run.ledger.add("short-lived");
            LongAdder lightBusy = run.ledger.add("light");
            HeavyLoad heavy = run.heavy();
            heavy.add(run.scheduler, o.heavyWorkers(), longBusy);
            LightProbe light = run.lightActor(lightBusy);
            ChurnLoad churn = new ChurnLoad(run.scheduler, Scenario.CHURN_PERIOD_NANOS,
                    Scenario.CHURN_TASKS_PER_ACTOR, Scenario.CHURN_TASK_NANOS, churnBusy);
            run.onClose(churn::stop);
            heavy.start();
            churn.window(run.windowStart, run.windowEnd);
            churn.start();
            Window w = run.observeWith(light);
            light.stopAndDrain(drainNanos(o));
            churn.stop();
            DelayResult d = light.result("light actor");
            double sec = o.duration().toNanos() / 1e9;
            double[] shares = w.shares();
            List<Metric> m = new ArrayList<>();
            m.add(Metric.percent("long-lived share", shares[0], false));
            m.add(Metric.percent("short-lived share", shares[1], false));
            m.addAll(delayMetrics("light", d));
            m.add(Metric.number("short-lived started/s", churn.startedInWindow() / sec, "%.0f", false));
            m.add(Metric.number("short-lived finished/s", churn.finishedInWindow() / sec, "%.0f", true));
            m.add(Metric.number("short-lived skipped (too many alive)", churn.skipped(), "%.0f", false));
            m.add(Metric.number("busy-ms/s", w.busyMsPerSec(), "%.0f", true));
            return w.result(Scenario.CHURN, peer, "", m, null, d);
        }
    }

    static ScenarioResult outside(Peer peer, FairnessRunner.Options o) throws InterruptedException {
        try (Run run = new Run(peer, o)) {
            LongAdder heavyBusy = run.ledger.add("heavy");
            LongAdder outsideBusy = run.ledger.add("outside tasks");
            HeavyLoad heavy = run.heavy();
            heavy.add(run.scheduler, o.heavyWorkers(), heavyBusy);
            Scheduler s = run.scheduler;
            LightProbe outside = run.probe(new LightProbe("outside-submitter", s::schedule,
                    Scenario.OUTSIDE_PERIOD_NANOS, Scenario.OUTSIDE_BATCH, Scenario.OUTSIDE_WORK_NANOS, outsideBusy));
            heavy.start();
            Window w = run.observeWith(outside);
            outside.stopAndDrain(drainNanos(o));
            DelayResult d = outside.result("outside tasks");
            double sec = o.duration().toNanos() / 1e9;
            List<Metric> m = new ArrayList<>(delayMetrics("outside", d));
            m.add(Metric.number("outside tasks submitted/s", d.submitted() / sec, "%.0f", false));
            m.add(Metric.number("outside tasks run/s", d.samples() / sec, "%.0f", true));
            m.add(Metric.number("heavy busy-ms/s", w.busyMsPerSec(0), "%.0f", true));
            m.add(Metric.number("busy-ms/s", w.busyMsPerSec(), "%.0f", true));
            return w.result(Scenario.OUTSIDE, peer, "", m, null, d);
        }
    }

    static ScenarioResult publishOn(Peer peer, FairnessRunner.Options o, HotStreams.Operator op)
            throws InterruptedException {
        try (Run run = new Run(peer, o)) {
            List<LongAdder> hotBusy = new ArrayList<>();
            for (int i = 0; i < Scenario.HOT_STREAMS; i++) {
                hotBusy.add(run.ledger.add("hot-" + (i + 1)));
            }
            LongAdder lightBusy = run.ledger.add("light stream");
            for (LongAdder b : hotBusy) {
                Disposable hot = HotStreams.hot(run.scheduler, op, Scenario.HOT_ITEM_NANOS, b);
                run.onClose(hot::dispose);
            }
            HotStreams.Light stream = new HotStreams.Light(run.scheduler, op);
            run.onClose(stream::dispose);
            LightProbe light = run.probe(new LightProbe("light-stream-submitter", stream.target(),
                    o.lightPeriodNanos(), 1, o.lightWorkNanos(), lightBusy));
            Window w = run.observeWith(light);
            light.stopAndDrain(drainNanos(o));
            DelayResult d = light.result("light stream");
            double hot = 0;
            for (int i = 0; i < Scenario.HOT_STREAMS; i++) {
                hot += w.busyMsPerSec(i);
            }
            List<Metric> m = new ArrayList<>(delayMetrics("light", d));
            m.add(Metric.number("hot streams busy-ms/s", hot, "%.0f", true));
            m.add(Metric.number("busy-ms/s", w.busyMsPerSec(), "%.0f", true));
            return w.result(Scenario.PUBLISH_ON, peer, op.label(), m, null, d);
        }
    }

    static ScenarioResult tenant(Peer peer, FairnessRunner.Options o) throws InterruptedException {
        try (Run run = new Run(peer, o)) {
            LongAdder busy = run.ledger.add("busy tenant (" + workers(Scenario.TENANT_BUSY_ACTORS) + ")");
            LongAdder lightBusy = run.ledger.add("light tenant");
            HeavyLoad load = new HeavyLoad(Scenario.TENANT_BUSY_TASK_NANOS);
            run.onClose(load::stop);
            load.add(peer.group(run.scheduler, "busy", 1), Scenario.TENANT_BUSY_ACTORS, busy);
            Scheduler.Worker w = peer.group(run.scheduler, "light", 1).createWorker();
            run.onClose(w::dispose);
            LightProbe light = run.probe(new LightProbe("tenant-light-submitter", w::schedule, o.lightPeriodNanos(), 1,
                    o.lightWorkNanos(), lightBusy));
            load.start();
            Window window = run.observeWith(light);
            light.stopAndDrain(drainNanos(o));
            DelayResult d = light.result("light tenant");
            List<Metric> m = new ArrayList<>(delayMetrics("light", d));
            m.add(Metric.percent("busy tenant useful CPU (of " + o.threads() + " threads)",
                    window.busyMsPerSec(0) / (1000.0 * o.threads()), true));
            m.add(Metric.number("busy-ms/s", window.busyMsPerSec(), "%.0f", true));
            return window.result(Scenario.TENANT, peer, "", m, null, d);
        }
    }

    static List<Metric> delayMetrics(String prefix, DelayResult d) {
        List<Metric> m = new ArrayList<>();
        m.add(delay(prefix + " p50 (ms)", d.p50Ms(), d));
        m.add(delay(prefix + " p99 (ms)", d.p99Ms(), d));
        m.add(delay(prefix + " p99.9 (ms)", d.p999Ms(), d));
        m.add(delay(prefix + " max (ms)", d.maxMs(), d));
        m.add(Metric.number(prefix + " samples", d.samples(), "%.0f", false));
        m.add(Metric.number(prefix + " unfinished (not in percentiles)", d.unfinished(), "%.0f", false));
        return m;
    }

    private static Metric delay(String name, double ms, DelayResult d) {
        return d.starved() ? new Metric(name, Double.NaN, "starved", true) : Metric.number(name, ms, "%.3f", true);
    }

    /**
     * How long the light tasks of the window may take to finish after it (the other load keeps running).
     * The wait ends as soon as they all ran, so only a starving peer pays the full time.
     */
    static long drainNanos(FairnessRunner.Options o) {
        return Math.min(TimeUnit.SECONDS.toNanos(2), Math.max(o.duration().toNanos(), TimeUnit.SECONDS.toNanos(1)));
    }

    /** The snapshots of one run: at the window's start and end, and every sample in between. */
    static final class Window {
        private final BusyLedger ledger;
        private final long[] atStart;
        private final long[] atEnd;
        private final long nanos;
        private final ShareTimeline timeline;

        Window(BusyLedger ledger, long[] atStart, long[] atEnd, long nanos, ShareTimeline timeline) {
            this.ledger = ledger;
            this.atStart = atStart;
            this.atEnd = atEnd;
            this.nanos = nanos;
            this.timeline = timeline;
        }

        double[] shares() {
            return sharesBetween(atStart, atEnd);
        }

        double busyMsPerSec(int consumer) {
            return (atEnd[consumer] - atStart[consumer]) / 1e6 / (nanos / 1e9);
        }

        double busyMsPerSec() {
            double sum = 0;
            for (int i = 0; i < atEnd.length; i++) {
                sum += busyMsPerSec(i);
            }
            return sum;
        }

        ScenarioResult result(Scenario scenario, Peer peer, String variant, List<Metric> metrics, double[] fair,
                DelayResult delay) {
            return new ScenarioResult(scenario, peer, variant, List.copyOf(metrics), ledger.names(), shares(), fair,
                    busyMsPerSec(), delay, timeline);
        }
    }

    /**
     * One scenario run on one scheduler: the ledger of busy time, the window's bounds, and what to stop
     * (in reverse order) before the scheduler is shut down.
     */
    private static final class Run implements AutoCloseable {
        final FairnessRunner.Options o;
        final Scheduler scheduler;
        final BusyLedger ledger = new BusyLedger();
        final long windowStart;
        final long windowEnd;
        private final List<Stopper> stoppers = new ArrayList<>();

        @FunctionalInterface
        interface Stopper {
            void stop() throws InterruptedException;
        }

        Run(Peer peer, FairnessRunner.Options o) {
            this.o = o;
            this.scheduler = peer.create(o.threads());
            // the clock starts when the run is set up; loads are started right after
            this.windowStart = System.nanoTime() + o.warmup().toNanos();
            this.windowEnd = windowStart + o.duration().toNanos();
        }

        void onClose(Stopper s) {
            stoppers.add(s);
        }

        HeavyLoad heavy() {
            HeavyLoad h = new HeavyLoad(o.heavyTaskNanos());
            onClose(h::stop);
            return h;
        }

        /** The light actor: a dedicated worker fed by an open-loop outside thread. */
        LightProbe lightActor(LongAdder busy) {
            Scheduler.Worker w = scheduler.createWorker();
            onClose(w::dispose);
            return probe(new LightProbe("light-submitter", w::schedule, o.lightPeriodNanos(), 1, o.lightWorkNanos(),
                    busy));
        }

        LightProbe probe(LightProbe p) {
            onClose(p::stop);
            return p;
        }

        Window observe() throws InterruptedException {
            return observeWith(null);
        }

        /** Starts {@code probe} (if any) with this run's window, then samples until the window ends. */
        Window observeWith(LightProbe probe) throws InterruptedException {
            if (probe != null) {
                probe.window(windowStart, windowEnd);
                probe.start();
            }
            long step = o.sample().toNanos();
            long before = Math.min(o.warmup().toNanos() / step, (windowStart - System.nanoTime()) / step);
            long after = (o.duration().toNanos() + step - 1) / step;
            List<Double> times = new ArrayList<>();
            List<double[]> shares = new ArrayList<>();
            long[] prev = null;
            long[] atStart = null;
            long[] atEnd = null;
            long t0 = 0;
            long t1 = 0;
            for (long k = -Math.max(0, before); k <= after; k++) {
                long at = Math.min(windowStart + k * step, windowEnd);
                sleepUntil(at);
                long now = System.nanoTime();
                long[] snap = ledger.snapshot();
                if (prev != null) {
                    times.add((now - windowStart) / 1e9);
                    shares.add(sharesBetween(prev, snap));
                }
                if (k == 0) {
                    atStart = snap;
                    t0 = now;
                }
                if (k == after) {
                    atEnd = snap;
                    t1 = now;
                }
                prev = snap;
            }
            double[] ts = new double[times.size()];
            for (int i = 0; i < ts.length; i++) {
                ts[i] = times.get(i);
            }
            ShareTimeline timeline = new ShareTimeline(ledger.names(), ts, shares.toArray(new double[0][]),
                    o.duration().toNanos() / 1e9);
            return new Window(ledger, atStart, atEnd, t1 - t0, timeline);
        }

        /** Stops the loads (newest first), then shuts the scheduler down gracefully. */
        @Override
        public void close() throws InterruptedException {
            InterruptedException interrupted = null;
            for (int i = stoppers.size() - 1; i >= 0; i--) {
                try {
                    stoppers.get(i).stop();
                } catch (InterruptedException e) {
                    interrupted = e;
                } catch (RuntimeException e) {
                    // keep stopping the rest: a run that half-stopped would pollute the next one
                    e.printStackTrace();
                }
            }
            shutdown(scheduler);
            if (interrupted != null) {
                throw interrupted;
            }
        }
    }

    /** Each consumer's share of the busy time between two snapshots; NaN if nothing completed. */
    static double[] sharesBetween(long[] from, long[] to) {
        double total = 0;
        for (int i = 0; i < to.length; i++) {
            total += to[i] - from[i];
        }
        double[] s = new double[to.length];
        for (int i = 0; i < s.length; i++) {
            s[i] = total == 0 ? Double.NaN : (to[i] - from[i]) / total;
        }
        return s;
    }

    /** Graceful stop (the loads no longer re-schedule), so the next run starts on idle CPUs. */
    static void shutdown(Scheduler s) {
        try {
            s.disposeGracefully().timeout(Duration.ofSeconds(5)).block();
        } catch (RuntimeException e) {
            s.dispose();
        }
    }

    static void sleepUntil(long deadline) throws InterruptedException {
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }
}
