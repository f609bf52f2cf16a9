package io.reactoractor.samples.pull;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Settings of the pull server ({@code pull.*} in {@code application.properties}, or
 * {@code -Dpull.threads=4} on the command line). Validated at start-up: a bad value stops the app with
 * a message naming the property.
 *
 * @param threads         carrier threads of the {@code ActorScheduler} (≥ 2; 0 = one per core, at least 2)
 * @param ackTimeout      a message pulled with {@code ack=explicit} and not acknowledged within it is
 *                        redelivered
 * @param retention       messages kept per subject by the embedded store (older ones are dropped)
 * @param maxWaitingPulls long polls one (subject, group) holds at once; beyond it a pull gets 503
 * @param maxTimeout      the longest {@code timeoutMs} a long poll may ask for
 * @param maxBodySize     the largest request body (a message's payload, an ack); larger: 413
 * @param maxBytesPerPull the payload bytes one long-poll answer holds at most (its first message is always
 *                        included, however large)
 * @param idleTimeout     a (subject, group) with no waiting poll, nothing in flight, no stream and no call
 *                        for this long is removed (its committed offset stays); {@code 0}: never
 * @param maxGroups       the most (subject, group) pairs live at once; a call for one more gets 503
 * @param statusLimit     {@code GET /status} lists at most this many pairs (largest lag first) unless
 *                        {@code ?limit=} asks for fewer
 * @param connectionIdleTimeout a connection with no request in progress and nothing read for this long is
 *                        closed (Reactor Netty's {@code idleTimeout}); long polls and streams in progress
 *                        are not affected
 * @param requestReadTimeout    a request whose headers or body stop arriving for this long is closed
 *                        (Reactor Netty's {@code readTimeout}; a trickling client still ends at
 *                        {@code requestTimeout})
 * @param requestTimeout  the longest time to receive a whole request, headers and body (Reactor Netty's
 *                        {@code requestTimeout}); the wait of a long poll for its answer is not part of it
 */
@ConfigurationProperties("pull")
public record PullServerProperties(
        @DefaultValue("0") int threads,
        @DefaultValue("30s") Duration ackTimeout,
        @DefaultValue("100000") int retention,
        @DefaultValue("100000") int maxWaitingPulls,
        @DefaultValue("5m") Duration maxTimeout,
        @DefaultValue("1MB") DataSize maxBodySize,
        @DefaultValue("4MB") DataSize maxBytesPerPull,
        @DefaultValue("5m") Duration idleTimeout,
        @DefaultValue("10000") int maxGroups,
        @DefaultValue("100") int statusLimit,
        @DefaultValue("60s") Duration connectionIdleTimeout,
        @DefaultValue("30s") Duration requestReadTimeout,
        @DefaultValue("2m") Duration requestTimeout) {

    /** Validates; the messages name the property. */
    public PullServerProperties {
        if (threads < 0 || threads == 1) {
            throw new IllegalArgumentException("pull.threads must be 0 (one per core, at least 2) or >= 2 but was "
                    + threads);
        }
        requirePositive("pull.ack-timeout", ackTimeout);
        requirePositive("pull.max-timeout", maxTimeout);
        if (maxBodySize == null || maxBodySize.toBytes() < 1 || maxBodySize.toBytes() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("pull.max-body-size must be between 1B and 2GB but was " + maxBodySize);
        }
        if (retention < 1) {
            throw new IllegalArgumentException("pull.retention must be >= 1 but was " + retention);
        }
        if (maxWaitingPulls < 1) {
            throw new IllegalArgumentException("pull.max-waiting-pulls must be >= 1 but was " + maxWaitingPulls);
        }
        if (maxBytesPerPull == null || maxBytesPerPull.toBytes() < 1) {
            throw new IllegalArgumentException("pull.max-bytes-per-pull must be >= 1B but was " + maxBytesPerPull);
        }
        if (idleTimeout == null || idleTimeout.isNegative()) {
            throw new IllegalArgumentException("pull.idle-timeout must be >= 0 but was " + idleTimeout);
        }
        if (maxGroups < 1) {
            throw new IllegalArgumentException("pull.max-groups must be >= 1 but was " + maxGroups);
        }
        if (statusLimit < 1) {
            throw new IllegalArgumentException("pull.status-limit must be >= 1 but was " + statusLimit);
        }
        requirePositive("pull.connection-idle-timeout", connectionIdleTimeout);
        requirePositive("pull.request-read-timeout", requestReadTimeout);
        requirePositive("pull.request-timeout", requestTimeout);
    }

    /**
     * The settings with every default but the six original ones (tests, programmatic use).
     *
     * @param threads         see the class comment
     * @param ackTimeout      see the class comment
     * @param retention       see the class comment
     * @param maxWaitingPulls see the class comment
     * @param maxTimeout      see the class comment
     * @param maxBodySize     see the class comment
     * @return the settings
     */
    public static PullServerProperties of(int threads, Duration ackTimeout, int retention, int maxWaitingPulls,
            Duration maxTimeout, DataSize maxBodySize) {
        return new PullServerProperties(threads, ackTimeout, retention, maxWaitingPulls, maxTimeout, maxBodySize,
                DataSize.ofMegabytes(4), Duration.ofMinutes(5), 10_000, 100, Duration.ofSeconds(60),
                Duration.ofSeconds(30), Duration.ofMinutes(2));
    }

    /** @return the scheduler's thread count: {@link #threads}, or one per core but at least 2 */
    public int effectiveThreads() {
        return threads > 0 ? threads : Math.max(2, Runtime.getRuntime().availableProcessors());
    }

    private static void requirePositive(String property, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(property + " must be positive but was " + d);
        }
    }
}
