/**
 * Actors that are Reactive Streams processors, run fairly by an {@link io.reactoractor.ActorScheduler}.
 *
 * <ul>
 *   <li>{@link io.reactoractor.actor.Actor}: a typed actor, built with
 *       {@link io.reactoractor.actor.Actor#builder(reactor.core.scheduler.Scheduler)} and a
 *       {@link io.reactoractor.actor.Behaviour}. Its inbound demand is the free space of its bounded
 *       mailbox; with no downstream demand it suspends, and {@code request(n)} resumes it.
 *       {@code tell} reports a full mailbox, {@code send} waits for space: never a silent drop.</li>
 *   <li>{@link io.reactoractor.actor.ErrorPolicy}: stop, skip or retry with back-off when the behaviour
 *       throws.</li>
 *   <li>{@link io.reactoractor.actor.ActorOperators#publishOn}: Reactor's {@code publishOn} semantics with
 *       a drain that is a fair actor's turn: {@code flux.transform(ActorOperators.publishOn(scheduler))}.</li>
 * </ul>
 */
package io.reactoractor.actor;
