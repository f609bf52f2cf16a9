package io.reactoractor.samples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Short run of the pipeline demo: checks bounds that hold by construction, never timings. */
class ActorPipelineDemoTest {

    @Test
    @Timeout(60)
    void shortRunKeepsMailboxesBoundedAndTheSourceCloseToTheSink() throws Exception {
        ActorScheduler scheduler = ActorScheduler.builder().name("pipeline-test").threads(2).build();
        try {
            for (long sinkNanos : new long[] {0, 20_000}) {
                ActorPipelineDemo.Result r = ActorPipelineDemo.run(scheduler, "t" + sinkNanos, sinkNanos,
                        Duration.ofMillis(500));
                String s = ActorPipelineDemo.format(r);
                assertTrue(r.received() > 0, s);
                assertTrue(r.maxMailbox1() <= ActorPipelineDemo.CAPACITY, s);
                assertTrue(r.maxMailbox2() <= ActorPipelineDemo.CAPACITY, s);
                // the source is at most both mailboxes + the sink's batch + in-flight elements ahead
                long bound = 2L * ActorPipelineDemo.CAPACITY + 64 + 64;
                assertTrue(r.emitted() - r.received() <= bound, s);
            }
        } finally {
            scheduler.dispose();
        }
    }
}
