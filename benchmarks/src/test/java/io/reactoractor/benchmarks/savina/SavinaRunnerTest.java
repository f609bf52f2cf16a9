package io.reactoractor.benchmarks.savina;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.Actor;
import org.apache.pekko.actor.ActorSystem;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Smoke test: every workload runs once on both peers at tiny sizes and computes the expected result;
 * a wrong result aborts the runner. No timing checks.
 */
class SavinaRunnerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private static ActorScheduler scheduler;
    private static ActorSystem system;

    @BeforeAll
    static void start() {
        scheduler = SavinaPeers.newScheduler(2, ActorScheduler.Ordering.FAIR);
        system = SavinaPeers.newActorSystem(2);
    }

    @AfterAll
    static void stop() throws Exception {
        scheduler.dispose();
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get();
    }

    private static List<SavinaWorkload> tiny() {
        return List.of(
                new PingPong(500, TIMEOUT),
                new ThreadRing(10, 1_000, TIMEOUT),
                new Counting(5_000, TIMEOUT),
                new ForkJoinThroughput(8, 500, TIMEOUT),
                new Chameneos(7, 1_000, TIMEOUT),
                new Big(20, 50, TIMEOUT));
    }

    @Test
    @Timeout(60)
    void everyWorkloadComputesTheExpectedResultOnBothPeers() throws Exception {
        for (SavinaWorkload w : tiny()) {
            assertTrue(w.expected() != 0 && w.messages() > 0, w::name);
            // timeOurs / timePekko throw unless the run returned w.expected()
            long ours = SavinaRunner.timeOurs(w, scheduler);
            long pekko = SavinaRunner.timePekko(w, system);
            assertTrue(ours > 0 && pekko > 0, w::name);
        }
    }

    @Test
    @Timeout(60)
    void runnerReportsEveryWorkloadAsMarkdown() throws Exception {
        List<SavinaWorkload> ws = List.of(new PingPong(100, TIMEOUT), new Counting(1_000, TIMEOUT));
        List<SavinaRunner.Result> results = SavinaRunner.run(ws, 1, 2, 2, ActorScheduler.Ordering.FAIR,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertEquals(2, results.size());
        for (SavinaRunner.Result r : results) {
            assertEquals(2, r.oursNanos().length);
            assertEquals(2, r.pekkoNanos().length);
            assertTrue(Double.isFinite(r.ratio()) && r.ratio() > 0, () -> r.workload().name());
        }
        String md = SavinaRunner.toMarkdown(new SavinaRunner.Options(1, 2, 2, 1.0, List.of(), ActorScheduler.Ordering.FAIR), results);
        assertTrue(md.contains("| ping-pong |") && md.contains("| counting |") && md.contains("ours / pekko"), md);
    }

    @Test
    @Timeout(60)
    void aWrongResultFailsTheRunInsteadOfReportingATime() {
        SavinaWorkload broken = new OffByOne(new Counting(1_000, TIMEOUT));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> SavinaRunner.timeOurs(broken, scheduler));
        assertTrue(e.getMessage().contains("expected"), e::getMessage);
        assertThrows(IllegalStateException.class, () -> SavinaRunner.timePekko(broken, system));
    }

    @Test
    @Timeout(60)
    void aFullMailboxThrowsInsteadOfDropping() throws Exception {
        OursRun run = new OursRun(scheduler);
        Actor<Integer, Void> a = run.actor(1, (m, ctx) -> true);
        a.suspend(); // nothing leaves the mailbox, so capacityFor(1) tells fit and the next one does not
        for (int i = 0; i < OursRun.capacityFor(1); i++) {
            OursRun.tell(a, i);
        }
        assertThrows(IllegalStateException.class, () -> OursRun.tell(a, -1));
        a.resume();
        run.teardown(TIMEOUT);
    }

    @Test
    @Timeout(60)
    void aFailingActorFailsTheRunAtOnce() throws Exception {
        OursRun run = new OursRun(scheduler);
        Actor<Integer, Void> a = run.actor(1, (m, ctx) -> {
            throw new IllegalStateException("boom " + m);
        });
        OursRun.tell(a, 7);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> run.await(TIMEOUT));
        assertEquals("boom 7", e.getMessage());
        run.teardown(TIMEOUT);
    }

    @Test
    void parsesArguments() {
        SavinaRunner.Options q = SavinaRunner.parse(new String[] {"--quick"});
        assertEquals(1, q.warmup());
        assertEquals(3, q.rounds());
        SavinaRunner.Options o = SavinaRunner.parse(new String[] {"--quick", "--rounds=5",
                "--workloads=big,ping-pong", "--threads=3", "--ordering=fifo"});
        assertEquals(ActorScheduler.Ordering.FIFO, o.ordering());
        assertEquals(5, o.rounds());
        assertEquals(List.of("big", "ping-pong"), o.workloads());
        assertEquals(3, o.threads());
        assertEquals(SavinaRunner.Options.defaults().rounds(), SavinaRunner.parse(new String[0]).rounds());
        assertThrows(IllegalArgumentException.class, () -> SavinaRunner.parse(new String[] {"--workloads=nope"}));
        assertEquals(6, SavinaRunner.workloadNames().size());
    }

    /** A workload that expects one more than it computes: the runner must refuse it. */
    private record OffByOne(SavinaWorkload inner) implements SavinaWorkload {
        @Override
        public String name() {
            return inner.name();
        }

        @Override
        public String sizes() {
            return inner.sizes();
        }

        @Override
        public long messages() {
            return inner.messages();
        }

        @Override
        public long expected() {
            return inner.expected() + 1;
        }

        @Override
        public long runOurs(OursRun run) throws Exception {
            return inner.runOurs(run);
        }

        @Override
        public long runPekko(PekkoRun run) throws Exception {
            return inner.runPekko(run);
        }
    }
}
