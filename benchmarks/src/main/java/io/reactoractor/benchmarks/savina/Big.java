package io.reactoractor.benchmarks.savina;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import io.reactoractor.actor.Actor;
import io.reactoractor.actor.ActorContext;
import io.reactoractor.actor.Behaviour;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.Props;

/**
 * Big (Savina "big"): {@code W} actors each send {@code N} pings, one at a time, to randomly chosen
 * other actors, which answer each with a pong; an actor sends its next ping when the pong for the
 * previous one arrives, and when it has had {@code N} pongs it reports to a sink. This measures
 * many-to-many messaging among many mostly idle actors ({@code W} requests in flight at any time).
 * Targets come from a {@link SplittableRandom} per actor, seeded with its index, on both sides.
 *
 * <p>Check: the sink sums the actors' pong counts, which must be {@code W N}; a lost ping or pong
 * stalls its actor and the run fails by timeout.
 */
public final class Big implements SavinaWorkload {

    private enum Signal { START, PONG }

    /** An actor's pong count, sent to the sink after its last pong. */
    private record Done(long pongs) {
    }

    private final int actors;
    private final int pings;
    private final Duration timeout;

    /**
     * @param actors  how many actors, at least 2
     * @param pings   pings per actor, at least 1
     * @param timeout the longest a run may take
     */
    public Big(int actors, int pings, Duration timeout) {
        if (actors < 2 || pings < 1) {
            throw new IllegalArgumentException("need actors >= 2 and pings >= 1 but got " + actors + ", " + pings);
        }
        this.actors = actors;
        this.pings = pings;
        this.timeout = timeout;
    }

    @Override
    public String name() {
        return "big";
    }

    @Override
    public String sizes() {
        return String.format(Locale.ROOT, "W=%,d actors x N=%,d pings", actors, pings);
    }

    @Override
    public long messages() {
        return 2L * actors * pings + 2L * actors;
    }

    @Override
    public long expected() {
        return (long) actors * pings;
    }

    /** A random actor index other than {@code self}. */
    private static int otherThan(int self, int actors, SplittableRandom random) {
        int r = random.nextInt(actors - 1);
        return r >= self ? r + 1 : r;
    }

    // ------------------------------------------------------------------ reactor-actor

    /** A ping; carries the actor to answer. */
    private record OursPing(Actor<Object, Void> from) {
    }

    @Override
    public long runOurs(OursRun run) throws Exception {
        Actor<Done, Void> sink = run.actor(actors, new OursSink(run, actors));
        List<OursMember> members = new ArrayList<>(actors);
        List<Actor<Object, Void>> all = new ArrayList<>(actors);
        for (int i = 0; i < actors; i++) {
            OursMember m = new OursMember(i, pings, sink, all);
            members.add(m);
            // pings from every other actor (one each at most), its own pong or START, one in progress
            m.self = run.actor(actors + 1, m);
            all.add(m.self);
        }
        for (Actor<Object, Void> a : all) {
            OursRun.tell(a, Signal.START);
        }
        return run.await(timeout);
    }

    private static final class OursMember implements Behaviour<Object, Void> {
        private final int index;
        private final int pings;
        private final Actor<Done, Void> sink;
        private final List<Actor<Object, Void>> all;
        private final SplittableRandom random;
        Actor<Object, Void> self;
        private long pongs;

        OursMember(int index, int pings, Actor<Done, Void> sink, List<Actor<Object, Void>> all) {
            this.index = index;
            this.pings = pings;
            this.sink = sink;
            this.all = all;
            this.random = new SplittableRandom(index);
        }

        @Override
        public boolean onMessage(Object message, ActorContext<Void> context) {
            if (message instanceof OursPing p) {
                OursRun.tell(p.from(), Signal.PONG);
            } else if (message == Signal.PONG) {
                if (++pongs == pings) {
                    OursRun.tell(sink, new Done(pongs));
                } else {
                    ping();
                }
            } else {
                ping();
            }
            return true;
        }

        private void ping() {
            OursRun.tell(all.get(otherThan(index, all.size(), random)), new OursPing(self));
        }
    }

    private static final class OursSink implements Behaviour<Done, Void> {
        private final OursRun run;
        private final int actors;
        private long total;
        private int reports;

        OursSink(OursRun run, int actors) {
            this.run = run;
            this.actors = actors;
        }

        @Override
        public boolean onMessage(Done done, ActorContext<Void> context) {
            total += done.pongs();
            if (++reports == actors) {
                run.complete(total);
            }
            return true;
        }
    }

    // ------------------------------------------------------------------ Pekko

    /** A ping; the actor to answer is the message's sender. */
    private enum PekkoPing { PING }

    /** Hands every Pekko member the list of all members (sent before {@code START}). */
    private record Members(List<ActorRef> all) {
    }

    @Override
    public long runPekko(PekkoRun run) throws Exception {
        ActorRef sink = run.actorOf(Props.create(PekkoSink.class, () -> new PekkoSink(run, actors)));
        List<ActorRef> all = new ArrayList<>(actors);
        for (int i = 0; i < actors; i++) {
            int index = i;
            all.add(run.actorOf(Props.create(PekkoMember.class, () -> new PekkoMember(index, pings, sink))));
        }
        Members members = new Members(List.copyOf(all));
        for (ActorRef a : all) {
            a.tell(members, ActorRef.noSender());
        }
        for (ActorRef a : all) {
            a.tell(Signal.START, ActorRef.noSender());
        }
        return run.await(timeout);
    }

    private static final class PekkoMember extends AbstractActor {
        private final int index;
        private final int pings;
        private final ActorRef sink;
        private final SplittableRandom random;
        private List<ActorRef> all;
        private long pongs;

        PekkoMember(int index, int pings, ActorRef sink) {
            this.index = index;
            this.pings = pings;
            this.sink = sink;
            this.random = new SplittableRandom(index);
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .matchEquals(PekkoPing.PING, p -> getSender().tell(Signal.PONG, getSelf()))
                    .matchEquals(Signal.PONG, p -> {
                        if (++pongs == pings) {
                            sink.tell(new Done(pongs), getSelf());
                        } else {
                            ping();
                        }
                    })
                    .matchEquals(Signal.START, s -> ping())
                    .match(Members.class, m -> all = m.all())
                    .build();
        }

        private void ping() {
            all.get(otherThan(index, all.size(), random)).tell(PekkoPing.PING, getSelf());
        }
    }

    private static final class PekkoSink extends AbstractActor {
        private final PekkoRun run;
        private final int actors;
        private long total;
        private int reports;

        PekkoSink(PekkoRun run, int actors) {
            this.run = run;
            this.actors = actors;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Done.class, done -> {
                        total += done.pongs();
                        if (++reports == actors) {
                            run.complete(total);
                        }
                    })
                    .build();
        }
    }
}
