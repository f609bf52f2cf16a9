package io.reactoractor.samples.pull;

import io.reactoractor.pull.redis.RedisStreamsMessageStore;

/** Builds the Redis store from {@code pull.redis.*}; loaded only with {@code pull.store=redis}. */
final class RedisStores {

    private RedisStores() {
    }

    static RedisStreamsMessageStore create(PullServerProperties.Redis redis) {
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
