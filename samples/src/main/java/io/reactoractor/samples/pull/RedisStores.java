package io.reactoractor.samples.pull;

import io.reactoractor.pull.redis.RedisStreamsMessageStore;

/** Builds the Redis store from {@code pull.redis.*}; loaded only with {@code pull.store=redis}. */
final class RedisStores {

    private RedisStores() {
    }

    static RedisStreamsMessageStore create(PullServerProperties.Redis redis) {
        try {
            io.lettuce.core.RedisURI.create(redis.uri());
        } catch (RuntimeException e) {
            // Lettuce's own message ("Scheme localhost not supported") does not say which setting is wrong
            throw new IllegalArgumentException("pull.redis.uri must be a Redis URI such as redis://localhost:6379"
                    + " but was '" + redis.uri() + "': " + e.getMessage(), e);
        }
        RedisStreamsMessageStore.Builder b = RedisStreamsMessageStore.builder()
                .uri(redis.uri())
                .keyPrefix(redis.keyPrefix())
                .maxGroupsPerSubject(redis.maxGroupsPerSubject())
                .maxSubjects(redis.maxSubjects())
                .groupRetention(redis.groupRetention());
        if (!redis.consumerName().isEmpty()) {
            b.consumerName(redis.consumerName());
        }
        return b.build();
    }
}
