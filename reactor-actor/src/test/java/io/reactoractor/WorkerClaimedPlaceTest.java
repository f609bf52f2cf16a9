package io.reactoractor;

import static org.assertj.core.api.Assertions.assertThat;

import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import io.reactoractor.internal.mailbox.StalledProducer;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.scheduler.Scheduler;

/**
 * A graceful close runs the tasks scheduled before it began, also those waiting behind a place in the worker's
 * mailbox that a slower {@code schedule} claimed and has not written yet (the mailbox's {@code isEmpty()} says
 * "empty" then; see {@code io.reactoractor.actor.ClaimedPlaceTest} for the actor's side). The slow producer is
 * stopped at that point ({@link StalledProducer}); both cases fail on the old code (the close ended, and the
 * tasks were cancelled once the place was written).
 */
class WorkerClaimedPlaceTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"scheduler", "group"})
    void aGracefulCloseWaitsForAClaimedPlaceAndRunsTheTasksScheduledBehindIt(String closing) throws Exception {
        ActorScheduler s = ActorScheduler.builder().name(TestSupport.uniqueName("worker-claimed")).threads(2).build();
        try {
            ActorGroup g = s.group("g", 1);
            Scheduler.Worker w = "group".equals(closing) ? g.createWorker() : s.createWorker();
            WorkerCell cell = ((ActorWorker) w).cell();
            StalledProducer stalled = StalledProducer.claim(mailboxOf(cell));
            List<Integer> ran = new CopyOnWriteArrayList<>();
            w.schedule(() -> ran.add(1)); // accepted, behind the claimed place
            Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
                    .until(() -> !cell.isScheduled());
            assertThat(ran).isEmpty();
            CompletableFuture<Void> closed = ("group".equals(closing) ? g.disposeGracefully() : s.disposeGracefully())
                    .toFuture();
            TimeUnit.MILLISECONDS.sleep(200); // the close polls every millisecond: it would have ended by now
            assertThat(closed).as("the close waits for the claimed place").isNotDone();
            stalled.write(new MailboxTask() {
                @Override
                public void run() {
                    ran.add(0);
                }

                @Override
                public void cancelPending() {
                }
            });
            cell.signal();
            closed.get(30, TimeUnit.SECONDS);
            assertThat(ran).containsExactly(0, 1);
        } finally {
            s.dispose();
        }
    }

    @SuppressWarnings("unchecked")
    private static MpscChunkedArrayQueue<MailboxTask> mailboxOf(WorkerCell cell) throws ReflectiveOperationException {
        Field f = WorkerCell.class.getDeclaredField("mailbox");
        f.setAccessible(true);
        return (MpscChunkedArrayQueue<MailboxTask>) f.get(cell);
    }
}
