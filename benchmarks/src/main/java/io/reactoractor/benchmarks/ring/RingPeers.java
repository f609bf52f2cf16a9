package io.reactoractor.benchmarks.ring;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.YieldingWaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import com.lmax.disruptor.util.DaemonThreadFactory;
import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import reactor.core.publisher.ConnectableFlux;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The multicast peers of the ring-buffer benchmark (issue 12), each able to push a batch of events
 * through one of three topologies and wait until the last consumer handled them all.
 *
 * <p>Topologies: {@code oneToOne} (1P → 1C), {@code oneToThree} (1P → 3 independent consumers),
 * {@code diamond} (1P → A, B → C). Every consumer does the same trivial work (adds the value to its
 * own sum). Reactor has no consumer graph: its diamond is {@code zip(A, B)} followed by C, each branch
 * behind its own {@code publishOn}.
 */
final class RingPeers {

    static final int RING_SIZE = 1024;

    private RingPeers() {
    }

    /** One peer in one topology. */
    interface Runner extends AutoCloseable {
        /** Publishes {@code values} and returns once every consumer handled all of them. */
        long runBatch(Long[] values);

        @Override
        void close();
    }

    static Runner create(String impl, String topology) {
        return switch (impl) {
            case "ring" -> new OurRing(topology, false);
            case "ringSp" -> new OurRing(topology, true);
            case "ringSubscriber" -> new OurRingSubscriber(topology, false);
            case "ringSubscriberSp" -> new OurRingSubscriber(topology, true);
            case "disruptorBlocking" -> new LmaxDisruptor(topology, new BlockingWaitStrategy());
            case "disruptorYielding" -> new LmaxDisruptor(topology, new YieldingWaitStrategy());
            case "disruptorSleeping" -> new LmaxDisruptor(topology, new SleepingWaitStrategy());
            case "fluxPublish" -> new ReactorMulticast(topology, false);
            case "sinksMulticast" -> new ReactorMulticast(topology, true);
            default -> throw new IllegalArgumentException("impl " + impl);
        };
    }

    /** A consumer's work and its progress, shared by all peers. */
    static final class Counter {
        long sum;
        final AtomicLong count = new AtomicLong();

        void handle(long v) {
            sum += v;
            count.lazySet(count.get() + 1); // single writer
        }
    }

    static void awaitCounts(List<Counter> leaves, long target) {
        for (Counter c : leaves) {
            while (c.count.get() < target) {
                LockSupport.parkNanos(20_000);
            }
        }
    }

    static int consumerCount(String topology) {
        return switch (topology) {
            case "oneToOne" -> 1;
            case "oneToThree", "diamond" -> 3;
            default -> throw new IllegalArgumentException("topology " + topology);
        };
    }

    // ------------------------------------------------------------------ ours

    /** Adds the topology's consumers to {@code ring} (not started) and returns the leaves' counters. */
    static List<Counter> wire(RingBuffer<Long> ring, String topology) {
        List<RingConsumer<Long, Void>> cs = new ArrayList<>();
        List<Counter> counters = new ArrayList<>();
        for (int i = 0; i < consumerCount(topology); i++) {
            Counter c = new Counter();
            counters.add(c);
            cs.add(ring.consumer("c" + i, (e, s, eob) -> {
                c.handle(e);
                return null;
            }));
        }
        if (topology.equals("diamond")) {
            ring.handleEventsWith(cs.get(0), cs.get(1)).then(cs.get(2));
            return List.of(counters.get(2));
        }
        return counters;
    }

    /** A ring builder of size {@link #RING_SIZE}, single-producer ({@code ...Sp} peers) or not. */
    static RingBuffer.Builder<Long> builder(ActorScheduler scheduler, boolean singleProducer) {
        RingBuffer.Builder<Long> b = RingBuffer.<Long>builder(scheduler).size(RING_SIZE);
        return singleProducer ? b.singleProducer() : b;
    }

    /** Ours, imperative: {@code tryPublish} from the benchmark thread ({@code ringSp}: single-producer mode). */
    static final class OurRing implements Runner {
        private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-bench").threads(2).build();
        private final RingBuffer<Long> ring;
        private final List<Counter> leaves = new ArrayList<>();
        private long published;

        OurRing(String topology, boolean singleProducer) {
            ring = builder(scheduler, singleProducer).build();
            leaves.addAll(wire(ring, topology));
            ring.start();
        }

        @Override
        public long runBatch(Long[] values) {
            for (Long v : values) {
                while (!ring.tryPublish(v)) {
                    Thread.yield();
                }
            }
            published += values.length;
            awaitCounts(leaves, published);
            return published;
        }

        @Override
        public void close() {
            ring.complete();
            scheduler.dispose();
        }
    }

