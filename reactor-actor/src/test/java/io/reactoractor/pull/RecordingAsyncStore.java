package io.reactoractor.pull;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The adapted in-memory store for the asynchronous-store tests: records fetches and renewals; its
 * connection state and its append notifications are the test's to switch.
 */
final class RecordingAsyncStore implements AsyncMessageStore {
    final AsyncMessageStore delegate = AsyncMessageStore.of(InMemoryMessageStore.create());
    /** {maxMessages asked, messages returned} per fetch. */
    final ConcurrentLinkedQueue<int[]> fetches = new ConcurrentLinkedQueue<>();
    /** Fetches subscribed to and not yet answered. */
    final java.util.concurrent.atomic.AtomicInteger fetchesInFlight = new java.util.concurrent.atomic.AtomicInteger();
    final ConcurrentLinkedQueue<Long> renewed = new ConcurrentLinkedQueue<>();
    volatile boolean connected = true;
    volatile boolean notify = true;
    /** Whether fetch and acknowledge throw in the call (as the SPI's own stores do for bad arguments). */
    volatile boolean throwInTheCall;

    @Override
    public boolean connected() {
        return connected;
    }

    /** When set, what {@link #isConnectionFailure} answers (else the default: {@code !connected()}). */
    volatile java.util.function.Predicate<Throwable> connectionFailure;

    @Override
    public boolean isConnectionFailure(Throwable error) {
        java.util.function.Predicate<Throwable> p = connectionFailure;
        return p != null ? p.test(error) : AsyncMessageStore.super.isConnectionFailure(error);
    }

    /** When set, fetch calls fail with it (their Mono errors). */
    volatile Throwable fetchFailure;
    /** Fetch calls failed with {@link #fetchFailure}. */
    final java.util.concurrent.atomic.AtomicInteger failedFetches = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public Mono<List<Message>> fetch(String subject, String group, long fromOffset, int maxMessages) {
        if (throwInTheCall) {
            throw new IllegalStateException("test: the store threw in the call to fetch");
        }
        Throwable failure = fetchFailure;
        if (failure != null) {
            return Mono.<List<Message>>error(failure).doFinally(signal -> failedFetches.incrementAndGet());
        }
        return delegate.fetch(subject, group, fromOffset, maxMessages)
                .doOnSubscribe(s -> fetchesInFlight.incrementAndGet())
                .doOnNext(got -> fetches.add(new int[] {maxMessages, got.size()}))
                .doFinally(signal -> fetchesInFlight.decrementAndGet());
    }

    @Override
    public Mono<Void> renew(String subject, String group, long[] offsets) {
        for (long o : offsets) {
            renewed.add(o);
        }
        return Mono.empty();
    }

    /** Offsets whose ack timeout passed, asked about before their redelivery ({@link #renewPending}). */
    final ConcurrentLinkedQueue<Long> checked = new ConcurrentLinkedQueue<>();
    /** Offsets {@link #renewPending} answers as no longer pending (acknowledged by "another process"). */
    final java.util.Set<Long> settledElsewhere = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @Override
    public Mono<long[]> renewPending(String subject, String group, long[] offsets) {
        for (long o : offsets) {
            checked.add(o);
        }
        return Mono.just(java.util.Arrays.stream(offsets).filter(o -> !settledElsewhere.contains(o)).toArray());
    }

    @Override
    public Mono<Long> append(String subject, byte[] payload) {
        return delegate.append(subject, payload);
    }

    @Override
    public boolean denseOffsets() {
        return true;
    }

    /** Whether acknowledge calls fail (their Mono errors), as a store that cannot be reached. */
    volatile boolean acknowledgeFails;
    /** Whether acknowledge calls never end (their Mono never signals), as a store that hangs. */
    volatile boolean acknowledgeHangs;
    /** How long acknowledge calls take to answer ({@code null}: as the delegate answers), as a slow store. */
    volatile Duration acknowledgeDelay;
    /** Acknowledge calls made, failed or not. */
    final java.util.concurrent.atomic.AtomicInteger acknowledgeCalls = new java.util.concurrent.atomic.AtomicInteger();
    /** Offsets the store recorded as acknowledged (successful calls). */
    final java.util.Set<Long> recordedAcks = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** The highest committed offset the store recorded (-1: none). */
    final java.util.concurrent.atomic.AtomicLong recordedCommit = new java.util.concurrent.atomic.AtomicLong(-1);

    @Override
    public Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed) {
        acknowledgeCalls.incrementAndGet();
        if (throwInTheCall) {
            throw new IllegalStateException("test: the store threw in the call to acknowledge");
        }
        if (acknowledgeFails) {
            return Mono.error(new IllegalStateException("test: the store cannot be reached"));
        }
        if (acknowledgeHangs) {
            return Mono.never();
        }
        Duration delay = acknowledgeDelay;
        Mono<Void> call = delegate.acknowledge(subject, group, offsets, committed);
        if (delay != null) {
            call = call.delaySubscription(delay);
        }
        return call.doOnSuccess(v -> {
            for (long o : offsets) {
                recordedAcks.add(o);
            }
            recordedCommit.accumulateAndGet(committed, Math::max);
        });
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
        // notifications can be switched off: a lost Pub/Sub message
        return delegate.addAppendListener((s, end) -> {
            if (notify) {
                listener.appended(s, end);
            }
        });
    }

    long fetchedMessages() {
        return fetches.stream().mapToLong(f -> f[1]).sum();
    }
}
