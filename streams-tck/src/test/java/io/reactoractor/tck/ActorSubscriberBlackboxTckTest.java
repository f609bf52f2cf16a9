package io.reactoractor.tck;

import io.reactoractor.actor.Actor;
import org.reactivestreams.Subscriber;

/** The {@link Actor} itself (its primary inbound port) as a Subscriber, blackbox. */
public class ActorSubscriberBlackboxTckTest extends AbstractActorBlackboxTck {

    public ActorSubscriberBlackboxTckTest() {
        super("tck-subscriber-blackbox");
    }

    @Override
    Subscriber<Integer> inboundOf(Actor<Integer, Integer> actor) {
        return actor;
    }
}
