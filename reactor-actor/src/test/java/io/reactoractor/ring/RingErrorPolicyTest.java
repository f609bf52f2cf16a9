package io.reactoractor.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The policy values: constants, factories, bad arguments, the back-off sequence. */
class RingErrorPolicyTest {

    @Test
    void stopAndSkipAreTheConstantsTheFactoriesReturn() {
        assertSame(RingErrorPolicy.STOP, RingErrorPolicy.stop());
        assertSame(RingErrorPolicy.SKIP, RingErrorPolicy.skip());
        assertFalse(RingErrorPolicy.STOP.retries());
        assertFalse(RingErrorPolicy.STOP.skipsFailedEvent());
        assertTrue(RingErrorPolicy.SKIP.skipsFailedEvent());
        assertEquals("RingErrorPolicy.STOP", RingErrorPolicy.STOP.toString());
        assertEquals("RingErrorPolicy.SKIP", RingErrorPolicy.SKIP.toString());
    }

    @Test
    void retryPoliciesAreValues() {
        RingErrorPolicy r = RingErrorPolicy.retry(3, Duration.ofMillis(10));
        assertTrue(r.retries());
        assertFalse(r.skipsFailedEvent());
        assertEquals(3, r.maxRetries());
        assertEquals(Duration.ofMillis(10), r.backoff());
        assertEquals(r, RingErrorPolicy.retry(3, Duration.ofMillis(10)));
        assertEquals(r.hashCode(), RingErrorPolicy.retry(3, Duration.ofMillis(10)).hashCode());
        assertNotEquals(r, RingErrorPolicy.retryThenSkip(3, Duration.ofMillis(10)));
        assertNotEquals(r, RingErrorPolicy.retry(2, Duration.ofMillis(10)));
        assertNotEquals(r, RingErrorPolicy.retry(3, Duration.ofMillis(11)));
        assertTrue(RingErrorPolicy.retryThenSkip(1, Duration.ofNanos(1)).skipsFailedEvent());
        assertEquals("RingErrorPolicy.retry(3, PT0.01S)", r.toString());
        assertEquals("RingErrorPolicy.retryThenSkip(1, PT1S)",
                RingErrorPolicy.retryThenSkip(1, Duration.ofSeconds(1)).toString());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void maxRetriesMustBePositive(int n) {
        for (IllegalArgumentException e : new IllegalArgumentException[] {
                assertThrows(IllegalArgumentException.class, () -> RingErrorPolicy.retry(n, Duration.ofMillis(1))),
                assertThrows(IllegalArgumentException.class,
                        () -> RingErrorPolicy.retryThenSkip(n, Duration.ofMillis(1)))}) {
            assertTrue(e.getMessage().startsWith("maxRetries must be at least 1"), e.getMessage());
            assertTrue(e.getMessage().contains(String.valueOf(n)), e.getMessage());
        }
    }

    @Test
    void backoffMustBePositive() {
        for (Duration d : new Duration[] {null, Duration.ZERO, Duration.ofMillis(-1)}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RingErrorPolicy.retry(1, d));
            assertTrue(e.getMessage().startsWith("backoff must be a positive duration"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> RingErrorPolicy.retryThenSkip(1, d));
            assertTrue(e.getMessage().startsWith("backoff must be a positive duration"), e.getMessage());
        }
    }

    @Test
    void theBackoffDoublesUpToThirtySeconds() {
        RingErrorPolicy r = RingErrorPolicy.retry(100, Duration.ofMillis(10));
        assertEquals(10_000_000L, r.backoffNanos(1));
        assertEquals(20_000_000L, r.backoffNanos(2));
        assertEquals(40_000_000L, r.backoffNanos(3));
        assertEquals(30_000_000_000L, r.backoffNanos(13)); // 10 ms * 4096 = 40.96 s > 30 s
        assertEquals(30_000_000_000L, r.backoffNanos(64));
        assertEquals(30_000_000_000L, r.backoffNanos(Integer.MAX_VALUE));
        assertEquals(30_000_000_000L, RingErrorPolicy.retry(1, Duration.ofDays(365 * 1000)).backoffNanos(1));
        RingErrorPolicy ns = RingErrorPolicy.retry(1, Duration.ofNanos(1));
        assertEquals(1L << 30, ns.backoffNanos(31)); // 1.07 s
        assertEquals(30_000_000_000L, ns.backoffNanos(41)); // 2^40 ns = 1099 s: capped
    }
}
