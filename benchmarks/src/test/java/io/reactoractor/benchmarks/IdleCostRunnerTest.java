package io.reactoractor.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The idle-cost runner finds each scheduler's own threads and reads their CPU time. Never a timing. */
class IdleCostRunnerTest {

    @Test
    @Timeout(60)
    void itMeasuresTheThreadsOfTheSchedulerItCreated() throws Exception {
        IdleCostRunner.Row actor = IdleCostRunner.measure("actorFair", 1);
        assertEquals(SchedulerPeers.THREADS + 1, actor.threads(), "two carriers and the timer");
        assertTrue(actor.cpuMicrosPerSecond() >= 0);
        IdleCostRunner.Row parallel = IdleCostRunner.measure("parallel", 1);
        assertEquals(SchedulerPeers.THREADS, parallel.threads());
    }

    @Test
    void badArgumentsAreNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IdleCostRunner.main(new String[] {"--seconds=0"}));
        assertTrue(e.getMessage().startsWith("seconds"), e.getMessage());
    }
}
