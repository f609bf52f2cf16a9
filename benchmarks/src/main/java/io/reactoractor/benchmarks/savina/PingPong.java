package io.reactoractor.benchmarks.savina;

import java.time.Duration;
import java.util.Locale;

import io.reactoractor.actor.Actor;
import io.reactoractor.actor.ActorContext;
import io.reactoractor.actor.Behaviour;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.Props;

/**
 * Ping-pong (Savina "pingpong"): two actors, {@code N} round trips. The ping actor sends
 * {@code PING}, the pong actor answers {@code PONG}, one message in flight at a time: this measures
 * the latency of one hand-off between two actors (each message wakes the other actor).
 *
 * <p>Check: when done, the ping actor sends its count of {@code PONG}s to the pong actor, which adds
 * its count of {@code PING}s: the result must be {@code 2 N}.
 */
public final class PingPong implements SavinaWorkload {

    private enum Signal { START, PING, PONG }

    /** The ping actor's count of pongs, sent to the pong actor at the end. */
    private record Stop(long pongs) {
    }

    private final int roundTrips;
    private final Duration timeout;

    /**
     * @param roundTrips round trips, at least 1
     * @param timeout    the longest a run may take
     */
    public PingPong(int roundTrips, Duration timeout) {
        if (roundTrips < 1) {
            throw new IllegalArgumentException("roundTrips must be >= 1 but was " + roundTrips);
        }
        this.roundTrips = roundTrips;
        this.timeout = timeout;
    }

    @Override
    public String name() {
        return "ping-pong";
    }

    @Override
    public String sizes() {
        return String.format(Locale.ROOT, "N=%,d round trips", roundTrips);
    }

    @Override
    public long messages() {
        return 2L * roundTrips;
    }

    @Override
    public long expected() {
        return 2L * roundTrips;
    }

    // ------------------------------------------------------------------ reactor-actor

    @Override
    public long runOurs(OursRun run) throws Exception {
        OursPing ping = new OursPing(roundTrips);
        OursPong pong = new OursPong(run);
        // at most one message waits for each actor, plus START / Stop
        Actor<Object, Void> pingActor = run.actor(2, ping);
        Actor<Object, Void> pongActor = run.actor(2, pong);
        ping.pong = pongActor;
        pong.ping = pingActor;
        OursRun.tell(pingActor, Signal.START);
        return run.await(timeout);
    }

    private static final class OursPing implements Behaviour<Object, Void> {
        private final int roundTrips;
        Actor<Object, Void> pong;
        private long pongs;

        OursPing(int roundTrips) {
            this.roundTrips = roundTrips;
        }

        @Override
        public boolean onMessage(Object message, ActorContext<Void> context) {
            if (message == Signal.PONG) {
                pongs++;
                if (pongs == roundTrips) {
                    OursRun.tell(pong, new Stop(pongs));
                    return true;
                }
            }
            OursRun.tell(pong, Signal.PING);
            return true;
        }
    }

    private static final class OursPong implements Behaviour<Object, Void> {
        private final OursRun run;
        Actor<Object, Void> ping;
        private long pings;

        OursPong(OursRun run) {
            this.run = run;
        }

        @Override
        public boolean onMessage(Object message, ActorContext<Void> context) {
            if (message instanceof Stop s) {
                run.complete(s.pongs() + pings);
                return true;
            }
            pings++;
            OursRun.tell(ping, Signal.PONG);
            return true;
        }
    }

    // ------------------------------------------------------------------ Pekko

    @Override
    public long runPekko(PekkoRun run) throws Exception {
        ActorRef pong = run.actorOf(Props.create(PekkoPong.class, () -> new PekkoPong(run)));
        ActorRef ping = run.actorOf(Props.create(PekkoPing.class, () -> new PekkoPing(roundTrips, pong)));
        ping.tell(Signal.START, ActorRef.noSender());
        return run.await(timeout);
    }

    private static final class PekkoPing extends AbstractActor {
        private final int roundTrips;
        private final ActorRef pong;
        private long pongs;

        PekkoPing(int roundTrips, ActorRef pong) {
            this.roundTrips = roundTrips;
            this.pong = pong;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .matchEquals(Signal.START, m -> pong.tell(Signal.PING, getSelf()))
                    .matchEquals(Signal.PONG, m -> {
                        pongs++;
                        if (pongs == roundTrips) {
                            pong.tell(new Stop(pongs), getSelf());
                        } else {
                            pong.tell(Signal.PING, getSelf());
                        }
                    })
                    .build();
        }
    }

    private static final class PekkoPong extends AbstractActor {
        private final PekkoRun run;
        private long pings;

        PekkoPong(PekkoRun run) {
            this.run = run;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .matchEquals(Signal.PING, m -> {
                        pings++;
                        getSender().tell(Signal.PONG, getSelf());
                    })
                    .match(Stop.class, s -> run.complete(s.pongs() + pings))
                    .build();
        }
    }
}
