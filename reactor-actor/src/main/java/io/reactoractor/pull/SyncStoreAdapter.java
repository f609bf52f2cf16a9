package io.reactoractor.pull;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * {@link AsyncMessageStore#of}: a {@link MessageStore} behind the asynchronous SPI. Each Mono runs the
 * synchronous call when subscribed and completes at once; the group's cursor is the caller's.
 */
final class SyncStoreAdapter implements AsyncMessageStore {

    private final MessageStore store;

    SyncStoreAdapter(MessageStore store) {
        this.store = Objects.requireNonNull(store, "store");
    }

    /** @return the adapted store */
    MessageStore delegate() {
        return store;
    }

    @Override
    public Mono<Long> append(String subject, byte[] payload) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(payload, "payload");
        return Mono.fromCallable(() -> store.append(subject, payload));
    }

    @Override
    public String epoch() {
        return store.epoch();
    }

    @Override
    public boolean denseOffsets() {
        return true;
    }

    @Override
    public Mono<List<Message>> fetch(String subject, String group, long fromOffset, int maxMessages) {
        requireNames(subject, group);
        if (maxMessages < 1) {
            throw new IllegalArgumentException("maxMessages must be >= 1 but was " + maxMessages);
        }
        return Mono.fromCallable(() -> {
            store.ensureSubject(subject);
            long from = fromOffset;
            if (from < 0) {
                long committed = store.committedOffset(subject, group);
                from = Math.max(committed, store.startOffset(subject));
            }
            return store.read(subject, from, maxMessages);
        });
    }

    @Override
    public Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed) {
        requireNames(subject, group);
        Names.offsets(offsets);
        return Mono.fromRunnable(() -> {
            if (committed >= 0) {
                store.commit(subject, group, committed);
            }
        });
    }

    @Override
    public Mono<Reclaimed> reclaim(String subject, String group, long cursor, Duration minIdle, int maxMessages) {
        requireNames(subject, group);
        Objects.requireNonNull(minIdle, "minIdle");
        if (cursor < 0) {
            throw new IllegalArgumentException("cursor must be >= 0 but was " + cursor);
        }
        if (maxMessages < 1) {
            throw new IllegalArgumentException("maxMessages must be >= 1 but was " + maxMessages);
        }
        return Mono.just(Reclaimed.NONE);
    }

    @Override
    public Mono<Position> position(String subject, String group) {
        requireNames(subject, group);
        return Mono.fromCallable(() -> {
            long end = store.endOffset(subject);
            long committed = store.committedOffset(subject, group);
            long start = Math.max(committed, store.startOffset(subject));
            return new Position(end, committed, Math.max(0, end - start), 0);
        });
    }

    @Override
    public Disposable addAppendListener(MessageStore.AppendListener listener) {
        return store.addAppendListener(listener);
    }

    private static void requireNames(String subject, String group) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(group, "group");
    }

    @Override
    public String toString() {
        return "AsyncMessageStore.of(" + store + ")";
    }
}
