package io.reactoractor.pull;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A store that keeps each group's cursor itself, like Redis's {@code XREADGROUP ... >}, so that fetches
 * may be {@linkplain AsyncMessageStore#pipelinedFetches() pipelined}: a fetch takes its messages when it
 * is issued and answers when the test releases it (or at once while {@link #hold} is off). Records the
 * fetches outstanding at most and every acknowledge call.
 */
final class PipelinedAsyncStore implements AsyncMessageStore {
    final InMemoryMessageStore memory = InMemoryMessageStore.create();
    private final AsyncMessageStore delegate = AsyncMessageStore.of(memory);
    private final Map<String, Long> cursors = new ConcurrentHashMap<>();
    /** Fetches issued and not answered yet, in the order issued. */
    final ConcurrentLinkedQueue<Held> held = new ConcurrentLinkedQueue<>();
    /** The offsets of each acknowledge call. */
    final ConcurrentLinkedQueue<long[]> acks = new ConcurrentLinkedQueue<>();
    final AtomicInteger outstanding = new AtomicInteger();
    final AtomicInteger maxOutstanding = new AtomicInteger();
    volatile boolean hold;
    volatile boolean pipelined = true;

    /** A fetch held by the test: its messages and the answer to release. */
    record Held(List<Message> messages, Sinks.One<List<Message>> answer) {
    }

    @Override
    public boolean pipelinedFetches() {
        return pipelined;
    }

    @Override
    public synchronized Mono<List<Message>> fetch(String subject, String group, long fromOffset, int maxMessages) {
        String key = subject + "/" + group;
        long from = cursors.getOrDefault(key, memory.startOffset(subject));
        List<Message> got = memory.read(subject, from, maxMessages);
        if (!got.isEmpty()) {
            cursors.put(key, got.get(got.size() - 1).offset() + 1);
        }
        maxOutstanding.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
        if (!hold) {
            outstanding.decrementAndGet();
            return Mono.just(got);
        }
        Sinks.One<List<Message>> answer = Sinks.one();
        held.add(new Held(got, answer));
        return answer.asMono();
    }

    /** Answers the held fetch {@code h}. */
    void release(Held h) {
        held.remove(h);
        outstanding.decrementAndGet();
        h.answer().tryEmitValue(h.messages());
    }

    @Override
    public Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed) {
        acks.add(offsets.clone());
        return delegate.acknowledge(subject, group, offsets, committed);
    }

    @Override
    public Mono<Long> append(String subject, byte[] payload) {
        return delegate.append(subject, payload);
    }

    @Override
    public Mono<Reclaimed> reclaim(String subject, String group, long cursor, Duration minIdle, int maxMessages) {
        return delegate.reclaim(subject, group, cursor, minIdle, maxMessages);
    }

    @Override
    public Mono<Position> position(String subject, String group) {
        return delegate.position(subject, group);
    }

    @Override
    public Disposable addAppendListener(MessageStore.AppendListener listener) {
        return delegate.addAppendListener(listener);
    }
}
