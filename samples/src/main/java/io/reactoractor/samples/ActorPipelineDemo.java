package io.reactoractor.samples;

import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.Actor;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * source → actor → actor → sink on an {@link ActorScheduler}, with backpressure end to end.
 *
 * <p>Runs twice: with a fast sink, then with a slow one (busy work per element). With the slow sink the
 * source slows down to the sink's pace: the source is never more than the two mailboxes (plus a
 * replenish batch in flight) ahead of the sink, the mailboxes never exceed their capacity, and the heap
 * stays flat.
 *
 * <p>Run: {@code mvn -B -q -pl samples -am -DskipTests package exec:java
 * -Ddemo.mainClass=io.reactoractor.samples.ActorPipelineDemo} (optional
 * {@code -Dexec.args="<seconds per run>"}, default 5).
 */
public final class ActorPipelineDemo {

    /** Mailbox capacity of each stage. */
    public static final int CAPACITY = 256;

    /**
     * The figures of one run.
     *
     * @param label        which run
     * @param seconds      its length
     * @param emitted      elements the source emitted
     * @param received     elements the sink received
     * @param maxMailbox1  the largest mailbox size of stage 1 seen
     * @param maxMailbox2  the largest mailbox size of stage 2 seen
     * @param maxAhead     the most the source was ahead of the sink
     * @param heapStartMb  used heap at the start (after GC)
     * @param heapEndMb    used heap at the end (after GC)
     */
    public record Result(String label, double seconds, long emitted, long received, int maxMailbox1,
            int maxMailbox2, long maxAhead, long heapStartMb, long heapEndMb) {

        /** @return sink throughput, elements per second */
        public double throughput() {
            return received / seconds;
        }
    }

    private ActorPipelineDemo() {
    }

    public static void main(String[] args) throws InterruptedException {
        Duration window = Duration.ofSeconds(5);
        if (args.length > 0) {
            window = Duration.ofMillis(Math.round(Double.parseDouble(args[0]) * 1000));
        }
        PrintStream out = System.out;
        ActorScheduler scheduler = ActorScheduler.builder().name("pipeline").threads(2).build();
        try {
            out.println(format(run(scheduler, "fast sink", 0, window)));
            out.println(format(run(scheduler, "slow sink (20 us/element)", 20_000, window)));
        } finally {
            scheduler.dispose();
        }
    }

    /** @return a one-line report */
    public static String format(Result r) {
        return String.format(
                "%-26s %,12.0f el/s | source emitted %,d, sink received %,d, source ahead max %,d"
                        + " | max mailbox %d / %d (capacity %d) | heap %d MB -> %d MB",
                r.label(), r.throughput(), r.emitted(), r.received(), r.maxAhead(), r.maxMailbox1(),
                r.maxMailbox2(), CAPACITY, r.heapStartMb(), r.heapEndMb());
    }

    /**
     * Runs the pipeline for {@code window}, then cancels it.
     *
     * @param scheduler   the actor scheduler
     * @param label       the run's name
     * @param sinkNanos   busy work per element in the sink
     * @param window      how long to run
     * @return the figures
     * @throws InterruptedException if interrupted
     */
    public static Result run(ActorScheduler scheduler, String label, long sinkNanos, Duration window)
            throws InterruptedException {
        long heapStart = usedHeapMb();
        AtomicLong emitted = new AtomicLong();
        AtomicLong received = new AtomicLong();
        Flux<Long> source = Flux.generate(() -> 0L, (i, sink) -> {
            emitted.incrementAndGet();
            sink.next(i);
            return i + 1;
        });
        Actor<Long, Long> parse = Actor.<Long, Long>builder(scheduler).name("parse").capacity(CAPACITY)
                .<Long, Long>behaviour((m, ctx) -> {
                    ctx.emit(m * 2);
                    return true;
                }).build();
        Actor<Long, String> render = Actor.<Long, String>builder(scheduler).name("render").capacity(CAPACITY)
                .<Long, String>behaviour((m, ctx) -> {
                    ctx.emit(Long.toHexString(m));
                    return true;
                }).build();
        source.subscribe(parse);
        parse.subscribe(render);
        BaseSubscriber<String> sink = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                s.request(64);
            }

            @Override
            protected void hookOnNext(String v) {
                if (sinkNanos > 0) {
                    long end = System.nanoTime() + sinkNanos;
                    while (System.nanoTime() < end) {
                        Thread.onSpinWait();
                    }
                }
                if (received.incrementAndGet() % 64 == 0) {
                    request(64);
                }
            }
        };
        long start = System.nanoTime();
        render.subscribe(sink);
        int max1 = 0;
        int max2 = 0;
        long maxAhead = 0;
        long end = start + window.toNanos();
        while (System.nanoTime() < end) {
            max1 = Math.max(max1, parse.mailboxSize());
            max2 = Math.max(max2, render.mailboxSize());
            long r = received.get();
            maxAhead = Math.max(maxAhead, emitted.get() - r);
            TimeUnit.MILLISECONDS.sleep(1);
        }
        long e = emitted.get();
        long r = received.get();
        double seconds = (System.nanoTime() - start) / 1e9;
        sink.cancel();
        return new Result(label, seconds, e, r, max1, max2, maxAhead, heapStart, usedHeapMb());
    }

    private static long usedHeapMb() {
        Runtime rt = Runtime.getRuntime();
        System.gc();
        return (rt.totalMemory() - rt.freeMemory()) >> 20;
    }
}
