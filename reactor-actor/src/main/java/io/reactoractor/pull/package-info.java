/**
 * A long-polling pull consumer (QMQ / RocketMQ style) on fair actors: each (subject, consumer group)
 * pair is an actor that suspends while there is no data and resumes on new data or a poll's timeout.
 *
 * <ul>
 *   <li>{@link io.reactoractor.pull.PullConsumer}: {@code pull} (a long poll, or a pull-once with a zero
 *       timeout), {@code consume} (a demand-driven {@code Flux} of {@link io.reactoractor.pull.Delivery}),
 *       acknowledgements and redelivery after an ack timeout; bounded in groups, waiting polls and bytes
 *       per answer; idle pairs retire; {@code quiesce()} then {@code dispose()} for a graceful shutdown
 *       (no long poll waits once quiescing, everything else goes on until the disposal).</li>
 *   <li>Stores: {@link io.reactoractor.pull.MessageStore} (synchronous; the embedded
 *       {@link io.reactoractor.pull.InMemoryMessageStore}) and
 *       {@link io.reactoractor.pull.AsyncMessageStore} (a remote store such as Redis Streams, in the
 *       optional {@code reactor-actor-redis} module).</li>
 *   <li>{@link io.reactoractor.pull.ConsumerOptions}, {@link io.reactoractor.pull.AckMode},
 *       {@link io.reactoractor.pull.FailurePolicy}: how a consumer acknowledges and what a failed
 *       message does.</li>
 * </ul>
 */
package io.reactoractor.pull;
