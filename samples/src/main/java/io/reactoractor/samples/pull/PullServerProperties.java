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
 */
@ConfigurationProperties("pull")
public record PullServerProperties(
        @DefaultValue("5m") Duration maxTimeout,
        @DefaultValue("1MB") DataSize maxBodySize,
        @DefaultValue("100") int statusLimit,
        @DefaultValue("60s") Duration connectionIdleTimeout,
        @DefaultValue("30s") Duration requestReadTimeout,
        @DefaultValue("2m") Duration requestTimeout) {

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
    }

    private static void requirePositive(String property, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(property + " must be positive but was " + d);
        }
    }
}
