package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;

import io.reactoractor.SchedulerStats;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

/** CPU shares and property validation, without a server. */
class StatusReportTest {

    @Test
    void cpuSharesAreOverConsumerGroupsOnly() {
        SchedulerStats stats = stats(
                new SchedulerStats.GroupStats("default", 1, 3, 1_000_000, 10),
                new SchedulerStats.GroupStats("cg.billing", 1, 2, 300, 7),
                new SchedulerStats.GroupStats("cg.audit", 1, 1, 100, 3));
        List<StatusReport.ConsumerGroupCpu> shares = StatusReport.cpuShares(stats);
        assertEquals(List.of(
                new StatusReport.ConsumerGroupCpu("audit", "cg.audit", 1, 3, 100, 0.25),
                new StatusReport.ConsumerGroupCpu("billing", "cg.billing", 2, 7, 300, 0.75)), shares);
    }

    @Test
    void sharesAreZeroBeforeAnyConsumerGroupRan() {
        List<StatusReport.ConsumerGroupCpu> shares = StatusReport.cpuShares(stats(
                new SchedulerStats.GroupStats("cg.idle", 1, 1, 0, 0)));
        assertEquals(0.0, shares.get(0).cpuShare());
        assertEquals(List.of(), StatusReport.cpuShares(stats(new SchedulerStats.GroupStats("default", 1, 0, 5, 1))));
    }

    private static final PullServerProperties.Redis REDIS =
            new PullServerProperties.Redis("redis://localhost:6379", "pull:", "", 1000, 100_000, Duration.ofDays(7));

    @Test
    void propertiesAreValidatedWithTheirNames() {
        Duration s = Duration.ofSeconds(1);
        DataSize mb = DataSize.ofMegabytes(1);
        assertEquals(100, new PullServerProperties(s, mb, 100, s, s, s, "memory", REDIS).statusLimit());
        assertMessage("pull.max-timeout", () -> new PullServerProperties(Duration.ofMillis(-1), mb, 1, s, s, s, "memory", REDIS));
        assertMessage("pull.max-body-size", () -> new PullServerProperties(s, DataSize.ofBytes(0), 1, s, s, s, "memory", REDIS));
        assertMessage("pull.status-limit", () -> new PullServerProperties(s, mb, 0, s, s, s, "memory", REDIS));
        assertMessage("pull.connection-idle-timeout", () -> new PullServerProperties(s, mb, 1, Duration.ZERO, s, s, "memory", REDIS));
        assertMessage("pull.request-read-timeout", () -> new PullServerProperties(s, mb, 1, s, Duration.ZERO, s, "memory", REDIS));
        assertMessage("pull.request-timeout", () -> new PullServerProperties(s, mb, 1, s, s, Duration.ZERO, "memory", REDIS));
        assertMessage("pull.store", () -> new PullServerProperties(s, mb, 1, s, s, s, "disk", REDIS));
        assertMessage("pull.redis.uri", () -> new PullServerProperties.Redis(" ", "p:", "", 1, 1, Duration.ofDays(1)));
        assertMessage("pull.redis.key-prefix", () -> new PullServerProperties.Redis("redis://x", "", "", 1, 1, Duration.ofDays(1)));
        assertMessage("pull.redis.max-groups-per-subject", () -> new PullServerProperties.Redis("redis://x", "p:", "", 0, 1, Duration.ofDays(1)));
        assertMessage("pull.redis.max-subjects", () -> new PullServerProperties.Redis("redis://x", "p:", "", 1, 0, Duration.ofDays(1)));
        assertMessage("pull.redis.group-retention", () -> new PullServerProperties.Redis("redis://x", "p:", "", 1, 1, Duration.ZERO));
        assertMessage("pull.redis.group-retention",
                () -> new PullServerProperties.Redis("redis://x", "p:", "", 1, 1, Duration.ofNanos(999_999)));
    }

    private static void assertMessage(String property, Runnable r) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
        assertEquals(property, e.getMessage().substring(0, property.length()), e.getMessage());
    }

    private static SchedulerStats stats(SchedulerStats.GroupStats... groups) {
        return new SchedulerStats("pull", 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, List.of(groups));
    }
}
