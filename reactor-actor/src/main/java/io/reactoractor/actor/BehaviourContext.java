package io.reactoractor.actor;

import java.time.Duration;

import reactor.core.Disposable;
import reactor.util.context.ContextView;

/**
 * The {@link ActorContext} handed to the behaviour: used on the actor's turn only, except the timers
 * it arms (see {@link ActorTimers}).
 *
 * @param <O> outbound result type
 */
final class BehaviourContext<O> implements ActorContext<O> {

    private final ActorTurnLoop<?, O> loop;
    private final OutboundPort<O> out;

    BehaviourContext(ActorTurnLoop<?, O> loop, OutboundPort<O> out) {
        this.loop = loop;
        this.out = out;
    }

    @Override
    public void emit(O result) {
        out.emit(result);
    }

    @Override
    public ContextView contextView() {
        return out.discardContext(); // the subscriber's context (empty before one subscribed)
    }

    @Override
    public void suspend() {
        loop.suspendByUser();
    }

    @Override
    public boolean resume() {
        return loop.resumeUser();
    }

    @Override
    public Disposable resumeAfter(Duration delay) {
        return ActorTimers.resumeAfter(loop, delay);
    }

    @Override
    public Disposable schedule(Duration delay, Runnable task) {
        return ActorTimers.schedule(loop, delay, task);
    }

    @Override
    public String path() {
        return loop.path();
    }

    @Override
    public String group() {
        return loop.group.name();
    }

    @Override
    public int attempt() {
        return loop.attempt();
    }
}
