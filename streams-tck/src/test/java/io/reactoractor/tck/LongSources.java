package io.reactoractor.tck;

import reactor.core.publisher.Flux;

/** Upstreams for the publisher verifications. */
final class LongSources {

    private LongSources() {
    }

    /** Exactly {@code n} longs 0, 1, ... (works up to {@code Long.MAX_VALUE}: generated lazily). */
    static Flux<Long> upTo(long n) {
        return Flux.generate(() -> 0L, (i, sink) -> {
            if (i < n) {
                sink.next(i);
            } else {
                sink.complete();
            }
            return i + 1;
        });
    }
}
