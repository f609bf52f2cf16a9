package io.reactoractor.spring.boot;

import java.time.Duration;

import io.reactoractor.ActorScheduler;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Settings of the auto-configured {@link ActorScheduler} and {@code PullConsumer} ({@code reactor.actor.*}).
 * Every default is the library's own. Validated when bound: a bad value stops the application at
 * start-up with a message naming the property, e.g. {@code reactor.actor.threads must be >= 1 but was 0}.
 *
 * <p>The {@code @param} texts are the descriptions IDEs show (the configuration metadata), hence plain
 * sentences.
 *
 * @param name                   Name of the scheduler: its threads are name-1, name-2, ... and its meters
 *                               carry the tag scheduler=name. 1 to 64 characters, no control characters.
 * @param threads                Permanent carrier threads, 1 to 32767. Default: one per available processor.
 * @param quota                  Hard bound of an actor's turn, checked between tasks. At most 1 day.
 * @param preemptionGranularity  Minimum slice before a running actor yields to one that has used less CPU
 *                               time. At most the quota. Default (unset): 500us, or the quota when that is
 *                               shorter.
 * @param hogThreshold           A task running longer than this is a hog: it is logged and counted, and a
 *                               compensating thread is started. At least the quota, at most 1 day when set.
 *                               Default: 10 times the quota.
 * @param maxCompensatingThreads Most compensating threads running at once; 0 disables compensation; at most
 *                               32767 minus the permanent threads. Default: as many as the permanent threads.
 * @param ordering               How the next actor is chosen: fair (least weighted CPU time first) or fifo
 *                               (bounded by the quota only).
 * @param shutdownTimeout        How long closing the application waits for the scheduler to finish its
 *                               queued work before disposing of it at once. At most 1 day.
 * @param groupIdleTimeout       A scheduler group idle this long (no actor but its idle lanes, nothing queued)
 *                               leaves the registries and its meters are removed; its next use brings it
 *                               back. 0: only to make room at max-groups. At most 1 day.
 * @param maxGroups              Most scheduler groups registered at once by name; at the cap, idle ones
 *                               are retired first, and a new one is refused if that makes no room. A
 *                               retired group used through a kept reference always comes back.
 * @param pull                   The pull consumer.
 */
