package io.reactoractor.samples.pull;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The HTTP settings of the pull server ({@code pull.*} in {@code application.properties}, or
 * {@code -Dpull.max-timeout=1m} on the command line). The scheduler and the consumer are configured by
 * reactor-actor's Spring Boot auto-configuration ({@code reactor.actor.*}, e.g.
 * {@code -Dreactor.actor.pull.ack-timeout=10s}). Validated at start-up: a bad value stops the app with a
 * message naming the property.
 *
 * @param maxTimeout      the longest {@code timeoutMs} a long poll may ask for
 * @param maxBodySize     the largest request body (a message's payload, an ack); larger: 413
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
 * @param store           where messages live: {@code memory} (the embedded in-memory store, the default)
 *                        or {@code redis} (Redis Streams at {@code pull.redis.uri}, shared by every instance
 *                        of the app)
 * @param redis           the Redis store's settings ({@code pull.redis.*}), used with {@code pull.store=redis}
 */
@ConfigurationProperties("pull")
public record PullServerProperties(
        @DefaultValue("5m") Duration maxTimeout,
        @DefaultValue("1MB") DataSize maxBodySize,
        @DefaultValue("100") int statusLimit,
        @DefaultValue("60s") Duration connectionIdleTimeout,
        @DefaultValue("30s") Duration requestReadTimeout,
        @DefaultValue("2m") Duration requestTimeout,
        @DefaultValue("memory") String store,
        @DefaultValue Redis redis) {

    /** Validates; the messages name the property. */
    public PullServerProperties {
        requirePositive("pull.max-timeout", maxTimeout);
        if (maxBodySize == null || maxBodySize.toBytes() < 1 || maxBodySize.toBytes() > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("pull.max-body-size must be between 1B and 2GB but was " + maxBodySize);
        }
        if (statusLimit < 1) {
            throw new IllegalArgumentException("pull.status-limit must be >= 1 but was " + statusLimit);
        }
        requirePositive("pull.connection-idle-timeout", connectionIdleTimeout);
        requirePositive("pull.request-read-timeout", requestReadTimeout);
        requirePositive("pull.request-timeout", requestTimeout);
        if (!"memory".equals(store) && !"redis".equals(store)) {
            throw new IllegalArgumentException("pull.store must be memory or redis but was " + store);
        }
    }

    /**
     * The Redis store's settings ({@code pull.redis.*}).
     *
     * @param uri          the Redis server, e.g. {@code redis://localhost:6379}
     * @param keyPrefix    put before every subject to make its stream's key
     * @param consumerName this instance's consumer name in every group (empty: a random one); a stable
     *                     name lets a restarted instance find its own pending messages at once
     * @param maxGroupsPerSubject the most consumer groups one subject's stream may have; a poll for one more
     *                     gets {@code 503} naming this property
     * @param maxSubjects  the most subjects the store creates a stream for; an append that would create one
     *                     more gets {@code 503} naming this property
     * @param groupRetention how long nobody must have read a consumer group before it may be destroyed to make
     *                     room for a new one on a stream that has {@code max-groups-per-subject} groups
     */
    public record Redis(
            @DefaultValue("redis://localhost:6379") String uri,
            @DefaultValue("pull:") String keyPrefix,
            @DefaultValue("") String consumerName,
            @DefaultValue("1000") int maxGroupsPerSubject,
            @DefaultValue("100000") int maxSubjects,
            @DefaultValue("7d") Duration groupRetention) {

        /** Validates; the messages name the property. */
        public Redis {
            if (uri == null || uri.isBlank()) {
                throw new IllegalArgumentException("pull.redis.uri must not be blank");
            }
            if (keyPrefix == null || keyPrefix.isEmpty()) {
                throw new IllegalArgumentException("pull.redis.key-prefix must not be empty");
            }
            if (consumerName == null) {
                consumerName = "";
            }
            if (maxGroupsPerSubject < 1) {
                throw new IllegalArgumentException("pull.redis.max-groups-per-subject must be >= 1 but was "
                        + maxGroupsPerSubject);
            }
            if (maxSubjects < 1) {
                throw new IllegalArgumentException("pull.redis.max-subjects must be >= 1 but was " + maxSubjects);
            }
            if (groupRetention == null || groupRetention.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("pull.redis.group-retention must be at least 1ms but was "
                        + groupRetention);
            }
        }
    }

    private static void requirePositive(String property, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(property + " must be positive but was " + d);
        }
    }
}
