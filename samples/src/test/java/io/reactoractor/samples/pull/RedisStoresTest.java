package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code pull.redis.uri} is "validated at start-up: a bad value stops the app with a message naming the property"
 * ({@link PullServerProperties}); Lettuce's own message ("Scheme localhost not supported") named none. No server is
 * contacted: the URI is refused before the store is built.
 */
class RedisStoresTest {

    @ParameterizedTest
    @ValueSource(strings = {"localhost:6379", "redis://", "http://localhost:6379"})
    void aMalformedUriStopsTheStartNamingTheProperty(String uri) {
        PullServerProperties.Redis redis = new PullServerProperties.Redis(uri, "pull:", "", 1000, 100_000,
                Duration.ofDays(7));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RedisStores.create(redis));
        assertTrue(e.getMessage().startsWith("pull.redis.uri must be a Redis URI"), e.getMessage());
        assertTrue(e.getMessage().contains(uri), e.getMessage());
    }
}