@ConfigurationProperties(ReactorActorProperties.PREFIX)
public record ReactorActorProperties(
        @DefaultValue("actor") String name,
        Integer threads,
        @DefaultValue("5ms") Duration quota,
        Duration preemptionGranularity,
        Duration hogThreshold,
        Integer maxCompensatingThreads,
        @DefaultValue("fair") ActorScheduler.Ordering ordering,
        @DefaultValue("5s") Duration shutdownTimeout,
        @DefaultValue("5m") Duration groupIdleTimeout,
        @DefaultValue("65536") int maxGroups,
        @DefaultValue Pull pull) {

    /** The prefix of every property. */
    public static final String PREFIX = "reactor.actor";

    /**
     * Validates the settings when they are bound: a bad value fails with a message naming its property.
     * The builders check the same rules again and have the last word.
     *
     * @param name                   see {@link #name()}
     * @param threads                see {@link #threads()}
     * @param quota                  see {@link #quota()}
     * @param preemptionGranularity  see {@link #preemptionGranularity()}
     * @param hogThreshold           see {@link #hogThreshold()}
     * @param maxCompensatingThreads see {@link #maxCompensatingThreads()}
     * @param ordering               see {@link #ordering()}
     * @param shutdownTimeout        see {@link #shutdownTimeout()}
     * @param groupIdleTimeout       see {@link #groupIdleTimeout()}
     * @param maxGroups              see {@link #maxGroups()}
     * @param pull                   see {@link #pull()}
     * @throws IllegalArgumentException naming the property of a bad value
     */
    public ReactorActorProperties {
        if (name == null || name.isBlank() || name.length() > 64) {
            throw invalid("name", "must have 1 to 64 characters", name == null ? null : "'" + name + "'");
        }
        if (name.chars().anyMatch(Character::isISOControl)) {
            // a tab, or the '\r' an env file with Windows line endings leaves: the builder refuses it too,
            // but without the property's name
            throw invalid("name", "must not contain control characters", "'" + name.replace("\r", "\\r")
                    .replace("\n", "\\n").replace("\t", "\\t") + "'");
        }
        if (threads != null && threads < 1) {
            throw invalid("threads", "must be >= 1", threads);
        }
        if (threads != null && threads > 32_767) {
            throw invalid("threads", "must be <= 32767", threads);
        }
        requirePositive("quota", quota);
        requireAtMostADay("quota", quota);
        // unset: the builder's default, which follows a shorter quota (setting only the quota is valid)
        if (preemptionGranularity != null) {
            requirePositive("preemption-granularity", preemptionGranularity);
            if (preemptionGranularity.compareTo(quota) > 0) {
                throw invalid("preemption-granularity", "must not exceed " + PREFIX + ".quota (" + quota + ")",
                        preemptionGranularity);
            }
        }
        if (hogThreshold != null) {
            requirePositive("hog-threshold", hogThreshold);
            requireAtMostADay("hog-threshold", hogThreshold);
            if (hogThreshold.compareTo(quota) < 0) {
                throw invalid("hog-threshold", "must be at least " + PREFIX + ".quota (" + quota + ")", hogThreshold);
            }
        }
        if (maxCompensatingThreads != null && maxCompensatingThreads < 0) {
            throw invalid("max-compensating-threads", "must be >= 0", maxCompensatingThreads);
        }
        int carriers = threads != null ? threads : Runtime.getRuntime().availableProcessors();
        if (maxCompensatingThreads != null && maxCompensatingThreads > 32_767 - carriers) {
            throw invalid("max-compensating-threads", "must be at most 32767 minus " + PREFIX + ".threads ("
                    + carriers + ")", maxCompensatingThreads);
        }
        if (ordering == null) {
            throw invalid("ordering", "must be fair or fifo", null);
        }
        requirePositive("shutdown-timeout", shutdownTimeout);
        requireAtMostADay("shutdown-timeout", shutdownTimeout);
        if (groupIdleTimeout == null || groupIdleTimeout.isNegative()) {
            throw invalid("group-idle-timeout", "must be >= 0", groupIdleTimeout);
        }
        requireAtMostADay("group-idle-timeout", groupIdleTimeout);
        if (maxGroups < 1) {
            throw invalid("max-groups", "must be >= 1", maxGroups);
        }
        if (pull == null) {
            throw invalid("pull", "must not be null", null);
        }
    }

    /**
     * Settings of the pull consumer ({@code reactor.actor.pull.*}); defaults are the library's.
     *
     * @param enabled            Whether to create a PullConsumer (and an in-memory message store unless
     *                           the application has a MessageStore or an AsyncMessageStore bean).
     * @param retention          Messages the in-memory store keeps per subject; older ones are dropped.
     * @param ackTimeout         A delivered message not acknowledged within this time is redelivered.
     * @param maxWaitingPulls    Most long polls one (subject, group) holds at once.
     * @param maxMessagesPerPull Largest number of messages one pull may ask for.
     * @param maxBytesPerPull    Most payload bytes in one answer (its first message is always included).
     * @param idleTimeout        A (subject, group) with no waiting poll, nothing in flight, no consumer and
     *                           no call for this long is removed; its committed offset is kept. 0: never.
     * @param maxGroups          Most (subject, group) pairs live at once; below the scheduler's max-groups.
     * @param maxSubjects        Most subjects the in-memory store holds; past it, subjects that never held
     *                           a message are removed, and a new one is refused if none can be.
     * @param maxCommittedOffsets Most committed offsets ((subject, group) pairs) the in-memory store holds;
     *                           past it, offsets unused for the offset retention are removed, and a commit
     *                           for a new pair is refused if none can be.
     * @param offsetRetention    How long a committed offset of the in-memory store goes unused before a
     *                           full store may remove it.
     */
    public record Pull(
            @DefaultValue("false") boolean enabled,
            @DefaultValue("100000") int retention,
            @DefaultValue("30s") Duration ackTimeout,
            @DefaultValue("100000") int maxWaitingPulls,
            @DefaultValue("1000") int maxMessagesPerPull,
            @DefaultValue("4MB") DataSize maxBytesPerPull,
            @DefaultValue("5m") Duration idleTimeout,
            @DefaultValue("10000") int maxGroups,
            @DefaultValue("100000") int maxSubjects,
            @DefaultValue("100000") int maxCommittedOffsets,
            @DefaultValue("7d") Duration offsetRetention) {

        /**
         * Validates the settings when they are bound: a bad value fails with a message naming its property.
         *
         * @param enabled            see {@link #enabled()}
         * @param retention          see {@link #retention()}
         * @param ackTimeout         see {@link #ackTimeout()}
         * @param maxWaitingPulls    see {@link #maxWaitingPulls()}
         * @param maxMessagesPerPull see {@link #maxMessagesPerPull()}
         * @param maxBytesPerPull    see {@link #maxBytesPerPull()}
         * @param idleTimeout        see {@link #idleTimeout()}
         * @param maxGroups          see {@link #maxGroups()}
         * @param maxSubjects        see {@link #maxSubjects()}
         * @param maxCommittedOffsets see {@link #maxCommittedOffsets()}
         * @param offsetRetention    see {@link #offsetRetention()}
         * @throws IllegalArgumentException naming the property of a bad value
         */
        public Pull {
            requireAtLeastOne("pull.retention", retention);
            requirePositive("pull.ack-timeout", ackTimeout);
            requireAtLeastOne("pull.max-waiting-pulls", maxWaitingPulls);
            requireAtLeastOne("pull.max-messages-per-pull", maxMessagesPerPull);
            if (maxBytesPerPull == null || maxBytesPerPull.toBytes() < 1) {
                throw invalid("pull.max-bytes-per-pull", "must be >= 1B", maxBytesPerPull);
            }
            if (idleTimeout == null || idleTimeout.isNegative()) {
                throw invalid("pull.idle-timeout", "must be >= 0", idleTimeout);
            }
            requireAtLeastOne("pull.max-groups", maxGroups);
            requireAtLeastOne("pull.max-subjects", maxSubjects);
            requireAtLeastOne("pull.max-committed-offsets", maxCommittedOffsets);
            requirePositive("pull.offset-retention", offsetRetention);
            if (offsetRetention.compareTo(Duration.ofDays(365L * 73)) > 0) {
                // the store compares clock differences within a quarter of the long range (InMemoryMessageStore)
                throw invalid("pull.offset-retention", "must be at most 73 years", offsetRetention);
            }
        }
    }

    private static void requirePositive(String property, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw invalid(property, "must be positive", d);
        }
    }

    /** The scheduler's bound on its durations ({@code ActorScheduler.Builder}: at most 1 day). */
    private static void requireAtMostADay(String property, Duration d) {
        if (d.compareTo(Duration.ofDays(1)) > 0) {
            throw invalid(property, "must be at most 1 day", d);
        }
    }

    private static void requireAtLeastOne(String property, int value) {
        if (value < 1) {
            throw invalid(property, "must be >= 1", value);
        }
    }

    private static IllegalArgumentException invalid(String property, String rule, Object value) {
        return new IllegalArgumentException(PREFIX + "." + property + " " + rule + " but was " + value);
    }
}
