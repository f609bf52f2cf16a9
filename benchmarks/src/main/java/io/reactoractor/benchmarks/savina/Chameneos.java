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
 * Chameneos (Savina "chameneos"): {@code C} chameneos repeatedly ask a meeting place (the mall) for a
 * meeting, until {@code N} meetings have taken place. The mall pairs two requests: it forwards the
 * first chameneo's request to the second, which computes the complement colour, tells the first
 * its new colour and asks for the next meeting; the first does the same when told. When the
 * meetings are used up, the mall answers every request with {@code EXIT} and each chameneo reports
 * its number of meetings. This measures a many-to-one hot spot (every message passes the mall).
 *
 * <p>Check: every meeting is counted by both participants, so the reported meetings must sum to
 * {@code 2 N}.
 */
public final class Chameneos implements SavinaWorkload {

    private enum Colour { BLUE, RED, YELLOW }

    private enum Signal { START, EXIT }

    private static Colour complement(Colour mine, Colour other) {
        if (mine == other) {
            return mine;
        }
        for (Colour c : Colour.values()) {
            if (c != mine && c != other) {
                return c;
            }
        }
        throw new AssertionError();
    }

    /** A chameneo's number of meetings, sent to the mall after {@code EXIT}. */
    private record Count(long meetings) {
    }

    /** The colour a chameneo had after a meeting, sent to its partner. */
    private record Change(Colour colour) {
    }

    private final int chameneos;
    private final int meetings;
    private final Duration timeout;

    /**
     * @param chameneos how many chameneos, at least 2
     * @param meetings  how many meetings, at least 1
     * @param timeout   the longest a run may take
     */
    public Chameneos(int chameneos, int meetings, Duration timeout) {
        if (chameneos < 2 || meetings < 1) {
            throw new IllegalArgumentException("need chameneos >= 2 and meetings >= 1 but got " + chameneos
                    + ", " + meetings);
        }
        this.chameneos = chameneos;
        this.meetings = meetings;
        this.timeout = timeout;
    }

    @Override
    public String name() {
        return "chameneos";
    }

    @Override
    public String sizes() {
        return String.format(Locale.ROOT, "C=%,d chameneos, N=%,d meetings", chameneos, meetings);
    }

    @Override
    public long messages() {
        // per meeting: 2 requests, the forwarded request, the colour change; then C exits, C counts, C starts
        return 4L * meetings + 4L * chameneos;
    }

    @Override
    public long expected() {
        return 2L * meetings;
    }

    // ------------------------------------------------------------------ reactor-actor

    /** A meeting request; the mall forwards the waiting one to its partner. */
    private record OursMeet(Colour colour, Actor<Object, Void> from) {
    }

    @Override
    public long runOurs(OursRun run) throws Exception {
        // the mall: at most one request per chameneo, or its count after EXIT, plus one in progress
        Actor<Object, Void> mall = run.actor(chameneos + 1, new OursMall(run, meetings, chameneos));
        List<Actor<Object, Void>> all = new ArrayList<>(chameneos);
        for (int i = 0; i < chameneos; i++) {
            OursChameneo c = new OursChameneo(mall, Colour.values()[i % 3]);
            // one answer (forwarded request, change or EXIT) at a time, plus one in progress
            c.self = run.actor(2, c);
            all.add(c.self);
        }
        for (Actor<Object, Void> c : all) {
            OursRun.tell(c, Signal.START);
        }
        return run.await(timeout);
    }

    private static final class OursMall implements Behaviour<Object, Void> {
        private final OursRun run;
        private final int chameneos;
        private int meetingsLeft;
        private OursMeet waiting;
        private long total;
        private int counts;

        OursMall(OursRun run, int meetings, int chameneos) {
            this.run = run;
            this.meetingsLeft = meetings;
            this.chameneos = chameneos;
        }

