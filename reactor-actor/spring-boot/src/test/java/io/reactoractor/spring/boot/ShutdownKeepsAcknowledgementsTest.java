package io.reactoractor.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import io.reactoractor.pull.AsyncMessageStore;
import io.reactoractor.pull.InMemoryMessageStore;
import io.reactoractor.pull.Message;
import io.reactoractor.pull.MessageStore;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.pull.PullResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Closing the context keeps the acknowledgements handed in before it: the auto-configured scheduler closes
 * gracefully (which waits until an asynchronous store recorded them) before the consumer is disposed and
 * before Spring destroys the application's store bean.
 */
@Timeout(60)
class ShutdownKeepsAcknowledgementsTest {

    /** An asynchronous store over the in-memory one whose acknowledgements take a while to be recorded. */
    static final class SlowAckStore implements AsyncMessageStore, AutoCloseable {
        final InMemoryMessageStore backing = InMemoryMessageStore.builder().build();
        private final AsyncMessageStore delegate = AsyncMessageStore.of(backing);
        volatile boolean closed;

        @Override
        public Mono<Long> append(String subject, byte[] payload) {
            return delegate.append(subject, payload);
        }

        @Override
        public String epoch() {
            return delegate.epoch();
        }

        @Override
        public boolean denseOffsets() {
            return delegate.denseOffsets();
        }

        @Override
        public Mono<List<Message>> fetch(String subject, String group, long fromOffset, int maxMessages) {
            return delegate.fetch(subject, group, fromOffset, maxMessages);
        }

        @Override
        public Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed) {
            // recorded 300 ms after the call, unless the store was closed meanwhile (a closed connection)
            return Mono.delay(Duration.ofMillis(300))
                    .then(Mono.defer(() -> closed
                            ? Mono.<Void>error(new IllegalStateException("store closed"))
                            : delegate.acknowledge(subject, group, offsets, committed)));
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

        /** Spring destroys an AutoCloseable bean with this. */
        @Override
        public void close() {
            closed = true;
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ReactorActorAutoConfiguration.class))
            .withPropertyValues("reactor.actor.threads=1", "reactor.actor.pull.enabled=true",
                    "reactor.actor.shutdown-timeout=10s");

    @Test
    void acknowledgementsHandedInBeforeTheCloseAreRecordedBeforeTheConsumerAndTheStoreGo() {
        SlowAckStore[] store = new SlowAckStore[1];
        PullConsumer[] consumer = new PullConsumer[1];
        @SuppressWarnings("unchecked")
        CompletableFuture<Long>[] ack = new CompletableFuture[1];
        runner.withBean(AsyncMessageStore.class, SlowAckStore::new).run(context -> {
            store[0] = (SlowAckStore) context.getBean(AsyncMessageStore.class);
            consumer[0] = context.getBean(PullConsumer.class);
            for (int i = 0; i < 5; i++) {
                consumer[0].appendAsync("s", ("m" + i).getBytes()).block(Duration.ofSeconds(10));
            }
            PullResult got = consumer[0].pull("s", "g", 5, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            assertThat(got.messages()).hasSize(5);
            List<Long> offsets = got.messages().stream().map(Message::offset).collect(Collectors.toList());
            ack[0] = consumer[0].ack("s", "g", got.epoch(), offsets).toFuture();
            // the runner closes the context now, while the acknowledgement is on its way to the store
        });
        assertThat(ack[0]).as("the acknowledgement handed in before the close")
                .succeedsWithin(Duration.ofSeconds(10)).isEqualTo(5L);
        assertThat(store[0].backing.committedOffset("s", "g")).as("recorded in the store").isEqualTo(5L);
        assertThat(store[0].closed).as("the store bean was destroyed after that").isTrue();
        assertThat(consumer[0].isDisposed()).isTrue();
    }

    @Test
    void closingFromANonBlockingThreadStillWaitsForTheAcknowledgements() throws Exception {
        SlowAckStore[] store = new SlowAckStore[1];
        @SuppressWarnings("unchecked")
        CompletableFuture<Long>[] ack = new CompletableFuture[1];
        long[] closeMillis = new long[1];
        runner.withBean(AsyncMessageStore.class, SlowAckStore::new).run(context -> {
            store[0] = (SlowAckStore) context.getBean(AsyncMessageStore.class);
            PullConsumer consumer = context.getBean(PullConsumer.class);
            consumer.appendAsync("s", "m".getBytes()).block(Duration.ofSeconds(10));
            PullResult got = consumer.pull("s", "g", 1, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
            ack[0] = consumer.ack("s", "g", got.epoch(), List.of(got.messages().get(0).offset())).toFuture();
            // Reactor's parallel workers are non-blocking threads: block() refuses them at once
            reactor.core.scheduler.Scheduler parallel = reactor.core.scheduler.Schedulers.newParallel("closer", 1);
            try {
                CompletableFuture<Void> closed = new CompletableFuture<>();
                parallel.schedule(() -> {
                    long start = System.nanoTime();
                    context.close();
                    closeMillis[0] = (System.nanoTime() - start) / 1_000_000;
                    closed.complete(null);
                });
                closed.get(30, java.util.concurrent.TimeUnit.SECONDS);
            } finally {
                parallel.dispose();
            }
        });
        assertThat(ack[0]).as("the acknowledgement handed in before the close (closed in %d ms)", closeMillis[0])
                .succeedsWithin(Duration.ofSeconds(10)).isEqualTo(1L);
        assertThat(store[0].backing.committedOffset("s", "g")).isEqualTo(1L);
    }

    @Test
    void closingFromATaskOfTheSchedulerItselfDoesNotWaitForThatTaskAndStillEndsEverything() throws Exception {
        io.reactoractor.ActorScheduler[] scheduler = new io.reactoractor.ActorScheduler[1];
        PullConsumer[] consumer = new PullConsumer[1];
        long[] closeMillis = new long[1];
        runner.run(context -> {
            scheduler[0] = context.getBean(io.reactoractor.ActorScheduler.class);
            consumer[0] = context.getBean(PullConsumer.class);
            CompletableFuture<Void> closed = new CompletableFuture<>();
            scheduler[0].schedule(() -> {
                long start = System.nanoTime();
                context.close(); // its graceful close would wait for this very task
                closeMillis[0] = (System.nanoTime() - start) / 1_000_000;
                closed.complete(null);
            });
            closed.get(30, java.util.concurrent.TimeUnit.SECONDS);
        });
        assertThat(closeMillis[0]).as("close() did not wait out the 10 s shutdown timeout").isLessThan(5_000);
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (!(scheduler[0].isDisposed() && consumer[0].isDisposed()) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(scheduler[0].isDisposed()).as("the scheduler closed after that task").isTrue();
        assertThat(consumer[0].isDisposed()).as("then the consumer was disposed").isTrue();
    }
}
