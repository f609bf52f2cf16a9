package io.reactoractor.pull.redis;

import java.time.Duration;

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
        // a generous command timeout: the contract is not about timeouts. (Commands that took the whole
        // timeout on a busy CI machine were the store's use of Lettuce's reactive API, which could leave the
        // connection's auto-read off; the store uses the asynchronous API since.)
        return RedisStreamsMessageStore.builder().uri(redis.uri()).keyPrefix(unique("contract") + ":")
                .commandTimeout(Duration.ofSeconds(30)).build();
    }

    @Override
    protected void closeStore(AsyncMessageStore s) {
        ((RedisStreamsMessageStore) s).dispose();
    }
}