        @Override
        public boolean onMessage(Object message, ActorContext<Void> context) {
            if (message instanceof OursMeet m) {
                if (meetingsLeft == 0) {
                    OursRun.tell(m.from(), Signal.EXIT);
                } else if (waiting == null) {
                    waiting = m;
                } else {
                    meetingsLeft--;
                    OursRun.tell(m.from(), waiting);
                    waiting = null;
                }
            } else {
                total += ((Count) message).meetings();
                if (++counts == chameneos) {
                    run.complete(total);
                }
            }
            return true;
        }
    }

    private static final class OursChameneo implements Behaviour<Object, Void> {
        private final Actor<Object, Void> mall;
        private Colour colour;
        Actor<Object, Void> self;
        private long meetings;

        OursChameneo(Actor<Object, Void> mall, Colour colour) {
            this.mall = mall;
            this.colour = colour;
        }

        @Override
        public boolean onMessage(Object message, ActorContext<Void> context) {
            if (message instanceof OursMeet other) {
                colour = complement(colour, other.colour());
                meetings++;
                OursRun.tell(other.from(), new Change(colour));
                OursRun.tell(mall, new OursMeet(colour, self));
            } else if (message instanceof Change c) {
                colour = c.colour();
                meetings++;
                OursRun.tell(mall, new OursMeet(colour, self));
            } else if (message == Signal.START) {
                OursRun.tell(mall, new OursMeet(colour, self));
            } else {
                OursRun.tell(mall, new Count(meetings));
            }
            return true;
        }
    }

    // ------------------------------------------------------------------ Pekko

    /** A meeting request; the requester is the message's sender. */
    private record PekkoMeet(Colour colour) {
    }

    @Override
    public long runPekko(PekkoRun run) throws Exception {
        ActorRef mall = run.actorOf(Props.create(PekkoMall.class, () -> new PekkoMall(run, meetings, chameneos)));
        List<ActorRef> all = new ArrayList<>(chameneos);
        for (int i = 0; i < chameneos; i++) {
            Colour colour = Colour.values()[i % 3];
            all.add(run.actorOf(Props.create(PekkoChameneo.class, () -> new PekkoChameneo(mall, colour))));
        }
        for (ActorRef c : all) {
            c.tell(Signal.START, ActorRef.noSender());
        }
        return run.await(timeout);
    }

    private static final class PekkoMall extends AbstractActor {
        private final PekkoRun run;
        private final int chameneos;
        private int meetingsLeft;
        private PekkoMeet waiting;
        private ActorRef waitingRef;
        private long total;
        private int counts;

        PekkoMall(PekkoRun run, int meetings, int chameneos) {
            this.run = run;
            this.meetingsLeft = meetings;
            this.chameneos = chameneos;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(PekkoMeet.class, m -> {
                        if (meetingsLeft == 0) {
                            getSender().tell(Signal.EXIT, getSelf());
                        } else if (waiting == null) {
                            waiting = m;
                            waitingRef = getSender();
                        } else {
                            meetingsLeft--;
                            // forwarded with the waiting chameneo as sender, so the partner can answer it
                            getSender().tell(waiting, waitingRef);
                            waiting = null;
                            waitingRef = null;
                        }
                    })
                    .match(Count.class, c -> {
                        total += c.meetings();
                        if (++counts == chameneos) {
                            run.complete(total);
                        }
                    })
                    .build();
        }
    }

    private static final class PekkoChameneo extends AbstractActor {
        private final ActorRef mall;
        private Colour colour;
        private long meetings;

        PekkoChameneo(ActorRef mall, Colour colour) {
            this.mall = mall;
            this.colour = colour;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(PekkoMeet.class, other -> {
                        colour = complement(colour, other.colour());
                        meetings++;
                        getSender().tell(new Change(colour), getSelf());
                        mall.tell(new PekkoMeet(colour), getSelf());
                    })
                    .match(Change.class, c -> {
                        colour = c.colour();
                        meetings++;
                        mall.tell(new PekkoMeet(colour), getSelf());
                    })
                    .matchEquals(Signal.START, m -> mall.tell(new PekkoMeet(colour), getSelf()))
                    .matchEquals(Signal.EXIT, m -> mall.tell(new Count(meetings), getSelf()))
                    .build();
        }
    }
}
