package io.reactoractor.actor;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.micrometer.context.ContextRegistry;
import io.reactoractor.ActorScheduler;
import io.reactoractor.ring.RingBuffer;
import io.reactoractor.ring.RingConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * Reactor's automatic context propagation ({@code Hooks.enableAutomaticContextPropagation()}) reaches user
 * code inside actor turns: a behaviour and a ring handler see the thread locals of their subscriber's
 * context, as the {@code map} after Reactor's {@code publishOn} does (found by a black-box probe: they saw
 * none, while the downstream operators did). Each scenario runs on Reactor's peer in the same test.
 */
class AutomaticContextPropagationTest {

    private static final String KEY = "reactor-actor.test.tl";
    private static final ThreadLocal<String> TL = new ThreadLocal<>();

    private final ActorScheduler scheduler = ActorScheduler.builder().name("ctx-prop").threads(2).build();
    private final Scheduler peer = Schedulers.newParallel("ctx-peer", 2);
    private final List<String> seen = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() {
        ContextRegistry.getInstance().registerThreadLocalAccessor(KEY, TL::get, TL::set, TL::remove);
    }

    @AfterEach
    void tearDown() {
        Hooks.disableAutomaticContextPropagation();
        ContextRegistry.getInstance().removeThreadLocalAccessor(KEY);
        TL.remove();
        scheduler.dispose();
        peer.dispose();
    }

    private void see(String where) {
        seen.add(where + "=" + TL.get());
    }

    private Set<String> seenOnce() {
        Set<String> s = seen.stream().collect(Collectors.toCollection(java.util.TreeSet::new));
        seen.clear();
        return s;
    }

    private Actor<Integer, Integer> echo() {
        return Actor.<Integer, Integer>builder(scheduler).behaviour((m, ctx) -> {
            see("behaviour");
            ctx.emit(m);
            return true;
        }).build();
    }

    /** The peer: Reactor's publishOn, then the behaviour as a map. */
    private Set<String> peerRun() {
        Flux.range(0, 20).publishOn(peer, 8).map(m -> {
            see("behaviour");
            return m;
        }).doOnNext(v -> see("downstream")).contextWrite(Context.of(KEY, "ctx")).blockLast(Duration.ofSeconds(10));
        return seenOnce();
    }

    @Test
    void aBehaviourSeesTheSubscribersThreadLocalsLikeReactorsMapAfterPublishOn() throws Exception {
        Hooks.enableAutomaticContextPropagation();
        Set<String> reactor = peerRun();

        Actor<Integer, Integer> actor = echo();
        Flux.from(actor).doOnNext(v -> see("downstream")).contextWrite(Context.of(KEY, "ctx")).subscribe();
        Thread teller = new Thread(() -> {
            for (int i = 0; i < 20; i++) {
                while (!actor.tell(i)) {
                    Thread.onSpinWait();
                }
            }
            actor.complete();
        }, "teller"); // messages told from a thread that knows nothing of the context
        teller.start();
        teller.join();
        awaitTerminated(actor);

        assertThat(reactor).containsExactly("behaviour=ctx", "downstream=ctx");
        assertThat(seenOnce()).isEqualTo(reactor);
    }

