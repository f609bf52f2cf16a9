/**
 * A Disruptor-style ring buffer as a Reactive Streams multicast whose consumers are actors.
 *
 * <p>{@link io.reactoractor.ring.RingBuffer} is a pre-allocated power-of-two ring with one producer
 * sequence and one sequence per {@link io.reactoractor.ring.RingConsumer}; consumers form a
 * dependency graph and run as actors on an {@link io.reactoractor.ActorScheduler}, so an idle consumer
 * holds no thread. A ring with one producer can declare it
 * ({@link io.reactoractor.ring.RingBuffer.Builder#singleProducer()}) and publish without an atomic
 * operation per event. See {@link io.reactoractor.ring.RingBuffer} for the contracts.
 */
package io.reactoractor.ring;
