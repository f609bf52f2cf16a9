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
 * Fork-join throughput (Savina "fjthrput"): the benchmark thread (not an actor) sends {@code N}
 * messages to each of {@code A} actors, round-robin; each actor does a few nanoseconds of work per
 * message (folds the value into an order-dependent hash). When an actor has received its {@code N}
 * messages it reports its hash to a collector actor. This measures scheduling many busy actors:
 * all {@code A} mailboxes fill while the pool drains them.
 *
 * <p>Mailbox: all {@code N} messages can be waiting for an actor at once (Pekko's mailbox is
 * unbounded), so each actor's capacity is sized for {@code N}; the collector's for {@code A}.
 *
 * <p>Check: the sum of the actors' hashes must equal the one computed sequentially. The hash depends
 * on every value and on their order, so a lost, duplicated or reordered message changes it.
 */
public final class ForkJoinThroughput implements SavinaWorkload {

    /** An actor's hash, sent to the collector after its last message. */
    private record Done(long hash) {
    }

    private final int actors;
    private final int perActor;
    private final long expected;
    private final Duration timeout;

    /**
     * @param actors   how many actors, at least 1
     * @param perActor messages per actor, at least 1
     * @param timeout  the longest a run may take
     */
    public ForkJoinThroughput(int actors, int perActor, Duration timeout) {
        if (actors < 1 || perActor < 1 || (long) actors * perActor > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("need actors >= 1, perActor >= 1, actors * perActor < 2^31 but got "
                    + actors + ", " + perActor);
        }
        this.actors = actors;
        this.perActor = perActor;
        this.timeout = timeout;
        long sum = 0;
        for (int a = 0; a < actors; a++) {
            long h = 0;
            for (int i = 0; i < perActor; i++) {
                h = work(h, value(a, i));
            }
            sum += h;
        }
        this.expected = sum;
    }

    /** The value of the {@code i}-th message to actor {@code a} (distinct for every message). */
    private int value(int a, int i) {
        return a * perActor + i;
    }

    /** The per-message work: one round of a 64-bit mixer (the finalizer of SplitMix64) over hash and value. */
    static long work(long hash, int value) {
        long z = (hash ^ value) + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    @Override
    public String name() {
        return "fork-join";
    }

    @Override
    public String sizes() {
        return String.format(Locale.ROOT, "A=%,d actors x N=%,d messages", actors, perActor);
    }

    @Override
    public long messages() {
        return (long) actors * perActor + actors;
    }

    @Override
    public long expected() {
        return expected;
    }

    // ------------------------------------------------------------------ reactor-actor

    @Override
    public long runOurs(OursRun run) throws Exception {
        Actor<Done, Void> collector = run.actor(actors, new OursCollector(run, actors));
        List<Actor<Integer, Void>> workers = new ArrayList<>(actors);
        for (int a = 0; a < actors; a++) {
            workers.add(run.actor(perActor, new OursWorker(perActor, collector)));
        }
        for (int i = 0; i < perActor; i++) {
            for (int a = 0; a < actors; a++) {
                OursRun.tell(workers.get(a), (Integer) value(a, i));
            }
        }
        return run.await(timeout);
    }

    private static final class OursWorker implements Behaviour<Integer, Void> {
        private final int perActor;
        private final Actor<Done, Void> collector;
        private long hash;
        private int received;

        OursWorker(int perActor, Actor<Done, Void> collector) {
            this.perActor = perActor;
            this.collector = collector;
        }

        @Override
        public boolean onMessage(Integer value, ActorContext<Void> context) {
            hash = work(hash, value);
            if (++received == perActor) {
                OursRun.tell(collector, new Done(hash));
            }
            return true;
        }
    }

    private static final class OursCollector implements Behaviour<Done, Void> {
        private final OursRun run;
        private final int actors;
        private long sum;
        private int reports;

        OursCollector(OursRun run, int actors) {
            this.run = run;
            this.actors = actors;
        }

        @Override
        public boolean onMessage(Done done, ActorContext<Void> context) {
            sum += done.hash();
            if (++reports == actors) {
                run.complete(sum);
            }
            return true;
        }
    }

    // ------------------------------------------------------------------ Pekko

    @Override
    public long runPekko(PekkoRun run) throws Exception {
        ActorRef collector = run.actorOf(Props.create(PekkoCollector.class, () -> new PekkoCollector(run, actors)));
        List<ActorRef> workers = new ArrayList<>(actors);
        for (int a = 0; a < actors; a++) {
            workers.add(run.actorOf(Props.create(PekkoWorker.class, () -> new PekkoWorker(perActor, collector))));
        }
        for (int i = 0; i < perActor; i++) {
            for (int a = 0; a < actors; a++) {
                workers.get(a).tell((Integer) value(a, i), ActorRef.noSender());
            }
        }
        return run.await(timeout);
    }

    private static final class PekkoWorker extends AbstractActor {
        private final int perActor;
        private final ActorRef collector;
        private long hash;
        private int received;

        PekkoWorker(int perActor, ActorRef collector) {
            this.perActor = perActor;
            this.collector = collector;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Integer.class, value -> {
                        hash = work(hash, value);
                        if (++received == perActor) {
                            collector.tell(new Done(hash), getSelf());
                        }
                    })
                    .build();
        }
    }

    private static final class PekkoCollector extends AbstractActor {
        private final PekkoRun run;
        private final int actors;
        private long sum;
        private int reports;

        PekkoCollector(PekkoRun run, int actors) {
            this.run = run;
            this.actors = actors;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Done.class, done -> {
                        sum += done.hash();
                        if (++reports == actors) {
                            run.complete(sum);
                        }
                    })
                    .build();
        }
    }
}