    /**
     * The code above the fair {@code publishOn} that its drain runs (replenishing requests: the {@code doOnNext} of a
     * {@code range}; a fused source's poll: a stream's {@code peek}) saw the thread locals only for the first
     * {@code prefetch} elements (8 of 100; 1 of 100 for the fused source), those requested from the subscribing
     * thread; above Reactor's {@code publishOn} it sees them for all (found by a black-box probe).
     */
    @Test
    void theCodeAboveTheFairPublishOnSeesThemAsAboveReactorsPublishOn() {
        Hooks.enableAutomaticContextPropagation();
        for (Scheduler on : List.of(peer, scheduler)) {
            boolean fair = on == scheduler;
            Flux<Integer> range = Flux.range(0, 100).doOnNext(v -> see("above"));
            Flux<Integer> stream = Flux.fromStream(() -> java.util.stream.IntStream.range(0, 100).boxed()
                    .peek(v -> see("fused source")));
            for (Flux<Integer> source : List.of(range, stream)) {
                (fair ? source.transform(ActorOperators.publishOn(scheduler, 8)) : source.publishOn(peer, 8))
                        .contextWrite(Context.of(KEY, "ctx")).blockLast(Duration.ofSeconds(10));
            }
            assertThat(seen).as(fair ? "the fair publishOn" : "Reactor's publishOn").hasSize(200)
                    .allSatisfy(x -> assertThat(x).endsWith("=ctx"));
            seen.clear();
        }
    }

    @Test
    void aBehaviourFedByAnUpstreamSeesThemToo() throws Exception {
        Hooks.enableAutomaticContextPropagation();
        Actor<Integer, Integer> actor = echo();
        CountDownLatch done = new CountDownLatch(1);
        Flux.from(actor).doOnNext(v -> see("downstream")).contextWrite(Context.of(KEY, "ctx"))
                .doFinally(s -> done.countDown()).subscribe();
        Flux.range(0, 50).subscribe(actor);
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(seenOnce()).containsExactly("behaviour=ctx", "downstream=ctx");
    }

    @Test
    void aRingHandlerSeesItsSubscribersThreadLocals() throws Exception {
        Hooks.enableAutomaticContextPropagation();
        RingBuffer<Integer> ring = RingBuffer.<Integer>builder(scheduler).size(16).build();
        RingConsumer<Integer, Integer> consumer = ring.publishedConsumer("c", (e, seq, endOfBatch) -> {
            see("handler");
            return e;
        });
        ring.start();
        CountDownLatch done = new CountDownLatch(1);
        Flux.from(consumer).doOnNext(v -> see("downstream")).contextWrite(Context.of(KEY, "ctx"))
                .doFinally(s -> done.countDown()).subscribe();
        for (int i = 0; i < 20; i++) {
            while (!ring.tryPublish(i)) {
                Thread.onSpinWait();
            }
        }
        ring.complete();
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(seenOnce()).containsExactly("downstream=ctx", "handler=ctx");
    }

    @Test
    void nothingLeaksIntoLaterTasksOfTheSameCarriers() throws Exception {
        Hooks.enableAutomaticContextPropagation();
        Actor<Integer, Integer> actor = echo();
        Flux.from(actor).contextWrite(Context.of(KEY, "ctx")).subscribe();
        for (int i = 0; i < 20; i++) {
            assertThat(actor.tell(i)).isTrue();
        }
        actor.complete();
        awaitTerminated(actor);
        seen.clear();
        CountDownLatch ran = new CountDownLatch(40);
        for (int i = 0; i < 40; i++) {
            scheduler.schedule(() -> {
                see("task");
                ran.countDown();
            });
        }
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(seenOnce()).containsExactly("task=null");
    }

    @Test
    void withoutAutomaticPropagationNothingIsSet() throws Exception {
        // control: the mode is Reactor's, off by default; a behaviour then sees no thread local, as Reactor's map
        Set<String> reactor = peerRun();
        Actor<Integer, Integer> actor = echo();
        Flux.from(actor).doOnNext(v -> see("downstream")).contextWrite(Context.of(KEY, "ctx")).subscribe();
        for (int i = 0; i < 20; i++) {
            assertThat(actor.tell(i)).isTrue();
        }
        actor.complete();
        awaitTerminated(actor);
        assertThat(reactor).containsExactly("behaviour=null", "downstream=null");
        assertThat(seenOnce()).isEqualTo(reactor);
    }

    private static void awaitTerminated(Actor<?, ?> actor) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!actor.isTerminated() && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertThat(actor.isTerminated()).isTrue();
    }
}
