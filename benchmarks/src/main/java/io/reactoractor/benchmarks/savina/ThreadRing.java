package io.reactoractor.benchmarks.savina;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.reactoractor.actor.Actor;
import io.reactoractor.actor.ActorContext;
import io.reactoractor.actor.Behaviour;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.Props;

/**
 * Thread ring (Savina "threadring"): {@code R} actors in a ring pass one token {@code N} times. The
 * token is the number of deliveries left; each actor counts the tokens it received and passes the
 * token on, decremented. One message in flight: like ping-pong, a chain of hand-offs, but through
 * {@code R} different actors (no actor stays hot in a cache or on a thread).
 *
 * <p>Check: the actor receiving the last token sends a tally round the ring; each actor adds its
 * count, and after {@code R} actors the tally must be {@code N}.
 */
public final class ThreadRing implements SavinaWorkload {

    /** Sums the actors' token counts on one trip round the ring. */
    private record Tally(long sum, int visited) {
    }

    private final int actors;
    private final int deliveries;
    private final Duration timeout;

    /**
     * @param actors     ring size, at least 2
     * @param deliveries token deliveries, at least 1
     * @param timeout    the longest a run may take
     */
    public ThreadRing(int actors, int deliveries, Duration timeout) {
        if (actors < 2 || deliveries < 1) {
            throw new IllegalArgumentException("need actors >= 2 and deliveries >= 1 but got " + actors + ", "
                    + deliveries);
        }
        this.actors = actors;
        this.deliveries = deliveries;
        this.timeout = timeout;
    }

    @Override
    public String name() {
        return "thread-ring";
    }

    @Override
    public String sizes() {
        return String.format(Locale.ROOT, "R=%,d actors, N=%,d token passes", actors, deliveries);
    }

    @Override
    public long messages() {
        return (long) deliveries + actors;
    }

    @Override
    public long expected() {
        return deliveries;
    }

    // ------------------------------------------------------------------ reactor-actor

    @Override
    public long runOurs(OursRun run) throws Exception {
        List<OursMember> members = new ArrayList<>(actors);
        List<Actor<Object, Void>> ring = new ArrayList<>(actors);
        for (int i = 0; i < actors; i++) {
            OursMember m = new OursMember(run, actors);
            members.add(m);
            // the token and the tally never wait for the same actor at once; 2 covers the overlap of
            // an actor still finishing a message when the next one arrives
            ring.add(run.actor(2, m));
        }
        for (int i = 0; i < actors; i++) {
            members.get(i).next = ring.get((i + 1) % actors);
        }
        OursRun.tell(ring.get(0), (Integer) deliveries);
        return run.await(timeout);
    }

    private static final class OursMember implements Behaviour<Object, Void> {
        private final OursRun run;
        private final int ringSize;
        Actor<Object, Void> next;
        private long received;

        OursMember(OursRun run, int ringSize) {
            this.run = run;
            this.ringSize = ringSize;
        }

        @Override
        public boolean onMessage(Object message, ActorContext<Void> context) {
            if (message instanceof Integer left) {
                received++;
                if (left > 1) {
                    OursRun.tell(next, (Integer) (left - 1));
                } else {
                    forward(new Tally(0, 0));
                }
            } else {
                forward((Tally) message);
            }
            return true;
        }

        private void forward(Tally t) {
            Tally mine = new Tally(t.sum() + received, t.visited() + 1);
            if (mine.visited() == ringSize) {
                run.complete(mine.sum());
            } else {
                OursRun.tell(next, mine);
            }
        }
    }

    // ------------------------------------------------------------------ Pekko

    @Override
    public long runPekko(PekkoRun run) throws Exception {
        // Pekko actors get their successor in a message: refs are immutable and created one by one
        List<ActorRef> ring = new ArrayList<>(actors);
        for (int i = 0; i < actors; i++) {
            ring.add(run.actorOf(Props.create(PekkoMember.class, () -> new PekkoMember(run, actors))));
        }
        for (int i = 0; i < actors; i++) {
            ring.get(i).tell(new Next(ring.get((i + 1) % actors)), ActorRef.noSender());
        }
        ring.get(0).tell((Integer) deliveries, ActorRef.noSender());
        return run.await(timeout);
    }

    /** Wires a Pekko ring member to its successor (sent before the token, so it arrives first). */
    private record Next(ActorRef next) {
    }

    private static final class PekkoMember extends AbstractActor {
        private final PekkoRun run;
        private final int ringSize;
        private ActorRef next;
        private long received;

        PekkoMember(PekkoRun run, int ringSize) {
            this.run = run;
            this.ringSize = ringSize;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Integer.class, left -> {
                        received++;
                        if (left > 1) {
                            next.tell((Integer) (left - 1), getSelf());
                        } else {
                            forward(new Tally(0, 0));
                        }
                    })
                    .match(Tally.class, this::forward)
                    .match(Next.class, n -> next = n.next())
                    .build();
        }

        private void forward(Tally t) {
            Tally mine = new Tally(t.sum() + received, t.visited() + 1);
            if (mine.visited() == ringSize) {
                run.complete(mine.sum());
            } else {
                next.tell(mine, getSelf());
            }
        }
    }
}
