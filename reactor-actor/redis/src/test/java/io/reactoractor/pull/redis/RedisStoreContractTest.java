package io.reactoractor.pull.redis;

import io.reactoractor.pull.AsyncMessageStore;
import io.reactoractor.pull.AsyncMessageStoreContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The Redis store passes the same contract as the in-memory store. */
class RedisStoreContractTest extends AsyncMessageStoreContract {

    private static TestRedis redis;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = TestRedis.start(false);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        redis.close();
    }

    @Override
    protected AsyncMessageStore newStore() {
        return RedisStreamsMessageStore.builder().uri(redis.uri()).keyPrefix(unique("contract") + ":").build();
    }

    @Override
    protected void closeStore(AsyncMessageStore s) {
        ((RedisStreamsMessageStore) s).dispose();
    }
}
