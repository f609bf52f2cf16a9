package io.reactoractor.actor;

/**
 * What an {@link Actor} does with one message.
 *
 * <p>Called on the actor's turn, one message at a time, never concurrently. Results go downstream
 * with {@link ActorContext#emit(Object)}; the actor only calls the behaviour when downstream demand
 * is available, and buffers the few extra results one message may produce.
 *
 * @param <I> inbound message type
 * @param <O> outbound result type
 */
@FunctionalInterface
public interface Behaviour<I, O> {

    /**
     * Processes one message.
     *
     * @param message the message at the head of the mailbox (never {@code null})
     * @param context the actor's context: emit results, suspend/resume, timers, identity
     * @return {@code true} when the message is done and leaves the mailbox; {@code false} to keep it at
     *         the head and end the turn (QMQ's {@code return false}), typically after
     *         {@link ActorContext#suspend()} or {@link ActorContext#resumeAfter(java.time.Duration)}
     * @throws Exception handled by the actor's {@link ErrorPolicy}
     */
    boolean onMessage(I message, ActorContext<O> context) throws Exception;

    /**
     * A behaviour that emits each message unchanged.
     *
     * @param <T> the message type
     * @return the identity behaviour
     */
    static <T> Behaviour<T, T> identity() {
        return (message, context) -> {
            context.emit(message);
            return true;
        };
    }
}
