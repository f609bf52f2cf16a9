package io.reactoractor.samples.pull;

import io.reactoractor.pull.AsyncMessageStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With {@code pull.store=redis}: the pull consumer's store is Redis Streams
 * ({@code reactor-actor-redis}), and reactor-actor's auto-configuration builds the consumer on it.
 * With the default {@code pull.store=memory} this class is skipped (its condition is read without
 * loading it) and nothing of Lettuce is loaded: {@link RedisStores}, the only class naming the Redis
 * store (a class that uses Lettuce), is loaded only here. ({@code ApiErrors} names the Redis store's
 * {@code RedisGroupLimitExceededException}, which uses nothing of Lettuce.)
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "pull.store", havingValue = "redis")
class RedisStoreConfiguration {

    /**
     * Connects at start-up (a Redis that cannot be reached stops the app with Lettuce's error).
     *
     * @param properties {@code pull.redis.*}
     * @return the store, disposed (connections closed) after the consumer
     */
    @Bean(destroyMethod = "dispose")
    AsyncMessageStore pullRedisStore(PullServerProperties properties) {
        return RedisStores.create(properties.redis());
    }
}
