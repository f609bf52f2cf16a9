package io.reactoractor.samples;

import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A ring buffer with a diamond of consumers (issue 12), printing the lag of each consumer while it runs.
 *
 * <pre>
 *            ┌─ journal ──┐
 *   orders ──┤            ├── match ──▶ subscriber
 *            └─ replicate ┘   (published: emits order * 2)
 * </pre>
 * {@code replicate} is slow (busy work per event), so it lags; {@code match} sees an event only after
 * both, so it lags at least as much; the producer never gets more than the ring size ahead of the
 * slowest consumer, so no lag ever exceeds the ring size. Consumers are actors: none holds a thread
 * while it waits.
 *
 * <p>Run: {@code mvn -B -q -pl samples -am -DskipTests package exec:java
 * -Ddemo.mainClass=io.reactoractor.samples.RingDiamondDemo} (optional
 * {@code -Dexec.args="<events> <slow ns per event>"}, default 200000 and 2000).
 */
public final class RingDiamondDemo {

    /** Slots of the demo's ring. */
    public static final int RING_SIZE = 1024;

    /**
     * The figures of one run.
     *
     * @param events     events published
     * @param received   results the subscriber of {@code match} received
     * @param inOrder    whether those results were exactly {@code 0, 2, 4, ...}
     * @param maxLag     the largest lag seen per consumer, by name
     * @param reports    lag lines printed
     */
    public record Result(long events, long received, boolean inOrder, Map<String, Long> maxLag, int reports) {
    }

    private RingDiamondDemo() {
    }

    /**
     * @param args optional: number of events, slow consumer's busy nanoseconds per event
     */
    public static void main(String[] args) {
        int events = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        long slowNanos = args.length > 1 ? Long.parseLong(args[1]) : 2_000;
        ActorScheduler scheduler = ActorScheduler.builder().name("ring-demo").threads(2).build();
        try {
            Result r = run(scheduler, events, slowNanos, Duration.ofMillis(100), System.out);
            System.out.println("done: " + r);
        } finally {
            scheduler.dispose();
        }
    }

    /**
     * Runs the diamond once and prints a lag line every {@code every}.
     *
     * @param scheduler where the consumers run
     * @param events    how many events to publish
     * @param slowNanos busy work of {@code replicate} per event
     * @param every     reporting interval
     * @param out       where the lag lines go
     * @return the figures of the run
     */
    public static Result run(ActorScheduler scheduler, int events, long slowNanos, Duration every, PrintStream out) {
        RingBuffer<Long> ring = RingBuffer.<Long>builder(scheduler).name("orders").size(RING_SIZE).build();
        RingConsumer<Long, Void> journal = ring.consumer("journal", (order, seq, endOfBatch) -> null);
        RingConsumer<Long, Void> replicate = ring.consumer("replicate", (order, seq, endOfBatch) -> {
            long until = System.nanoTime() + slowNanos;
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
            return null;
        });
        RingConsumer<Long, Long> match = ring.publishedConsumer("match", (order, seq, endOfBatch) -> order * 2);
        ring.handleEventsWith(journal, replicate).then(match);
        ring.start();

        Map<String, Long> maxLag = new LinkedHashMap<>();
        for (RingConsumer<Long, ?> c : ring.consumers()) {
            maxLag.put(c.name(), 0L);
        }
        AtomicLong reports = new AtomicLong();
        Disposable reporter = Flux.interval(every, Schedulers.single()).subscribe(tick -> {
            StringBuilder line = new StringBuilder("lag");
            synchronized (maxLag) {
                for (RingConsumer<Long, ?> c : ring.consumers()) {
                    long lag = c.lag();
                    maxLag.merge(c.name(), lag, Math::max);
                    line.append(' ').append(c.name()).append('=').append(lag);
                }
            }
            line.append("  (cursor ").append(ring.cursor()).append(", free ").append(ring.remainingCapacity())
                    .append(" of ").append(ring.size()).append(')');
            out.println(line);
            reports.incrementAndGet();
        });

        AtomicLong received = new AtomicLong();
        AtomicLong outOfOrder = new AtomicLong();
        Flux.range(0, events).map(Long::valueOf).subscribeOn(Schedulers.boundedElastic()).subscribe(ring);
        Flux.from(match).doOnNext(v -> {
            if (v != received.getAndIncrement() * 2) {
                outOfOrder.incrementAndGet();
            }
        }).blockLast(Duration.ofMinutes(5));
        ring.whenTerminated().block(Duration.ofMinutes(1));
        reporter.dispose();
        synchronized (maxLag) {
            return new Result(events, received.get(), outOfOrder.get() == 0, Map.copyOf(maxLag), (int) reports.get());
        }
    }
}
