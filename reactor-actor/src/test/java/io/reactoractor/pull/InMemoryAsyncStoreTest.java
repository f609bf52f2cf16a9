package io.reactoractor.pull;

/** The in-memory store, adapted by {@link AsyncMessageStore#of}, passes the asynchronous store contract. */
class InMemoryAsyncStoreTest extends AsyncMessageStoreContract {

    @Override
    protected AsyncMessageStore newStore() {
        return AsyncMessageStore.of(InMemoryMessageStore.create());
    }
}
