package io.reactoractor.tck;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.reactoractor.ActorScheduler;
import io.reactoractor.actor.Actor;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.testng.annotations.AfterClass;
import reactor.core.publisher.Flux;

/**
 * Blackbox verification of an actor's inbound side. Each subscriber is backed by a fresh identity actor
 * whose downstream requests everything, so the mailbox drains and the actor keeps requesting (it
 * requests by itself; {@code triggerRequest} needs to do nothing).
 */
abstract class AbstractActorBlackboxTck extends SubscriberBlackboxVerification<Integer> {

    private final ActorScheduler scheduler;
    private final ExecutorService helper = Executors.newFixedThreadPool(2);

    AbstractActorBlackboxTck(String schedulerName) {
        super(TckSupport.environment());
        this.scheduler = TckSupport.scheduler(schedulerName);
    }

    @AfterClass(alwaysRun = true)
    public void disposeScheduler() {
        TckSupport.disposeBounded(scheduler);
        helper.shutdownNow();
    }

    /** @return the subscriber under test, of the given actor */
    abstract Subscriber<Integer> inboundOf(Actor<Integer, Integer> actor);

    @Override
    public Subscriber<Integer> createSubscriber() {
        Actor<Integer, Integer> actor = Actor.identity(scheduler, 16);
        Flux.from(actor).subscribe(v -> { }, e -> { });
        return inboundOf(actor);
    }

    @Override
    public ExecutorService publisherExecutorService() {
        return helper;
    }

    @Override
    public Integer createElement(int element) {
        return element;
    }
}
