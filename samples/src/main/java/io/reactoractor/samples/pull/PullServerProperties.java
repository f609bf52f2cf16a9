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
 */
@ConfigurationProperties("pull")
public record PullServerProperties(
        @DefaultValue("0") int threads,
        @DefaultValue("30s") Duration ackTimeout,
        @DefaultValue("100000") int retention,
        @DefaultValue("100000") int maxWaitingPulls,
        @DefaultValue("5m") Duration maxTimeout,
        @DefaultValue("1MB") DataSize maxBodySize) {

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
