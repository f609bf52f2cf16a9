package io.reactoractor.ring;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.reactoractor.ActorScheduler;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress tests of the single-producer ring's publication protocol ({@code RingBuffer.Builder.singleProducer()}):
 * the claims of the "Single-producer mode" memory-ordering table in {@link RingBuffer}'s Javadoc.
 * The rings are never started (events wait in them; a registered consumer at -1 gates them), so
 * no actor runs: the consumer side is played by an actor calling the ring's consumer-side reads.
 */
public final class RingSingleProducerJCStress {

    private RingSingleProducerJCStress() {
    }

    /** Only builds rings (never started: its carriers stay idle). */
    private static final ActorScheduler SCHEDULER = ActorScheduler.builder().name("jcstress-ring").threads(1).build();

    static RingBuffer<Box> newRing() {
        RingBuffer<Box> ring = RingBuffer.<Box>builder(SCHEDULER).size(4).singleProducer().build();
        ring.consumer("c", (e, s, eob) -> null);
        return ring;
    }

    /** An event with a plain field, written by the producer before it publishes the event. */
    static final class Box {
        int value;
    }

    @JCStressTest
    @Description("the producer stores an event (plain) and publishes it with one CAS of the cursor; a consumer "
            + "reads the cursor (acquire) and then the slot (plain): if the cursor covers the event, the "
            + "consumer sees the event and its fields")
    @Outcome(id = "0, -1", expect = ACCEPTABLE, desc = "not published yet")
    @Outcome(id = "1, 42", expect = ACCEPTABLE, desc = "published and fully visible")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "published, but the event's field is not visible")
    @Outcome(id = "1, -2", expect = FORBIDDEN, desc = "published, but the slot is still empty")
    @State
    public static class PublicationIsVisible {
        final RingBuffer<Box> ring = newRing();

        @Actor
        public void producer() {
            Box b = new Box();
            b.value = 42;
            ring.tryPublish(b);
        }

        @Actor
        public void consumer(II_Result r) {
            long h = ring.highestPublished(0, 0);
            if (h < 0) {
                r.r1 = 0;
                r.r2 = -1;
                return;
            }
            r.r1 = 1;
            Box b = ring.event(0);
            r.r2 = b == null ? -2 : b.value;
        }
    }

    @JCStressTest
    @Description("complete() from another thread races the producer's tryPublish: the final count is exactly "
            + "the events published, so a true return is always delivered and a false one never")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "published, then closed: the final count includes it")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "closed first: refused and not counted")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "accepted but left out of the final count: a silent loss")
    @Outcome(id = "0, 1", expect = FORBIDDEN, desc = "refused but counted: consumers would deliver it")
    @State
    public static class PublishVersusClose {
        final RingBuffer<Box> ring = newRing();

        @Actor
        public void producer(II_Result r) {
            r.r1 = ring.tryPublish(new Box()) ? 1 : 0;
        }

        @Actor
        public void closer() {
            ring.complete();
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r2 = (int) ring.finalCount();
        }
    }

    @JCStressTest
    @Description("two events published by two calls of the producer; a consumer reading the cursor once sees "
            + "a gap-free prefix, each event visible")
    @Outcome(id = "-1, 0", expect = ACCEPTABLE, desc = "nothing published yet")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "the first event")
    @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "both events")
    @Outcome(id = "0, 0", expect = FORBIDDEN, desc = "cursor covers the first event, its slot is not visible")
    @Outcome(id = "1, 0", expect = FORBIDDEN, desc = "cursor covers both, neither slot visible")
    @Outcome(id = "1, 1", expect = FORBIDDEN, desc = "cursor covers both, one slot not visible")
    @State
    public static class BatchPrefixIsVisible {
        final RingBuffer<Box> ring = newRing();

        @Actor
        public void producer() {
            Box a = new Box();
            a.value = 1;
            ring.tryPublish(a);
            Box b = new Box();
            b.value = 1;
            ring.tryPublish(b);
        }

        @Actor
        public void consumer(II_Result r) {
            long h = ring.highestPublished(0, 3);
            int visible = 0;
            for (long s = 0; s <= h; s++) {
                Box b = ring.event(s);
                if (b != null && b.value == 1) {
                    visible++;
                }
            }
            r.r1 = (int) h;
            r.r2 = visible;
        }
    }
}
