package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.reactoractor.pull.redis.TestRedis;
import org.junit.jupiter.api.Test;

/**
 * The two-instance end-to-end run of issue 13 in the build, shortened ({@link RedisEndToEnd} is the full
 * one): two pull server apps in child JVMs ({@code pull.store=redis}) on one real redis-server, 8
 * long-polling HTTP clients in two groups spread over both, 6,000 messages appended through both, and
 * instance 1 killed ({@code destroyForcibly}, as {@code kill -9}) once half of them were appended: its
 * unacknowledged messages must come back through the survivor (reclaimed after the ack timeout, 2 s).
 *
 * <p>Child JVMs rather than two application contexts in this JVM: only a process that dies takes its
 * connections, its in-flight messages and its actors with it at once, as a crashed instance does; a
 * context that is closed shuts down gracefully. Only liveness bounds (generous: the machine may be busy):
 * no timing is asserted.
 */
class RedisEndToEndTest {

    @Test
    void twoInstancesOneKilledNothingLost() throws Exception {
        try (TestRedis redis = TestRedis.start(false)) {
            RedisEndToEnd.Result r = RedisEndToEnd.run(new RedisEndToEnd.Options(redis.uri(), 6_000, 8,
                    Duration.ofSeconds(2),
                    // quick start-up, small heaps: two JVMs beside the build's on a small machine
                    List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k"),
                    Duration.ofMinutes(4)));
            System.out.println(r.toMarkdown()); // the duplicates are reported, not asserted (at-least-once)
            String why = r.toMarkdown() + "\nlogs: " + r.logs() + tail(r.logs());
            assertEquals(2, r.groups().size(), why);
            for (RedisEndToEnd.GroupResult g : r.groups()) {
                assertEquals(0, g.lost(), "lost in " + g.group() + ": " + why);
                assertEquals(r.messages(), g.delivered(), why);
                assertEquals(0, g.pendingInRedis(), "acknowledged in Redis, " + g.group() + ": " + why);
            }
            assertTrue(r.ok(), why);
        }
    }

    private static String tail(List<Path> logs) {
        StringBuilder sb = new StringBuilder();
        for (Path p : logs) {
            try {
                List<String> lines = Files.readAllLines(p);
                sb.append("\n--- ").append(p).append('\n')
                        .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
            } catch (Exception e) {
                sb.append("\n--- ").append(p).append(": ").append(e);
            }
        }
        return sb.toString();
    }
}
