package io.reactoractor.micrometer;

import io.micrometer.core.instrument.MeterRegistry;
import io.reactoractor.ActorMetrics;

/**
 * Exports the figures of {@code ActorScheduler}s and of the {@code PullConsumer}s built on them to a
 * Micrometer {@link MeterRegistry}:
 * {@code ActorScheduler.builder().metrics(MicrometerActorMetrics.of(registry))}.
 *
 * <table>
 *   <caption>Scheduler meters (tag {@code scheduler}; {@code group} too for the {@code group.*} meters and
 *   the scheduling delay)</caption>
 *   <tr><th>name</th><th>type</th><th>base unit</th><th>meaning</th></tr>
 *   <tr><td>reactor.actor.completed</td><td>function counter</td><td>tasks</td><td>tasks run, those that threw included</td></tr>
 *   <tr><td>reactor.actor.active</td><td>gauge</td><td>threads</td><td>threads running a task</td></tr>
 *   <tr><td>reactor.actor.queued</td><td>gauge</td><td>tasks</td><td>tasks and messages waiting in mailboxes</td></tr>
 *   <tr><td>reactor.actor.pool.size</td><td>gauge</td><td>threads</td><td>live threads, permanent and compensating</td></tr>
 *   <tr><td>reactor.actor.pool.core</td><td>gauge</td><td>threads</td><td>permanent threads</td></tr>
 *   <tr><td>reactor.actor.pool.max</td><td>gauge</td><td>threads</td><td>permanent plus most compensating threads</td></tr>
 *   <tr><td>reactor.actor.threads.compensating</td><td>gauge</td><td>threads</td><td>compensating threads running</td></tr>
 *   <tr><td>reactor.actor.ready</td><td>gauge</td><td>actors</td><td>actors waiting in the run queue</td></tr>
 *   <tr><td>reactor.actor.actors</td><td>gauge</td><td>actors</td><td>live actors</td></tr>
 *   <tr><td>reactor.actor.actors.suspended</td><td>gauge</td><td>actors</td><td>suspended live actors</td></tr>
 *   <tr><td>reactor.actor.failed</td><td>function counter</td><td>tasks</td><td>tasks that threw</td></tr>
 *   <tr><td>reactor.actor.rejected</td><td>function counter</td><td>tasks</td><td>tasks rejected after a dispose</td></tr>
 *   <tr><td>reactor.actor.quota.overruns</td><td>function counter</td><td>tasks</td><td>tasks that alone ran past the quota</td></tr>
 *   <tr><td>reactor.actor.hogs</td><td>function counter</td><td>tasks</td><td>tasks detected running far past the quota</td></tr>
 *   <tr><td>reactor.actor.mailbox.full</td><td>function counter</td><td>messages</td><td>messages refused by a full mailbox</td></tr>
 *   <tr><td>reactor.actor.internal.errors</td><td>function counter</td><td>errors</td><td>errors caught by the scheduler's threads</td></tr>
 *   <tr><td>reactor.actor.group.queued</td><td>gauge</td><td>tasks</td><td>tasks and messages waiting in the group's mailboxes</td></tr>
 *   <tr><td>reactor.actor.group.cpu</td><td>function counter</td><td>seconds</td><td>run time of the group's turns (wall-clock time on the carriers, as charged by the fair order)</td></tr>
 *   <tr><td>reactor.actor.group.turns</td><td>function counter</td><td>turns</td><td>turns of the group's actors</td></tr>
 *   <tr><td>reactor.actor.group.actors</td><td>gauge</td><td>actors</td><td>live actors of the group</td></tr>
 *   <tr><td>reactor.actor.group.actors.suspended</td><td>gauge</td><td>actors</td><td>suspended actors of the group</td></tr>
 *   <tr><td>reactor.actor.scheduling.delay</td><td>timer</td><td>the registry's</td><td>ready → running, per turn</td></tr>
 * </table>
 *
 * <table>
 *   <caption>Pull consumer meters (tags {@code scheduler}, {@code subject}, {@code group})</caption>
 *   <tr><th>name</th><th>type</th><th>base unit</th><th>meaning</th></tr>
 *   <tr><td>reactor.actor.pull.queue.time</td><td>timer</td><td>the registry's</td><td>pull submitted → handled by the pair's actor</td></tr>
 *   <tr><td>reactor.actor.pull.requests</td><td>function counter</td><td>requests</td><td>pulls received</td></tr>
 *   <tr><td>reactor.actor.pull.timeouts</td><td>function counter</td><td>requests</td><td>pulls answered empty at their timeout</td></tr>
 *   <tr><td>reactor.actor.pull.expired</td><td>function counter</td><td>requests</td><td>pulls that had expired before their turn</td></tr>
 *   <tr><td>reactor.actor.pull.suspends</td><td>function counter</td><td>events</td><td>suspensions for lack of data</td></tr>
 *   <tr><td>reactor.actor.pull.resumes</td><td>function counter</td><td>events</td><td>resumptions (append, timer, command)</td></tr>
 *   <tr><td>reactor.actor.pull.delivered</td><td>function counter</td><td>messages</td><td>messages delivered, redeliveries included</td></tr>
 *   <tr><td>reactor.actor.pull.committed</td><td>function counter</td><td>messages</td><td>messages settled (acknowledged, skipped, dead-lettered)</td></tr>
 *   <tr><td>reactor.actor.pull.redelivered</td><td>function counter</td><td>messages</td><td>redeliveries</td></tr>
 *   <tr><td>reactor.actor.pull.dead.lettered</td><td>function counter</td><td>messages</td><td>messages moved to the dead-letter subject</td></tr>
 *   <tr><td>reactor.actor.pull.lag</td><td>gauge</td><td>messages</td><td>end offset − committed offset</td></tr>
 *   <tr><td>reactor.actor.pull.waiting</td><td>gauge</td><td>requests</td><td>long polls waiting</td></tr>
 *   <tr><td>reactor.actor.pull.in.flight</td><td>gauge</td><td>messages</td><td>delivered, not yet acknowledged</td></tr>
 * </table>
 *
 * <p>Ring buffers ({@code io.reactoractor.ring.RingBuffer}) built on such a scheduler register their
 * meters ({@code reactor.actor.ring.*}: remaining capacity, cursor, and per consumer lag, processed,
 * skipped and retried events; tags {@code scheduler}, {@code group}, {@code ring}, {@code consumer})
 * when they start and remove them when they terminate; {@link MicrometerRingMetrics} has the table.
 *
 * <p><b>Cardinality.</b> The {@code group} tag takes one value per <em>live</em> scheduler group and the
 * pull meters one {@code (subject, group)} per live pair: a disposed or retired group's meters (a group retires
 * when idle, as {@code ActorScheduler.group(..)} says), and a retired pair's (idle past
 * {@code PullConsumer.Builder.idleTimeout}), are removed. Group names are the
 * application's; live pairs are capped by {@code PullConsumer.Builder.maxGroups} (default 10,000, so
 * up to 130,000 pull meters plus 6 per consumer group). Where names come from clients, cap the tag
 * values in the registry, e.g.
 * {@code registry.config().meterFilter(MeterFilter.maximumAllowableTags("reactor.actor", "group", 200, MeterFilter.deny()))}
 * (and the same for {@code "subject"}); that filter counts every value it has seen, removed meters
 * included.
 *
 * <p>The handle returned by {@link #of(MeterRegistry)} can be given to several schedulers; each registers
 * its own meters (tag {@code scheduler}). Meters are told apart by their name and tags, so give the
 * schedulers of one registry distinct names: the first owner of an id keeps it, and a later one with the
 * same name and tags (a second scheduler named alike, a second pull consumer serving the same pair) gets
 * none of those meters, with a warning, and never removes the first one's.
 *
 * <p>Meters hold no strong reference to the scheduler: function meters read it on scrape, and the
 * scheduler removes its meters when it terminates.
 */
public final class MicrometerActorMetrics {

    private MicrometerActorMetrics() {
    }

    /**
     * Creates a binding to a registry.
     *
     * @param registry where meters go
     * @return the binding, for {@code ActorScheduler.Builder.metrics(ActorMetrics)}
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public static ActorMetrics of(MeterRegistry registry) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null");
        }
        return new MicrometerBinding(registry);
    }
}
