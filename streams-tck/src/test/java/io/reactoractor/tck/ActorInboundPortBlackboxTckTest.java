package io.reactoractor.tck;

import io.reactoractor.actor.Actor;
import org.reactivestreams.Subscriber;

/** {@code actor.newSubscriber()} (an extra inbound port) as a Subscriber, blackbox. */
public class ActorInboundPortBlackboxTckTest extends AbstractActorBlackboxTck {

    public ActorInboundPortBlackboxTckTest() {
        super("tck-inbound-port-blackbox");
    }

    @Override
    Subscriber<Integer> inboundOf(Actor<Integer, Integer> actor) {
        return actor.newSubscriber();
    }
}