    /**
     * Ours as a {@code Subscriber}, the same shape as the {@code Flux.publish()} peer: per batch a new
     * ring subscribes to {@code Flux.fromArray(values)} (Reactor builds a new {@code publish()} per
     * batch too), so the source is pulled by the ring's demand and, being synchronous, emits inside
     * the ring's {@code request(n)}: on the benchmark thread first, then on the carrier whose consumer
     * freed the space. The benchmark thread only waits, joining the ring's {@code whenTerminated()} as
     * the Reactor peers join their {@code then()}.
     * {@code ringSubscriberSp}: the same with a single-producer ring (the upstream is its one producer).
     */
    static final class OurRingSubscriber implements Runner {
        private final ActorScheduler scheduler = ActorScheduler.builder().name("ring-bench-sub").threads(2).build();
        private final String topology;
        private final boolean singleProducer;

        OurRingSubscriber(String topology, boolean singleProducer) {
            this.topology = topology;
            this.singleProducer = singleProducer;
        }

        @Override
        public long runBatch(Long[] values) {
            RingBuffer<Long> ring = builder(scheduler, singleProducer).build();
            List<Counter> leaves = wire(ring, topology);
            ring.start();
            CompletableFuture<Void> done = ring.whenTerminated().toFuture();
            Flux.fromArray(values).subscribe(ring);
            // like the Reactor peers' join(): woken by the terminal signal (every consumer completed
            // after handling every event), not by polling the counters every 20 us
            done.join();
            awaitCounts(leaves, values.length); // returns at once: a check that all arrived
            return values.length;
        }

        @Override
        public void close() {
            scheduler.dispose();
        }
    }

    // ------------------------------------------------------------------ LMAX Disruptor

    static final class LongEvent {
        long value;
    }

    static final class LmaxDisruptor implements Runner {
        private final Disruptor<LongEvent> disruptor;
        private final com.lmax.disruptor.RingBuffer<LongEvent> rb;
        private final List<Counter> leaves = new ArrayList<>();
        private long published;

        @SuppressWarnings("unchecked")
        LmaxDisruptor(String topology, WaitStrategy wait) {
            disruptor = new Disruptor<>(LongEvent::new, RING_SIZE, DaemonThreadFactory.INSTANCE, ProducerType.SINGLE, wait);
            int n = consumerCount(topology);
            List<EventHandler<LongEvent>> hs = new ArrayList<>();
            List<Counter> counters = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Counter c = new Counter();
                counters.add(c);
                hs.add((e, s, eob) -> c.handle(e.value));
            }
            if (topology.equals("diamond")) {
                disruptor.handleEventsWith(hs.get(0), hs.get(1)).then(hs.get(2));
                leaves.add(counters.get(2));
            } else {
                disruptor.handleEventsWith(hs.toArray(new EventHandler[0]));
                leaves.addAll(counters);
            }
            rb = disruptor.start();
        }

        @Override
        public long runBatch(Long[] values) {
            for (Long v : values) {
                long seq = rb.next();
                rb.get(seq).value = v;
                rb.publish(seq);
            }
            published += values.length;
            awaitCounts(leaves, published);
            return published;
        }

        @Override
        public void close() {
            disruptor.halt();
        }
    }

    // ------------------------------------------------------------------ Reactor

    static final class ReactorMulticast implements Runner {
        private final String topology;
        private final boolean sinks;
        private final Scheduler scheduler = Schedulers.newParallel("ring-bench-reactor", 2);

        ReactorMulticast(String topology, boolean sinks) {
            this.topology = topology;
            this.sinks = sinks;
        }

        private Mono<Void> branches(Flux<Long> shared) {
            if (topology.equals("diamond")) {
                Counter a = new Counter();
                Counter b = new Counter();
                Counter c = new Counter();
                Flux<Long> fa = shared.publishOn(scheduler, RING_SIZE).doOnNext(a::handle);
                Flux<Long> fb = shared.publishOn(scheduler, RING_SIZE).doOnNext(b::handle);
                return Flux.zip(fa, fb, (x, y) -> x).publishOn(scheduler, RING_SIZE).doOnNext(c::handle).then();
            }
            List<Mono<Void>> ms = new ArrayList<>();
            for (int i = 0; i < consumerCount(topology); i++) {
                Counter c = new Counter();
                ms.add(shared.publishOn(scheduler, RING_SIZE).doOnNext(c::handle).then());
            }
            return Mono.when(ms);
        }

        @Override
        public long runBatch(Long[] values) {
            if (!sinks) {
                ConnectableFlux<Long> p = Flux.fromArray(values).publish(RING_SIZE);
                return run(p, values.length);
            }
            Sinks.Many<Long> sink = Sinks.many().multicast().onBackpressureBuffer(RING_SIZE, false);
            CompletableFuture<Void> done = branches(sink.asFlux()).toFuture();
            for (Long v : values) {
                while (sink.tryEmitNext(v) == Sinks.EmitResult.FAIL_OVERFLOW) {
                    Thread.yield();
                }
            }
            sink.tryEmitComplete();
            done.join();
            return values.length;
        }

        private long run(ConnectableFlux<Long> p, int n) {
            CompletableFuture<Void> done = branches(p).toFuture();
            p.connect();
            done.join();
            return n;
        }

        @Override
        public void close() {
            scheduler.dispose();
        }
    }
}
