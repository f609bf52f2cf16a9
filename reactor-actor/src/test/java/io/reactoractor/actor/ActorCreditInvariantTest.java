package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * "The total outstanding demand of all upstreams plus the messages waiting never exceeds the
 * capacity" (Actor's class doc), also while {@code tell()} takes credits without the credits' lock as
 * ports are attached. Nothing is consumed (no downstream), so at the end the demand granted plus the
 * messages told must fit the capacity. Failed before distribute() took its credits by CAS ("round 849:
 * demand 64 + told 1 > capacity 64").
 */
class ActorCreditInvariantTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-credits").threads(1).build();

    @AfterEach
    void tearDown() {
        assertTrue(ActorTestSupport.disposeBounded(scheduler));
    }

    /** An upstream that never sends and records the demand it was given. */
    static final class Silent implements Publisher<Integer> {
        final AtomicLong requested = new AtomicLong();

        @Override
        public void subscribe(Subscriber<? super Integer> s) {
            s.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                    requested.addAndGet(n);
                }

                @Override
                public void cancel() {
                }
            });
        }
    }

    @Test
    void demandPlusToldMessagesNeverExceedTheCapacityWhenTellRacesPortGrants() throws Exception {
        int capacity = 64;
        for (int round = 0; round < 2_000; round++) {
            Actor<Integer, Integer> actor = Actor.identity(scheduler, capacity);
            CountDownLatch ready = new CountDownLatch(1);
            AtomicBoolean go = new AtomicBoolean();
            AtomicLong told = new AtomicLong();
            Thread teller = new Thread(() -> {
                ready.countDown();
                while (!go.get()) {
                    Thread.onSpinWait();
                }
                for (int i = 0; i < 2_000; i++) {
                    if (actor.tell(i)) {
                        told.incrementAndGet();
                    }
                }
            });
            teller.start();
            ready.await();
            List<Silent> ports = new ArrayList<>();
            go.set(true);
            for (int p = 0; p < 6; p++) {
                Silent s = new Silent();
                ports.add(s);
                s.subscribe(actor.newSubscriber());
            }
            teller.join();
            long demand = ports.stream().mapToLong(s -> s.requested.get()).sum();
            assertTrue(demand + told.get() <= capacity, "round " + round + ": demand " + demand + " + told "
                    + told.get() + " > capacity " + capacity);
        }
    }
}
