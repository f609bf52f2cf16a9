package io.reactoractor.pull;

import static io.reactoractor.pull.PullConsumerTest.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.reactoractor.ActorScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code (subject, group)} actor's suspend / resume handshake under races: producers append in bursts with pauses
 * (so the actor keeps suspending and being resumed by appends, timers and new pulls), while pollers
 * long-poll with short random timeouts. Every pull must be answered (a lost wake-up shows up as a
 * pull that never returns), and every message must be delivered exactly once to the group.
 */
class PullConsumerStressTest {

    @Test
    @Timeout(120)
    void noLostWakeUpsNoLossNoDuplicates() throws Exception {
        for (int round = 0; round < 8; round++) {
            round(round);
        }
    }

    private void round(int round) throws Exception {
        ActorScheduler scheduler = ActorScheduler.builder().name("pull-stress-" + round).threads(2).build();
        PullConsumer c = PullConsumer.builder(scheduler).build();
        int total = 60_000;
        int pollers = 8;
        BitSet seen = new BitSet(total);
        AtomicLong received = new AtomicLong();
        AtomicLong pulls = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < 2; p++) {
            Thread t = new Thread(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                for (int i = 0; i < total / 2; i++) {
                    c.append("s", b("m"));
                    if (rnd.nextInt(500) == 0) {
                        LockSupport.parkNanos(rnd.nextInt(2_000_000)); // let the group suspend
                    }
                }
            }, "stress-producer-" + p);
            threads.add(t);
        }
        for (int p = 0; p < pollers; p++) {
            Thread t = new Thread(() -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                try {
                    while (received.get() < total && failure.get() == null) {
                        int max = 1 + rnd.nextInt(16);
                        Duration timeout = Duration.ofMillis(rnd.nextInt(20));
                        PullResult r;
                        try {
                            r = c.pull("s", "g", max, timeout, true).block(Duration.ofSeconds(10));
                        } catch (IllegalStateException e) {
                            throw new AssertionError("a pull with a " + timeout.toMillis()
                                    + " ms timeout was not answered in 10 s: " + c.debugState("s", "g")
                                    + " " + c.stats("s", "g") + " timers=" + io.reactoractor.internal.Internals.engine(scheduler.defaultGroup())
                                    .pendingTimers(), e);
                        }
                        if (r == null) {
                            throw new AssertionError("a pull completed empty-handed without a result");
                        }
                        pulls.incrementAndGet();
                        synchronized (seen) {
                            for (Message m : r.messages()) {
                                int o = (int) m.offset();
                                if (seen.get(o)) {
                                    throw new AssertionError("duplicate delivery of offset " + o);
                                }
                                seen.set(o);
                            }
                        }
                        received.addAndGet(r.messages().size());
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e); // includes block() timing out: a pull never answered
                }
            }, "stress-poller-" + p);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(100_000);
        }
        try {
            assertNull(failure.get(), () -> String.valueOf(failure.get()));
            assertEquals(total, received.get());
            assertEquals(total, seen.cardinality());
            GroupStats st = c.stats("s", "g");
            assertTrue(st.suspends() > 0 && st.resumes() > 0, "the race was exercised: " + st);
            assertEquals(total, st.committedOffset());
            // the count is updated at the end of the turn that answered the last pull
            PullConsumerTest.await(() -> c.stats("s", "g").waitingPulls() == 0, "no pull left waiting");
        } finally {
            c.dispose();
            scheduler.dispose();
        }
    }
}
