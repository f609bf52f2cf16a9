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
 * Counting (Savina "count"): a producer actor sends the numbers {@code 1..N} to a counter actor in
 * one burst (all from one message), then asks for the total; the counter replies with it. This
 * measures one-way mailbox throughput: one producer, one consumer, the mailbox filling up.
 *
 * <p>Mailbox: the whole burst can be waiting for the counter at once (Pekko's mailbox is
 * unbounded), so the counter's capacity is sized for {@code N + 1} messages; a smaller one would
 * need flow control that the Pekko side does not have.
 *
 * <p>Check: the total must be {@code N (N + 1) / 2} (a sum, not a count: a lost or duplicated
 * number changes it).
 */
public final class Counting implements SavinaWorkload {

    private enum Signal { START, RETRIEVE }

    /** The counter's reply to {@code RETRIEVE}. */
    private record Total(long sum) {
    }

    private final int numbers;
    private final Duration timeout;

    /**
     * @param numbers how many numbers the producer sends, at least 1
     * @param timeout the longest a run may take
     */
    public Counting(int numbers, Duration timeout) {
        if (numbers < 1) {
            throw new IllegalArgumentException("numbers must be >= 1 but was " + numbers);
        }
        this.numbers = numbers;
        this.timeout = timeout;
    }

    @Override
    public String name() {
        return "counting";
    }

    @Override
    public String sizes() {
        return String.format(Locale.ROOT, "N=%,d numbers", numbers);
    }

    @Override
    public long messages() {
        return numbers + 3L;
    }

    @Override
    public long expected() {
        return (long) numbers * (numbers + 1) / 2;
    }

    // ------------------------------------------------------------------ reactor-actor

    @Override
    public long runOurs(OursRun run) throws Exception {
        OursProducer producer = new OursProducer(run, numbers);
        OursCounter counter = new OursCounter();
        Actor<Object, Void> producerActor = run.actor(2, producer);
        Actor<Object, Void> counterActor = run.actor(numbers + 1, counter);
        producer.counter = counterActor;
        counter.producer = producerActor;
        OursRun.tell(producerActor, Signal.START);
        return run.await(timeout);
    }

    private static final class OursProducer implements Behaviour<Object, Void> {
        private final OursRun run;
        private final int numbers;
        Actor<Object, Void> counter;

        OursProducer(OursRun run, int numbers) {
            this.run = run;
            this.numbers = numbers;
        }

        @Override
        public boolean onMessage(Object message, ActorContext<Void> context) {
            if (message == Signal.START) {
                for (int i = 1; i <= numbers; i++) {
                    OursRun.tell(counter, (Integer) i);
                }
                OursRun.tell(counter, Signal.RETRIEVE);
            } else {
                run.complete(((Total) message).sum());
            }
            return true;
        }
    }

    private static final class OursCounter implements Behaviour<Object, Void> {
        Actor<Object, Void> producer;
        private long sum;

        @Override
        public boolean onMessage(Object message, ActorContext<Void> context) {
            if (message instanceof Integer n) {
                sum += n;
            } else {
                OursRun.tell(producer, new Total(sum));
            }
            return true;
        }
    }

    // ------------------------------------------------------------------ Pekko

    @Override
    public long runPekko(PekkoRun run) throws Exception {
        ActorRef counter = run.actorOf(Props.create(PekkoCounter.class, PekkoCounter::new));
        ActorRef producer = run.actorOf(Props.create(PekkoProducer.class,
                () -> new PekkoProducer(run, numbers, counter)));
        producer.tell(Signal.START, ActorRef.noSender());
        return run.await(timeout);
    }

    private static final class PekkoProducer extends AbstractActor {
        private final PekkoRun run;
        private final int numbers;
        private final ActorRef counter;

        PekkoProducer(PekkoRun run, int numbers, ActorRef counter) {
            this.run = run;
            this.numbers = numbers;
            this.counter = counter;
        }

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .matchEquals(Signal.START, m -> {
                        for (int i = 1; i <= numbers; i++) {
                            counter.tell((Integer) i, getSelf());
                        }
                        counter.tell(Signal.RETRIEVE, getSelf());
                    })
                    .match(Total.class, t -> run.complete(t.sum()))
                    .build();
        }
    }

    private static final class PekkoCounter extends AbstractActor {
        private long sum;

        @Override
        public Receive createReceive() {
            return receiveBuilder()
                    .match(Integer.class, n -> sum += n)
                    .matchEquals(Signal.RETRIEVE, m -> getSender().tell(new Total(sum), getSelf()))
                    .build();
        }
    }
}
