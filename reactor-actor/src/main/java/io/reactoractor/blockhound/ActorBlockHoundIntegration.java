package io.reactoractor.blockhound;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Tells <a href="https://github.com/reactor/BlockHound">BlockHound</a> which of the library's own
 * waits are by design, so that {@code BlockHound.install()} keeps the scheduler's carriers alive
 * while still reporting every blocking call a <em>user task</em> makes on them.
 *
 * <p>Carrier threads implement Reactor's {@link reactor.core.scheduler.NonBlocking} marker, so Reactor's
 * own integration makes BlockHound check them. The library blocks in exactly these places, none of
 * which runs user code:
 * <ul>
 *   <li>{@code CarrierPool.spinForWork} and {@code CarrierPool.parkIdle}: a carrier with nothing to run spins
 *       ({@code Thread.onSpinWait}) and then parks until work arrives (only those two steps of the idle loop:
 *       the termination signals a graceful shutdown delivers from it run subscribers' code, and stay
 *       checked);</li>
 *   <li>the timer queue's lock ({@code TimerQueue}): arming or cancelling a delayed task from a carrier
 *       may wait briefly for the lock the timer thread holds while it pops due entries;</li>
 *   <li>the carrier's scheduler statistics ({@code StolenTime.SchedStat}, Linux): a carrier opens its own
 *       {@code /proc/thread-self/schedstat} when it starts, reads it at the end of a turn the host took
 *       part of (a procfs file: no disk, no wait) and closes it when it leaves;</li>
 *   <li>the pull consumer's hand-over to a {@code (subject, group)} actor that is retiring
 *       ({@code PullConsumer.retiring}, {@code ConsumerGroupActor.awaitingRetirementDecision}): a pull, an ack
 *       or a {@code Delivery}'s ack, from a carrier or an event loop, spins ({@code Thread.onSpinWait}) for
 *       the few instructions the actor needs to leave or stay;</li>
 *   <li>the end of a multi-producer ring ({@code RingBuffer.awaitPublished}): the last consumer's carrier
 *       spins for the few instructions a producer needs between claiming an event and publishing it, so the
 *       event goes to the discard hook rather than to nobody.</li>
 * </ul>
 * Everything else stays reported: {@code Thread.sleep}, socket I/O or {@code Mono.block()} inside a task
 * fail with BlockHound's {@code BlockingOperationError}, as on Reactor's {@code parallel()}.
 *
 * <p>Loaded by BlockHound through {@link java.util.ServiceLoader}
 * ({@code META-INF/services/reactor.blockhound.integration.BlockHoundIntegration}); nothing to
 * configure. BlockHound is an optional dependency: this class is the only one that needs it, and it
 * is only loaded when BlockHound is present.
 */
public final class ActorBlockHoundIntegration implements BlockHoundIntegration {

    private static final String CARRIER_POOL = "io.reactoractor.internal.scheduling.CarrierPool";
    private static final String TIMER_QUEUE = "io.reactoractor.internal.scheduling.TimerQueue";
    private static final String PULL_CONSUMER = "io.reactoractor.pull.PullConsumer";
    private static final String CONSUMER_GROUP_ACTOR = "io.reactoractor.pull.ConsumerGroupActor";
    private static final String SCHED_STAT = "io.reactoractor.internal.scheduling.StolenTime$SchedStat";
    private static final String RING_BUFFER = "io.reactoractor.ring.RingBuffer";

    /** Instantiated by {@link java.util.ServiceLoader}. */
    public ActorBlockHoundIntegration() {
    }

    @Override
    public void applyTo(BlockHound.Builder builder) {
        // the spin and the park only, not the whole idle loop: a graceful shutdown's termination signals run
        // from it (subscribers' onError / onComplete), and a blocking call there is the user's
        builder.allowBlockingCallsInside(CARRIER_POOL, "spinForWork");
        builder.allowBlockingCallsInside(CARRIER_POOL, "parkIdle");
        for (String method : new String[] {"openForCurrentThread", "getAsLong", "close"}) {
            builder.allowBlockingCallsInside(SCHED_STAT, method);
        }
        // a pull or ack spins (Thread.onSpinWait) for the few instructions a retiring pair needs to leave
        // the consumer's map; it may run on a carrier or an event loop
        builder.allowBlockingCallsInside(PULL_CONSUMER, "retiring");
        // an attached consumer's post (a consume() stream's pull, a Delivery's ack) spins the same way while
        // the pair's actor decides whether it retires
        builder.allowBlockingCallsInside(CONSUMER_GROUP_ACTOR, "awaitingRetirementDecision");
        // a multi-producer ring's end spins for the few instructions between a producer's claim and its store
        builder.allowBlockingCallsInside(RING_BUFFER, "awaitPublished");
        for (String method : new String[] {"schedule", "cancel", "removeNotAwaited", "owesNothing", "size",
                "shutdown"}) {
            builder.allowBlockingCallsInside(TIMER_QUEUE, method);
        }
    }
}
