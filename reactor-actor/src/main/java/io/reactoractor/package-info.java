/**
 * Fair actor scheduling for Project Reactor: the entry points.
 *
 * <ul>
 *   <li>{@link io.reactoractor.ActorScheduler}: a Reactor {@link reactor.core.scheduler.Scheduler} whose
 *       {@linkplain io.reactoractor.ActorScheduler#createWorker() workers} are actors (a mailbox run in
 *       turns of at most the quota). The next actor to run is the one that used the least weighted CPU
 *       time; newcomers and sleepers are placed so that they cannot monopolise the threads.</li>
 *   <li>{@link io.reactoractor.ActorGroup}: a tenant or consumer group sharing one weighted fair share
 *       however many actors it holds; also a {@code Scheduler}. Groups are created by
 *       {@link io.reactoractor.ActorScheduler#group(String, int)}.</li>
 *   <li>{@link io.reactoractor.ActorWorker}: a worker (an actor) with suspend and resume.</li>
 *   <li>{@link io.reactoractor.ActorSchedulers}: {@code Schedulers.setFactory(ActorSchedulers.factory())}
 *       makes Reactor's {@code parallel()} and {@code single()} fair actor schedulers.</li>
 *   <li>{@link io.reactoractor.SchedulerStats} and {@link io.reactoractor.ActorMetrics}: counters, and
 *       meters through Micrometer when it is on the class path
 *       ({@link io.reactoractor.micrometer}).</li>
 * </ul>
 * Typed actors that are Reactive Streams processors are in {@link io.reactoractor.actor}, the
 * long-polling pull consumer in {@link io.reactoractor.pull}, the ring buffer in
 * {@link io.reactoractor.ring}. Everything under {@code io.reactoractor.internal} is the engine: not API.
 */
package io.reactoractor;
