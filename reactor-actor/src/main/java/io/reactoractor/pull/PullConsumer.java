package io.reactoractor.pull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;

import io.reactoractor.ActorGroup;
import io.reactoractor.ActorScheduler;
import io.reactoractor.internal.Internals;
import io.reactoractor.internal.metrics.MetricsBinding;
import io.reactoractor.internal.metrics.PullMetrics;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;

/**
 * A long-polling pull consumer on an {@link ActorScheduler}, after QMQ's {@code PullMessageWorker}
 * and the RocketMQ/MetaQ pull consumers.
 *
 * <h2>Model</h2>
 * Messages are appended to <em>subjects</em> (topics) in a {@link MessageStore} (in memory by default).
 * A <em>consumer group</em> reads a subject once: the group's consumers share its messages without
 * duplicates, and every group gets every message. Each {@code (subject, group)} is <b>one actor</b> on
 * the scheduler, in the scheduler group {@code cg.<group>}: a consumer group with 100 pulling
 * consumers gets the same CPU share as one with 2, and groups cannot slow each other down.
 *
 * <h2>Long polling</h2>
 * {@link #pull(String, String, int, Duration)} answers as soon as messages are available, or with an
 * empty {@link PullResult.Status#TIMED_OUT} result at the timeout. While no message is available the
 * group's actor is suspended; an append to the subject resumes it at once (one resume per group, not
 * per message), a timer resumes it at the earliest timeout and is cancelled when data arrives. Waiting
 * pulls hold no thread: 1,000 waiting long polls are 1,000 small objects in the actor.
 * A zero timeout is a pull-once ({@link PullResult.Status#EMPTY} when nothing is there).
 *
 * <h2>At-least-once</h2>
 * A group's committed offset moves only over acknowledged messages. Pulled messages are acknowledged
 * with {@link #ack} (or at once with {@code ackOnDelivery}); one not acknowledged within the
 * {@linkplain Builder#ackTimeout ack timeout} is redelivered. {@link #consume} gives a {@link Flux}
 * driven by demand that acknowledges after {@code onNext} or explicitly ({@link AckMode}); a cancelled
 * consumer's unacknowledged messages are redelivered. {@link #nack} / {@link Delivery#nack} apply a
 * {@link FailurePolicy}: skip, retry forever, or retry then move to the dead-letter subject. Each delivery
 * tells its attempt ({@link PullResult#attempts()}, {@link Delivery#attempt()}): 1 the first time, 2 for
 * the first redelivery, ...
 *
 * <p>An acknowledgement names offsets, not deliveries: an ack that comes after its ack timeout, from a
 * holder whose message was meanwhile delivered again, still settles the message (the newer holder's ack is
 * then ignored as already settled). Processing is at-least-once either way, and the message was handled by
 * the late holder. A nack by offset alone ({@link #nack(String, String, String, long)}) likewise applies to
 * the message's current delivery. A nack that names its delivery ({@link Delivery#nack}, or
 * {@link #nack(String, String, String, long, int)} with the attempt of the answer) is ignored instead while a
 * newer delivery of the message is in flight: a stale failure must not take the message from its current
 * holder.
 *
 * <p>A delivered message not yet settled is redelivered from the group's own copy: with a
 * {@link MessageStore}, retention dropping it from the store meanwhile does not lose it (retention only
 * passes over messages the group had not read, counted in {@link PullResult#skipped()}). An
 * {@link AsyncMessageStore} is asked first ({@link AsyncMessageStore#renewPending}), and a message it no
 * longer reports as pending is not delivered again (the Redis store reports neither a message another
 * instance acknowledged nor one trimmed from the stream while it was pending).
 *
 * <h2>Bounded by construction</h2>
 * <ul>
 *   <li>An answer holds at most {@code maxMessages} messages and {@linkplain Builder#maxBytesPerPull
 *       maxBytesPerPull} payload bytes (default 4 MiB); its first message is always included, however
 *       large, so a pull always makes progress.</li>
 *   <li>A {@code (subject, group)} actor with no waiting pull, nothing in flight, no attached
 *       {@link #consume consumer} and no call for the {@linkplain Builder#idleTimeout idle timeout}
 *       (default 5 min) is removed with its meters; its committed offset stays in the store, where
 *       the next call for the pair starts. The scheduler group {@code cg.<group>} goes with the
 *       group's last actor.</li>
 *   <li>At most {@linkplain Builder#maxGroups maxGroups} actors (default 10,000) live at once; a call
 *       that would create one more fails with {@link GroupLimitExceededException} (nothing is
 *       created, nothing already running is affected).</li>
 *   <li>{@link #stats(String, String)} and {@link #stats(int)} only read: they never create an
 *       actor.</li>
 * </ul>
 *
 * <h2>Epochs</h2>
 * Offsets identify messages only within one {@linkplain MessageStore#epoch() store epoch}: the
 * in-memory store starts again at offset 0 after a restart. Every {@link PullResult} carries the
 * epoch it was delivered in; {@link #ack(String, String, String, Collection)} and
 * {@link #nack(String, String, String, long)} take it back and fail with
 * {@link StaleDeliveryException} when it is not the store's current one, so an acknowledgement from
 * before a restart can never settle a message delivered after it. A consumer that gets that error
 * pulls again (its messages are redelivered, or were lost with the in-memory store's contents).
 * Messages the store dropped (retention) before a group read them are counted in
 * {@link PullResult#skipped()} of the answer that passed over them.
 *
 * <h2>Names and bad input</h2>
 * Subject names: 1-128, group names 1-120 characters out of letters, digits, {@code . _ -}. Subjects
 * are created on first use (append or pull), so a consumer may start before any producer. Invalid
 * names, {@code maxMessages < 1} or a negative timeout throw {@link IllegalArgumentException} at the
 * call.
 *
 * <h2>Lazy calls, and disposal</h2>
 * The {@code Mono} and {@code Flux} results are lazy, as Reactor's are: nothing is appended, pulled,
 * acknowledged or nacked until the result is subscribed, and each subscription makes the call again (an
 * {@code ack(..)} nobody subscribes to acknowledges nothing). After {@link #dispose()}, a call signals
 * {@link java.util.concurrent.RejectedExecutionException} (refused, nothing done, as a disposed Reactor
 * scheduler refuses a task); what was under way at the disposal ends with
 * {@link IllegalStateException}: the pulls waiting then, the live {@link #consume} streams, and the
 * acknowledgements and nacks not handled yet. With an {@link AsyncMessageStore}, an acknowledgement already
 * sent to the store when its answer is cut off this way (here, or by the scheduler's {@code dispose()} below)
 * may still have been recorded: its failure means its outcome is unknown, not that the message comes again
 * (at least once holds either way; a graceful close of the scheduler waits for the answers instead).
 * While the scheduler (or a pair's scheduling group {@code cg.<group>}) closes gracefully, a new pull is
 * refused the same way ({@code RejectedExecutionException}; a {@link #consume} stream then ends with it, its
 * unacknowledged messages released), as the closing scheduler refuses new tasks, so consumers that keep
 * pulling cannot hold the shutdown open; appends, acknowledgements, nacks and the pulls already waiting go
 * on while something else holds the shutdown open. With an {@link AsyncMessageStore} (Redis), the calls a
 * pair made to the store and the acknowledgements it has still to send hold the shutdown open until the
 * store answered them (acknowledgements handed in before the close reach the store, not dropped half done; one
 * whose call failed is told so at once, as {@link #ack} says, and is still sent again until the store records
 * it; a store that keeps failing or never answers holds the close until then, so bound it with a timeout,
 * then {@code dispose()}, as for any graceful disposal). A waiting long poll does not hold it open itself (its
 * timeout may be minutes away): once the scheduler's other work is done, the graceful disposal ends and the
 * pulls still waiting then fail with {@code RejectedExecutionException} (below), typically well before their
 * timeout and without a message. For a shutdown that answers the waiting long polls instead (with what is
 * there, often nothing, as a timeout would), {@link #quiesce()} first. When the
 * scheduler (or {@code cg.<group>}) terminates under this consumer (its {@code dispose()}, or the end of a
 * graceful one while a long poll still waits), what was under way at that moment ends with
 * {@code RejectedExecutionException} too (the pulls waiting, the {@link #consume} streams, acknowledgements
 * waiting for the store), as Reactor's operators signal on a disposed scheduler: one exception per subscriber,
 * made through {@code Operators.onRejectedExecution} with its {@code Context} (so its
 * {@code reactor.onRejectedExecution.local} hook, or else {@code Hooks.onOperatorError}, sees it). The consumer itself is not
 * disposed ({@link #isDisposed()} stays {@code false}) and the pair's next call builds a new actor, or is refused.
 *
 * <pre>{@code
 * PullConsumer consumer = PullConsumer.builder(scheduler).build();      // embedded store
 * consumer.append("orders", bytes);
 * consumer.pull("orders", "billing", 100, Duration.ofSeconds(30))       // long poll
 *         .flatMap(r -> process(r.messages()).then(consumer.ack("orders", "billing", offsets(r))));
 * consumer.consume("orders", "shipping", ConsumerOptions.builder().ackMode(AckMode.EXPLICIT).build())
 *         .concatMap(d -> ship(d.message()).doOnSuccess(x -> d.ack()).doOnError(d::nack).onErrorComplete())
 *         .subscribe();                                                  // at least once, failures nacked
 * }</pre>
 */
public final class PullConsumer implements Disposable {

    /**
     * Prefix of the scheduler groups that hold the consumer groups' actors (reserved: a consumer
     * disposes {@code cg.<group>} when its last actor retires).
     */
    public static final String SCHEDULING_GROUP_PREFIX = "cg.";

    /** Default of {@link Builder#maxBytesPerPull}: 4 MiB. */
    public static final long DEFAULT_MAX_BYTES_PER_PULL = 4L << 20;

    private final ActorScheduler scheduler;
    /** The synchronous store, or {@code null} when an asynchronous one was given. */
    private final MessageStore store;
    /** The asynchronous store given, or an adapter of {@link #store}. */
    private final AsyncMessageStore asyncStore;
    private final long ackTimeoutNanos;
    private final int maxWaitingPulls;
    private final int maxMessagesPerPull;
    private final long maxBytesPerPull;
    private final long idleTimeoutNanos;
    private final int maxGroups;
    private final FailurePolicy failurePolicy;
    /** What every actor of this consumer is given (one object, shared). */
    private final ConsumerGroupSettings settings;
    private final Map<String, ConsumerGroupActor> actors = new ConcurrentHashMap<>();
    private final Map<String, List<ConsumerGroupActor>> bySubject = new ConcurrentHashMap<>();
    /** Live actors per consumer group name, to dispose a scheduler group with its last actor. */
    private final Map<String, Integer> actorsPerGroup = new java.util.HashMap<>();
    private final java.util.concurrent.atomic.LongAdder retired = new java.util.concurrent.atomic.LongAdder();
    private final Disposable appendListener;
    /** The pairs' meters' removal at the scheduler's termination (see the constructor); left by {@link #dispose()}. */
    private final Disposable metricsCloser;
    private volatile boolean disposed;
    /** Set once by {@link #quiesce()}: long polls are answered at once, consumer streams complete. */
    private volatile boolean quiescing;
    /**
     * The {@link #consume} subscriptions still live (each leaves when cancelled or errored), so that
     * {@link #dispose()} reaches those with no pull in flight. Bounded by the application's own
     * subscriptions.
     */
    private final java.util.Set<ConsumerSubscription> liveConsumers = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private PullConsumer(Builder b) {
        this.scheduler = b.scheduler;
        this.store = b.asyncStore != null ? null : b.store != null ? b.store : InMemoryMessageStore.create();
        this.asyncStore = b.asyncStore != null ? b.asyncStore : AsyncMessageStore.of(store);
        this.ackTimeoutNanos = saturatedNanos(b.ackTimeout);
        this.maxWaitingPulls = b.maxWaitingPulls;
        this.maxMessagesPerPull = b.maxMessagesPerPull;
        this.maxBytesPerPull = b.maxBytesPerPull;
        this.idleTimeoutNanos = b.idleTimeout.isZero() ? 0 : Math.min(saturatedNanos(b.idleTimeout), Long.MAX_VALUE / 4);
        this.maxGroups = b.maxGroups;
        this.failurePolicy = b.failurePolicy;
        // a binding that does not know pull consumers (or none at all) leaves them unmetered
        PullMetrics metrics = scheduler.metrics() instanceof MetricsBinding binding
                ? binding.pullMetrics(scheduler.name())
                : PullMetrics.NONE;
        this.settings = new ConsumerGroupSettings(store, asyncStore, ackTimeoutNanos, maxWaitingPulls,
                maxBytesPerPull, idleTimeoutNanos, metrics, this::retired, () -> quiescing, this::actorTerminated,
                () -> disposed);
        Disposable registration = asyncStore.addAppendListener(new MessageStore.AppendListener() {
            @Override
            public void appended(String subject, long endOffset) {
                PullConsumer.this.appended(subject, endOffset);
            }

            @Override
            public void appendsMissed() {
                PullConsumer.this.appendsMissed();
            }
        });
        if (registration == null) {
            // a bad store, told here and by name rather than by a NullPointerException in dispose()
            throw new IllegalArgumentException("store: addAppendListener returned null, not the Disposable that "
                    + "unregisters the listener");
        }
        this.appendListener = registration;
        // the pairs' meters go inside dispose() (this consumer's or the scheduler's), not when their actors end a
        // running turn: a consumer or scheduler rebuilt right after finds the ids free
        this.metricsCloser = metrics == PullMetrics.NONE ? Disposables.disposed()
                : Internals.engine(scheduler.defaultGroup()).onMetricsClose(metrics::close);
    }

    /**
     * @param scheduler the scheduler whose threads run the {@code (subject, group)} actors
     * @return a builder
     * @throws IllegalArgumentException if {@code scheduler} is {@code null}
     */
    public static Builder builder(ActorScheduler scheduler) {
        if (scheduler == null) {
            throw new IllegalArgumentException("scheduler must not be null");
        }
        return new Builder(scheduler);
    }

    // ================================================================== producing

    /**
     * Appends a message (creating the subject if needed); waiting long polls of every group are woken.
     *
     * @param subject the subject
     * @param payload the bytes (not copied)
     * @return the message's offset
     * @throws IllegalArgumentException   on an invalid subject or a {@code null} payload
     * @throws IllegalStateException      if the store is asynchronous (use {@link #appendAsync})
     * @throws RejectedExecutionException if this consumer is disposed (as a pull is refused then; the store
     *                                    itself, shared or not, can still be written directly)
     */
    public long append(String subject, byte[] payload) {
        Names.subject(subject);
        if (payload == null) {
            throw new IllegalArgumentException("payload must not be null");
        }
        if (store == null) {
            throw new IllegalStateException("the store is asynchronous (" + asyncStore + "): use appendAsync");
        }
        if (disposed) {
            throw refusedWhenDisposed();
        }
        return store.append(subject, payload);
    }

    /**
     * Appends a message with any store; waiting long polls of every group (of every process sharing
     * the store) are woken. The offset is emitted once the store holds the message; a store failure
     * is a {@link MessageStoreException} (the message may or may not have been stored); a store that
     * refused a new subject for want of room signals its {@link SubjectLimitExceededException} (nothing
     * was stored). Once this consumer is disposed the {@code Mono} signals a
     * {@link RejectedExecutionException} (nothing stored), as a pull does.
     *
     * @param subject the subject
     * @param payload the bytes (not copied)
     * @return the message's offset
     * @throws IllegalArgumentException on an invalid subject or a {@code null} payload
     */
    public Mono<Long> appendAsync(String subject, byte[] payload) {
        Names.subject(subject);
        if (payload == null) {
            throw new IllegalArgumentException("payload must not be null");
        }
        if (store != null) {
            return Mono.fromCallable(() -> {
                if (disposed) {
                    throw refusedWhenDisposed();
                }
                return store.append(subject, payload);
            });
        }
        return Mono.defer(() -> disposed ? Mono.<Long>error(refusedWhenDisposed())
                        : asyncStore.append(subject, payload))
                .onErrorMap(e -> !(e instanceof IllegalArgumentException) && !(e instanceof MessageStoreException)
                                && !(e instanceof SubjectLimitExceededException) && !(e instanceof RejectedExecutionException),
                        e -> new MessageStoreException("append to " + subject + " failed", e));
    }

    // ================================================================== pulling

    /**
     * Long-polls a batch; the messages must be acknowledged with {@link #ack} within the ack timeout,
     * or they are redelivered.
     *
     * @param subject     the subject
     * @param group       the consumer group
     * @param maxMessages at most this many (1 to {@link Builder#maxMessagesPerPull})
     * @param timeout     how long to wait for a message ({@code 0} = pull once, never negative)
     * @return the answer, on the {@code (subject, group)} actor's thread; a {@link GroupLimitExceededException} if the
     *         pair has no actor and {@link Builder#maxGroups} are live
     */
    public Mono<PullResult> pull(String subject, String group, int maxMessages, Duration timeout) {
        return pull(subject, group, maxMessages, timeout, false);
    }

    /**
     * Long-polls a batch.
     *
     * @param subject       the subject
     * @param group         the consumer group
     * @param maxMessages   at most this many (1 to {@link Builder#maxMessagesPerPull})
     * @param timeout       how long to wait for a message ({@code 0} = pull once, never negative)
     * @param ackOnDelivery {@code true}: the messages count as acknowledged when handed out (at most
     *                      once if the answer is lost); {@code false}: acknowledge them with {@link #ack}
     * @return the answer, on the {@code (subject, group)} actor's thread
     */
    public Mono<PullResult> pull(String subject, String group, int maxMessages, Duration timeout,
            boolean ackOnDelivery) {
        Names.subject(subject);
        Names.group(group);
        if (maxMessages < 1 || maxMessages > maxMessagesPerPull) {
            throw new IllegalArgumentException("maxMessages must be between 1 and " + maxMessagesPerPull
                    + " but was " + maxMessages);
        }
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be >= 0 but was " + timeout);
        }
        long timeoutNanos = saturatedNanos(timeout);
        return Mono.defer(() -> {
            // the attempt number of each message of this subscription's answer: a release names the delivery
            // it gives back (a later delivery of the same message, after an ack timeout, is not this one's);
            // written before sink.success, whose hand-off publishes it to the thread that discards the answer
            int[][] answered = new int[1][];
            return Mono.<PullResult>create(sink -> {
                ConsumerGroupCommand.Pull p = new ConsumerGroupCommand.Pull(maxMessages, timeoutNanos, 0L,
                        ackOnDelivery, new ConsumerGroupCommand.PullCallback() {
                            @Override
                            public void answer(PullResult result, int[] attempts) {
                                answered[0] = attempts;
                                sink.success(result);
                            }

                            @Override
                            public void fail(Throwable error) {
                                sink.error(error);
                            }

                            @Override
                            public reactor.util.context.ContextView context() {
                                return sink.contextView();
                            }
                        });
                sink.onCancel(() -> {
                    p.cancelled = true;
                    // a turn drops it from the waiting pulls now (their count, retirement), not at its deadline
                    ConsumerGroupActor a = actors.get(key(subject, group));
                    if (a != null) {
                        a.wake();
                    }
                });
                submit(subject, group, p);
            }).doOnDiscard(PullResult.class, r -> releaseUndelivered(subject, group, r, answered[0], ackOnDelivery));
        });
    }

    /**
     * An answer that never reached the subscriber: the {@code Mono} was cancelled while the group's actor
     * was answering it, or before the subscriber requested it ({@code Mono.create} then hands it to the
     * discard hook, which is this, and nothing downstream's). Its messages are released for redelivery
     * now instead of waiting out their ack timeout (those of an {@code ackOnDelivery} pull were settled when
     * handed out: at most once, as documented). An answer that reached the subscriber just as it cancelled,
     * which the subscriber then drops ({@code Hooks.onNextDropped}, as Reactor's lambda subscriber does),
     * is not seen here: its messages wait out their ack timeout (redelivered later, not lost).
     */
    private void releaseUndelivered(String subject, String group, PullResult r, int[] attempts,
            boolean ackOnDelivery) {
        if (ackOnDelivery || r.messages().isEmpty() || attempts == null) {
            return; // attempts == null: not an answer of this subscription's (nothing else reaches this hook)
        }
        long[] offsets = new long[r.messages().size()];
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = r.messages().get(i).offset();
        }
        try {
            submit(subject, group, new ConsumerGroupCommand.Release(0L, offsets, attempts));
        } catch (RejectedExecutionException e) {
            // the consumer was disposed: nothing is redelivered any more, so there is nothing to release
        }
    }

    /**
     * Pull-once: whatever is available now, without waiting; with an {@link AsyncMessageStore}, a fetch
     * already under way (which may bring what it asks for) is waited for at most 100 ms.
     *
     * @param subject     the subject
     * @param group       the consumer group
     * @param maxMessages at most this many
     * @return the answer ({@link PullResult.Status#EMPTY} when nothing is available)
     */
    public Mono<PullResult> pullOnce(String subject, String group, int maxMessages) {
        return pull(subject, group, maxMessages, Duration.ZERO, false);
    }

    /**
     * Acknowledges delivered messages of a group, within this process: the offsets are trusted to
     * come from answers of the store's current epoch. An acknowledgement that crosses a process
     * boundary (HTTP, a queue) must use {@link #ack(String, String, String, Collection)}. Unknown or
     * already settled offsets are ignored.
     *
     * <p>A failed acknowledgement is not a nack: when an {@link AsyncMessageStore} (Redis) fails to record it,
     * the result fails with {@link MessageStoreException}, and the consumer keeps the acknowledgement and sends
     * it again, with a back-off, until the store records it; the messages are then settled and not delivered
     * again (unless their ack timeout passed first: at least once).
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param offsets the offsets of the messages handled
     * @return the group's committed offset after the ack
     */
    public Mono<Long> ack(String subject, String group, Collection<Long> offsets) {
        Names.subject(subject);
        Names.group(group);
        long[] os = offsets(offsets);
        return Mono.create(sink -> submit(subject, group, new ConsumerGroupCommand.Ack(os, sink)));
    }

    /**
     * Acknowledges delivered messages of a group, checking that they were delivered in the store's
     * current epoch ({@link PullResult#epoch()}). Unknown or already settled offsets are ignored.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param epoch   the epoch of the answer that delivered the messages
     * @param offsets the offsets of the messages handled
     * @return the group's committed offset after the ack; a {@link StaleDeliveryException} if
     *         {@code epoch} is not the store's current epoch (nothing is settled then); a
     *         {@link MessageStoreException} if the store failed to record it (kept and sent again, as for
     *         {@link #ack(String, String, Collection)})
     */
    public Mono<Long> ack(String subject, String group, String epoch, Collection<Long> offsets) {
        Names.subject(subject);
        Names.group(group);
        requireEpoch(epoch);
        long[] os = offsets(offsets);
        return Mono.defer(() -> {
            StaleDeliveryException stale = checkEpoch(subject, group, epoch);
            return stale != null ? Mono.error(stale) : Mono.create(sink ->
                    submit(subject, group, new ConsumerGroupCommand.Ack(os, sink)));
        });
    }

    private static long[] offsets(Collection<Long> offsets) {
        if (offsets == null) {
            throw new IllegalArgumentException("offsets must not be null");
        }
        long[] os = new long[offsets.size()];
        int i = 0;
        for (Long o : offsets) {
            if (o == null || o < 0) {
                throw new IllegalArgumentException("offsets must be >= 0 and not null but contained " + o);
            }
            os[i++] = o;
        }
        return os;
    }

    private static void requireEpoch(String epoch) {
        if (epoch == null || epoch.isEmpty()) {
            throw new IllegalArgumentException("epoch must not be null or empty");
        }
    }

    @reactor.util.annotation.Nullable
    private StaleDeliveryException checkEpoch(String subject, String group, String epoch) {
        String current = epoch();
        return current.equals(epoch) ? null : new StaleDeliveryException(subject, group, epoch, current);
    }

    /**
     * Reports a delivered message as failed: the consumer's {@link Builder#failurePolicy failure policy}
     * decides (skip, redeliver, or dead-letter after the last attempt).
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param offset  the failed message's offset
     * @return the group's committed offset afterwards; when the policy dead-letters the message, once the copy
     *         is made: the store's error if it failed (the message then stays pending and is redelivered after
     *         the ack timeout), a {@link MessageStoreException} with an {@link AsyncMessageStore}; when it skips the
     *         message with an {@code AsyncMessageStore}, once the store recorded the acknowledgement, as {@link #ack}
     *         answers (a failure is a {@link MessageStoreException}, and the acknowledgement is sent again)
     */
    public Mono<Long> nack(String subject, String group, long offset) {
        Names.subject(subject);
        Names.group(group);
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0 but was " + offset);
        }
        return nack(subject, group, offset, 0);
    }

    private Mono<Long> nack(String subject, String group, long offset, int attempt) {
        return Mono.create(sink -> submit(subject, group,
                new ConsumerGroupCommand.Nack(offset, failurePolicy, attempt, sink)));
    }

    /**
     * As {@link #nack(String, String, long)}, checking that the message was delivered in the store's
     * current epoch.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param epoch   the epoch of the answer that delivered the message
     * @param offset  the failed message's offset
     * @return the group's committed offset afterwards; a {@link StaleDeliveryException} if
     *         {@code epoch} is not the store's current epoch (nothing is settled then)
     */
    public Mono<Long> nack(String subject, String group, String epoch, long offset) {
        return checkedNack(subject, group, epoch, offset, 0);
    }

    /**
     * As {@link #nack(String, String, String, long)}, for one delivery: the one with this attempt number
     * ({@link PullResult#attempt(int)}). If the message was delivered again since (this delivery's ack timeout
     * passed) and that newer delivery is still in flight, the nack is ignored, as a {@link Delivery#nack} is: a
     * stale holder's failure neither takes the message from its current holder nor dead-letters it under it.
     * Otherwise it counts as the nack of the message's current delivery.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param epoch   the epoch of the answer that delivered the message
     * @param offset  the failed message's offset
     * @param attempt the failed delivery's attempt number, at least 1
     * @return the group's committed offset afterwards; a {@link StaleDeliveryException} if
     *         {@code epoch} is not the store's current epoch (nothing is settled then)
     * @throws IllegalArgumentException if a name is invalid, {@code epoch} is null or empty, {@code offset} is
     *                                  negative or {@code attempt} is below 1
     */
    public Mono<Long> nack(String subject, String group, String epoch, long offset, int attempt) {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be >= 1 but was " + attempt);
        }
        return checkedNack(subject, group, epoch, offset, attempt);
    }

    /** A nack checked against the store's epoch; {@code attempt} 0: the message's current delivery. */
    private Mono<Long> checkedNack(String subject, String group, String epoch, long offset, int attempt) {
        Names.subject(subject);
        Names.group(group);
        requireEpoch(epoch);
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0 but was " + offset);
        }
        return Mono.defer(() -> {
            StaleDeliveryException stale = checkEpoch(subject, group, epoch);
            return stale != null ? Mono.error(stale) : nack(subject, group, offset, attempt);
        });
    }

    // ================================================================== reactive consumer

    /**
     * A consumer of the group with {@link ConsumerOptions#DEFAULTS} (ack after {@code onNext}).
     *
     * @param subject the subject
     * @param group   the consumer group
     * @return an infinite {@link Flux} of deliveries, driven by demand
     */
    public Flux<Delivery> consume(String subject, String group) {
        return consume(subject, group, ConsumerOptions.DEFAULTS);
    }

    /**
     * A consumer of the group: {@code request(n)} becomes pulls of up to {@code min(n, batchSize)}
     * messages, one at a time; no demand, no pull. A {@code batchSize} above the consumer's
     * {@link Builder#maxMessagesPerPull maxMessagesPerPull} is capped at it, as every pull is. Each subscription is a distinct consumer of the
     * group; cancelling it redelivers its unacknowledged messages. {@code onNext} runs on the group
     * actor's thread: move heavy work elsewhere ({@code publishOn}, or {@link AckMode#EXPLICIT} with
     * asynchronous handling). {@code blockFirst()} and the other {@code block} calls fail fast on a carrier, as
     * Reactor's do on any {@code NonBlocking} thread, and their subscription then takes no message (Reactor
     * leaves it subscribed, and it would otherwise take one and, under {@code AFTER_ON_NEXT}, acknowledge it).
     * From a thread allowed to block they work, also when the subscription itself runs on a
     * {@code NonBlocking} thread ({@code subscribeOn(..)}, {@code delaySubscription(..)} before the block).
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param options ack mode, failure policy, batch size, poll timeout
     * @return an infinite {@link Flux} of deliveries; it errors with {@link IllegalStateException} if the
     *     consumer is disposed while it is live ({@link java.util.concurrent.RejectedExecutionException} if it
     *     was disposed before the subscription, or its scheduler closes gracefully or is disposed: see the
     *     class doc), and
     *     with a
     *     {@link MessageStoreException} when an {@link AsyncMessageStore} fails a pull (e.g. Redis unreachable
     *     for longer than a command timeout); then its unacknowledged messages are redelivered, and a new
     *     subscription goes on: {@code retryWhen(Retry.backoff(..).filter(MessageStoreException.class::isInstance))}
     */
    public Flux<Delivery> consume(String subject, String group, ConsumerOptions options) {
        Names.subject(subject);
        Names.group(group);
        if (options == null) {
            throw new IllegalArgumentException("options must not be null");
        }
        FailurePolicy policy = options.failurePolicy() != null ? options.failurePolicy() : failurePolicy;
        ConsumerOptions capped = options.batchSize() <= maxMessagesPerPull ? options
                : new ConsumerOptions(options.ackMode(), options.failurePolicy(), maxMessagesPerPull, options.pollTimeout());
        return ConsumeFlux.assemble(new ConsumeFlux(subject, group) {
            @Override
            public void subscribe(CoreSubscriber<? super Delivery> actual) {
                Objects.requireNonNull(actual, "subscriber");
                if (quiescing && !disposed) {
                    Operators.complete(actual); // no wait once quiescing: nothing to deliver, nothing attached
                    return;
                }
                if (blockedOnACarrier(actual)) {
                    // Reactor's block*() subscribes, then throws on a NonBlocking thread and never cancels: its
                    // orphaned subscriber would take a message and, cancelling inside onNext as take(1) does,
                    // acknowledge it under AFTER_ON_NEXT (committed, never handled, never redelivered)
                    Operators.error(actual, new IllegalStateException("consume(" + subject + ", " + group
                            + ") blocked on in a NonBlocking thread (" + Thread.currentThread().getName()
                            + "): nothing is delivered"));
                    return;
                }
                ConsumerGroupActor actor;
                try {
                    do {
                        actor = actor(subject, group);
                    } while (!actor.tryAttach() && retiring());
                } catch (RuntimeException e) {
                    Operators.error(actual, e);
                    return;
                }
                ConsumerSubscription sub = new ConsumerSubscription(actor, actual, capped, policy, liveConsumers::remove);
                liveConsumers.add(sub);
                actual.onSubscribe(sub);
                if (disposed) {
                    // disposed while subscribing: dispose() may have walked the registry before the add
                    sub.consumerDisposed(disposedError());
                } else if (quiescing) {
                    // quiesced while subscribing: quiesce() may have walked the registry before the add
                    sub.consumerQuiesced();
                }
                sub.subscribed(); // a walk that found it during onSubscribe left its signal for now (rule 1.9)
            }
        });
    }

    /**
     * Whether {@code s} is one of Reactor's blocking subscribers ({@code blockFirst}, {@code blockLast},
     * {@code next().block()}, {@code toIterable}, ...) subscribing on a {@code NonBlocking} thread (a carrier)
     * from inside the blocking call itself: Reactor throws to the blocked caller right after the subscription
     * and leaves it behind. A subscription that reaches a {@code NonBlocking} thread through an asynchronous
     * boundary ({@code subscribeOn}, {@code delaySubscription}) is not one: the caller blocks on its own thread,
     * which may well be allowed to block (only when that caller is itself a carrier does Reactor throw, and then
     * its subscriber is left behind, as with any other source).
     */
    private static boolean blockedOnACarrier(CoreSubscriber<?> s) {
        if (!Schedulers.isInNonBlockingThread()) {
            return false;
        }
        // the blocking subscriber is at the end of the chain: after the operators applied to consume()'s Flux
        boolean blocking = isReactorBlockingSubscriber(s)
                || Scannable.from(s).actuals().anyMatch(PullConsumer::isReactorBlockingSubscriber);
        // rare (a block*() whose subscription runs on a carrier): worth a look at this thread's stack
        return blocking && StackWalker.getInstance().walk(frames -> frames.anyMatch(PullConsumer::isBlockingCall));
    }

    private static boolean isReactorBlockingSubscriber(Object s) {
        return s.getClass().getName().startsWith("reactor.core.publisher.Blocking");
    }

    /** A frame of Reactor's blocking calls, which subscribe on the calling thread and then wait on it. */
    private static boolean isBlockingCall(StackWalker.StackFrame f) {
        String c = f.getClassName();
        return ((c.equals("reactor.core.publisher.Flux") || c.equals("reactor.core.publisher.Mono"))
                && f.getMethodName().startsWith("block"))
                || c.startsWith("reactor.core.publisher.BlockingIterable"); // toIterable(), toStream()
    }

    /**
     * {@link #consume}'s {@code Flux}: it goes through Reactor's assembly step as {@code Flux.create}'s does
     * ({@code Hooks.onEachOperator}, the assembly trace of {@code Hooks.onOperatorDebug()}), and is
     * {@link Scannable} (its step name says what it consumes; signals come on the group actor's thread).
     */
    abstract static class ConsumeFlux extends Flux<Delivery> implements Scannable {
        private final String subject;
        private final String group;

        ConsumeFlux(String subject, String group) {
            this.subject = subject;
            this.group = group;
        }

        static Flux<Delivery> assemble(ConsumeFlux source) {
            return onAssembly(source);
        }

        @Override
        public String stepName() {
            return stepName(subject, group);
        }

        /** @return the step name of {@code consume(subject, group)}: its Flux's, and its subscription's name */
        static String stepName(String subject, String group) {
            return "consume(" + subject + ", " + group + ")";
        }

        @Override
        public Object scanUnsafe(Attr key) {
            return key == Attr.RUN_STYLE ? Attr.RunStyle.ASYNC : null;
        }
    }

    // ================================================================== introspection and lifecycle

    /**
     * @return the synchronous store
     * @throws IllegalStateException if the consumer was built with an asynchronous store (see
     *                               {@link #asyncStore()})
     */
    public MessageStore store() {
        if (store == null) {
            throw new IllegalStateException("the store is asynchronous (" + asyncStore + "): use asyncStore()");
        }
        return store;
    }

    /** @return the store through the asynchronous SPI (an adapter when the store is synchronous) */
    public AsyncMessageStore asyncStore() {
        return asyncStore;
    }

    /** @return the scheduler running the {@code (subject, group)} actors */
    public ActorScheduler scheduler() {
        return scheduler;
    }

    /**
     * Reads a group's figures; never creates an actor. A pair without a live actor (never used, or
     * retired when idle) reads its offsets from a {@link MessageStore}, with zero counters; an
     * {@link AsyncMessageStore} is not asked (this call does not block): its offsets and lag read
     * {@code 0} then, and {@link AsyncMessageStore#position} tells them.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @return the group's figures
     */
    public GroupStats stats(String subject, String group) {
        Names.subject(subject);
        Names.group(group);
        ConsumerGroupActor a = actors.get(key(subject, group));
        if (a != null && !a.isRetired()) {
            return a.stats();
        }
        if (store == null) {
            // an asynchronous store is not asked here (no blocking): asyncStore().position() tells
            return new GroupStats(subject, group, SCHEDULING_GROUP_PREFIX + group, 0, 0, 0,
                    0, 0, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        }
        long end = store.endOffset(subject);
        long committed = store.committedOffset(subject, group);
        long start = committed >= 0 ? Math.max(committed, store.startOffset(subject)) : store.startOffset(subject);
        return new GroupStats(subject, group, SCHEDULING_GROUP_PREFIX + group, end, start, Math.max(0, end - start),
                0, 0, false, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    }

    /** @return the scheduling state of a group's actor, for diagnostics (not a stable format) */
    String debugState(String subject, String group) {
        ConsumerGroupActor a = actors.get(key(subject, group));
        return a == null ? "no actor for " + subject + "/" + group : a.toString();
    }

    /**
     * @return the figures of every live (subject, group) actor, sorted by subject then group; up to
     *         {@link Builder#maxGroups} entries (prefer {@link #stats(int)} where output must be small)
     */
    public List<GroupStats> stats() {
        List<ConsumerGroupActor> live = liveActors();
        List<GroupStats> out = new ArrayList<>(live.size());
        for (ConsumerGroupActor a : live) {
            out.add(a.stats());
        }
        out.sort(BY_NAME);
        return out;
    }

    /**
     * The {@code limit} live groups with the largest lag (ties: by subject, then group): a bounded
     * report for a status page. Costs one pass over the live actors and a heap of {@code limit}.
     *
     * @param limit how many at most (≥ 1)
     * @return the groups, largest lag first
     * @throws IllegalArgumentException if {@code limit < 1}
     */
    public List<GroupStats> stats(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1 but was " + limit);
        }
        java.util.Comparator<GroupStats> worstFirst = java.util.Comparator.comparingLong(GroupStats::lag).reversed()
                .thenComparing(BY_NAME);
        java.util.PriorityQueue<GroupStats> best = new java.util.PriorityQueue<>(worstFirst.reversed());
        for (ConsumerGroupActor a : liveActors()) {
            best.add(a.stats());
            if (best.size() > limit) {
                best.poll();
            }
        }
        List<GroupStats> out = new ArrayList<>(best);
        out.sort(worstFirst);
        return out;
    }

    /**
     * The registered actors not retired, for the statistics: never more than {@link Builder#maxGroups}. The map
     * is read without the lock, while actors retire and others take their place: an actor is created only once
     * one that made room retired (marked before it left the map), so a second look at each actor seen in the
     * pass, after the pass, finds retired every one whose place an actor seen in the pass took (found by a
     * black-box probe: three entries with a cap of two, the retired ones among them).
     */
    private List<ConsumerGroupActor> liveActors() {
        List<ConsumerGroupActor> live = new ArrayList<>(actors.size());
        for (ConsumerGroupActor a : actors.values()) {
            if (!a.isRetired()) {
                live.add(a);
            }
        }
        live.removeIf(ConsumerGroupActor::isRetired);
        return live;
    }

    /** @return how many (subject, group) actors are live now (none once the consumer is disposed) */
    public int liveGroups() {
        return actors.size();
    }

    /** @return how many (subject, group) actors retired after their idle timeout so far */
    public long retiredGroups() {
        return retired.sum();
    }

    private static final java.util.Comparator<GroupStats> BY_NAME = (x, y) -> {
        int c = x.subject().compareTo(y.subject());
        return c != 0 ? c : x.group().compareTo(y.group());
    };

    /**
     * Prepares a graceful shutdown: from now on no pull waits. Every waiting long poll is answered at once
     * ({@link PullResult.Status#TIMED_OUT}, or the messages it can be given now), and so is every later one;
     * every {@link #consume} stream completes (after an {@code onNext} in progress), a new one at once,
     * leaving its delivered but unacknowledged messages to be acknowledged or redelivered as usual.
     * Everything else goes on: appends, pull-once, acknowledgements and nacks, so requests already accepted
     * finish normally. Idempotent; {@link #dispose()} ends the rest.
     *
     * <p>For a web server in front: quiesce before its graceful shutdown (which would otherwise wait for
     * every open long poll and stream, up to their timeouts), dispose after it stopped taking requests
     * (the Spring Boot starter does both).
     */
    public void quiesce() {
        quiescing = true;
        for (ConsumerGroupActor a : actors.values()) {
            a.wake(); // its turn answers its waiting long polls (a retired actor has none)
        }
        for (ConsumerSubscription c : liveConsumers) {
            c.consumerQuiesced();
        }
    }

    /** @return whether {@link #quiesce()} was called */
    public boolean isQuiescing() {
        return quiescing;
    }

    /**
     * Stops every {@code (subject, group)} actor: waiting pulls and live {@link #consume} streams get an
     * {@link IllegalStateException}, later calls a {@link java.util.concurrent.RejectedExecutionException}; the actors leave
     * this consumer's registries (so {@link #liveGroups()} is then 0) and their meters are removed; the store
     * is left as is. Idempotent.
     */
    @Override
    public void dispose() {
        synchronized (LIFECYCLE) {
            // under the lock that creation holds: no actor is created after this, so the loop below sees all
            if (disposed) {
                return;
            }
            disposed = true;
        }
        appendListener.dispose();
        for (ConsumerGroupActor a : actors.values()) {
            a.terminate();
            leave(a, false);
        }
        settings.metrics.close(); // no actor is created any more (above): every pair's meters go now
        metricsCloser.dispose();
        // consumers with no pull in flight would otherwise learn of it only at their next request
        IllegalStateException gone = disposedError();
        for (ConsumerSubscription c : liveConsumers) {
            c.consumerDisposed(gone);
        }
    }

    /**
     * A group's actor terminated (its scheduler was disposed, or this consumer): the {@code consume()}
     * streams attached to it end with the error {@code errorFor} makes for each one's subscriber Context, also
     * those with no pull in flight, which would otherwise learn of it only at their next request (any thread;
     * idempotent per stream).
     */
    private void actorTerminated(ConsumerGroupActor actor,
            java.util.function.Function<reactor.util.context.ContextView, Throwable> errorFor) {
        if (disposed || actor.isRetired()) {
            return; // dispose() ends every stream itself, with its own error; a retiring actor leaves by itself
        }
        for (ConsumerSubscription c : liveConsumers) {
            if (c.actor() == actor) {
                c.consumerDisposed(errorFor);
            }
        }
        // terminated under this consumer (its scheduler group cg.<group> or the scheduler disposed): it leaves
        // the registries, so the pair's next call creates a new actor (or is refused by a disposed scheduler)
        // instead of failing on the dead one until the consumer is disposed
        leave(actor, false);
    }

    private static IllegalStateException disposedError() {
        return new IllegalStateException("pull consumer disposed: consumers no longer receive messages");
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }

    /** @return how long a pulled message may stay unacknowledged before it is redelivered */
    public Duration ackTimeout() {
        return Duration.ofNanos(ackTimeoutNanos);
    }

    /** @return the most long polls one group holds at once */
    public int maxWaitingPulls() {
        return maxWaitingPulls;
    }

    /** @return the largest {@code maxMessages} a pull may ask for */
    public int maxMessagesPerPull() {
        return maxMessagesPerPull;
    }

    /** @return the payload bytes one answer holds at most (its first message excepted) */
    public long maxBytesPerPull() {
        return maxBytesPerPull;
    }

    /** @return how long an idle (subject, group) actor lives ({@link Duration#ZERO}: forever) */
    public Duration idleTimeout() {
        return Duration.ofNanos(idleTimeoutNanos);
    }

    /** @return the most (subject, group) actors live at once */
    public int maxGroups() {
        return maxGroups;
    }

    /**
     * Checks a subject name with the rule this consumer applies (1 to 128 characters out of letters,
     * digits, {@code '.'}, {@code '_'}, {@code '-'}), e.g. to validate input at an API boundary.
     *
     * @param subject the name
     * @return {@code subject}
     * @throws IllegalArgumentException naming the problem, its message starting with {@code "subject"}
     */
    public static String requireValidSubject(String subject) {
        return Names.subject(subject);
    }

    /**
     * Checks a consumer group name (1 to 120 characters out of letters, digits, {@code '.'}, {@code '_'},
     * {@code '-'}).
     *
     * @param group the name
     * @return {@code group}
     * @throws IllegalArgumentException naming the problem, its message starting with {@code "group"}
     */
    public static String requireValidGroup(String group) {
        return Names.group(group);
    }

    // ================================================================== internals

    /** @return the store's current epoch */
    private String epoch() {
        return settings.epoch();
    }

    private static String key(String subject, String group) {
        return subject + '\u0000' + group;
    }

    /** Hands a command to the pair's actor, creating it if needed, and again if it just retired. */
    private void submit(String subject, String group, ConsumerGroupCommand c) {
        boolean replaced = false;
        for (;;) {
            ConsumerGroupActor a = actor(subject, group);
            if (!replaced && a.isTerminated() && !a.isRetired()) {
                // its scheduler group cg.<group> was disposed under this consumer, and the termination (which ends on
                // the actor's thread, after a turn in progress) has not taken it out of the registries yet: the
                // pair's next call builds a new actor (class doc), not a refusal from the dead one. A disposed
                // scheduler or consumer refuses it in actor() instead. Once per call: an actor built into a group
                // that is still closing terminates at once, and then refuses the call as before (no loop building
                // actors for as long as that close takes). A retiring actor (RETIRED) leaves by itself, counted
                leave(a, false);
                replaced = true;
                continue;
            }
            if (a.tryPost(c)) {
                return;
            }
            retiring();
        }
    }

    /** An actor refused a post while it retires (a few instructions until it leaves the map). */
    private static boolean retiring() {
        Thread.onSpinWait();
        return true;
    }

    /**
     * The pair's live actor, created on first use. Creation and retirement hold {@link #LIFECYCLE}
     * (rare: once per pair per idle period), so the count checked against {@code maxGroups} is
     * exact and a scheduler group is disposed only when no consumer holds an actor in it.
     */
    private ConsumerGroupActor actor(String subject, String group) {
        if (disposed) {
            throw refusedWhenDisposed();
        }
        String key = key(subject, group);
        ConsumerGroupActor a = actors.get(key);
        if (a != null) {
            return a;
        }
        synchronized (LIFECYCLE) {
            a = actors.get(key);
            if (a != null) {
                return a;
            }
            if (disposed) {
                throw refusedWhenDisposed();
            }
            if (actors.size() >= maxGroups) {
                throw new GroupLimitExceededException(subject, group, maxGroups);
            }
            if (scheduler.isDisposed()) {
                // refused as a disposed Reactor scheduler refuses a task (an actor built on it anyway failed
                // the call with "pull consumer closed", though this consumer is not disposed)
                throw new RejectedExecutionException("scheduler " + scheduler.name() + " is disposed: pull group "
                        + subject + "/" + group + " cannot run");
            }
            ActorGroup schedulingGroup = scheduler.group(SCHEDULING_GROUP_PREFIX + group, 1);
            ConsumerGroupActor created;
            try {
                // the store before the actor, which registers with its scheduler group as it is built: a
                // refusal (a new subject beyond the store's limit) must leave nothing behind
                long start = settings.syncStore != null
                        ? ConsumerGroupActor.startOffset(settings.syncStore, subject, group) : -1L;
                created = new ConsumerGroupActor(settings, schedulingGroup, subject, group, start);
            } catch (RuntimeException | Error e) {
                disposeIfUnused(schedulingGroup, group); // created for this pair, maybe: as leave() does
                throw e;
            }
            actors.put(key, created);
            bySubject.computeIfAbsent(subject, s -> new CopyOnWriteArrayList<>()).add(created);
            actorsPerGroup.merge(group, 1, Integer::sum);
            return created;
        }
    }

    /**
     * Called by an actor that retired (terminated, refusing posts): removes it from the registries and
     * disposes its scheduler group if no actor is left in it. Held under {@link #LIFECYCLE}, shared by
     * every consumer of the JVM, because two consumers on one scheduler share {@code cg.<group>}.
     */
    void retired(ConsumerGroupActor a) {
        leave(a, true);
    }

    /**
     * Removes {@code a} from the registries, once: retirement and {@link #dispose()} may both try (the
     * second finds it gone). {@code idleRetirement}: count it in {@link #retiredGroups()}.
     */
    private void leave(ConsumerGroupActor a, boolean idleRetirement) {
        synchronized (LIFECYCLE) {
            String key = key(a.subject, a.group);
            if (actors.get(key) != a) {
                return; // left already
            }
            if (idleRetirement) {
                // counted before it leaves the map: whoever sees the pair gone (liveGroups) sees it counted
                retired.increment();
            }
            actors.remove(key, a);
            List<ConsumerGroupActor> list = bySubject.get(a.subject);
            if (list != null) {
                list.remove(a);
                if (list.isEmpty()) {
                    bySubject.remove(a.subject, list);
                }
            }
            actorsPerGroup.merge(a.group, -1, (x, y) -> x + y == 0 ? null : x + y);
            disposeIfUnused(a.schedulingGroupHandle(), a.group);
        }
    }

    /**
     * Under {@link #LIFECYCLE}: disposes the scheduler group {@code cg.<group>} when no actor of this consumer
     * and no actor at all (another consumer's on the same scheduler) is left in it.
     */
    private void disposeIfUnused(ActorGroup g, String group) {
        if (!actorsPerGroup.containsKey(group) && g.actors() == 0) {
            g.dispose();
        }
    }

    /** @return what a call on a disposed consumer is refused with */
    private static RejectedExecutionException refusedWhenDisposed() {
        return new RejectedExecutionException("pull consumer disposed");
    }

    /** Serialises actor creation and retirement across the JVM's consumers (see {@link #retired}). */
    private static final Object LIFECYCLE = new Object();

    /** The store's append listener: wakes the subject's waiting groups (each resumes at most once). */
    private void appended(String subject, long endOffset) {
        List<ConsumerGroupActor> groups = bySubject.get(subject);
        if (groups != null) {
            for (ConsumerGroupActor a : groups) {
                a.appended(endOffset);
            }
        }
    }

    /**
     * The store may have missed telling appends (its notification channel was down): every group asks the
     * store again, the waiting ones at once (each resumes at most once), so a long poll does not wait out its
     * timeout for a message appended meanwhile.
     */
    private void appendsMissed() {
        for (List<ConsumerGroupActor> groups : bySubject.values()) {
            for (ConsumerGroupActor a : groups) {
                a.appended(-1);
            }
        }
    }

    /**
     * A duration in nanoseconds, capped at {@code Long.MAX_VALUE / 4} (about 73 years): "forever", yet
     * still safe to add to {@code System.nanoTime()} and to compare, where a longer one overflowed into
     * the past (a pull answered {@code TIMED_OUT} at once) or threw {@code ArithmeticException}.
     */
    static long saturatedNanos(Duration d) {
        try {
            return Math.min(d.toNanos(), Long.MAX_VALUE / 4);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }

    @Override
    public String toString() {
        return "PullConsumer[" + scheduler.name() + ", " + (store != null ? store : asyncStore) + ", groups="
                + actors.size() + "]";
    }

    /** Builds a {@link PullConsumer}; every parameter validated when set. */
    public static final class Builder {
        private final ActorScheduler scheduler;
        private MessageStore store;
        private AsyncMessageStore asyncStore;
        private Duration ackTimeout = Duration.ofSeconds(30);
        private int maxWaitingPulls = 100_000;
        private int maxMessagesPerPull = 1_000;
        private long maxBytesPerPull = DEFAULT_MAX_BYTES_PER_PULL;
        private Duration idleTimeout = Duration.ofMinutes(5);
        private int maxGroups = 10_000;
        private FailurePolicy failurePolicy = FailurePolicy.retryThenDeadLetter(16, Duration.ofSeconds(1));

        private Builder(ActorScheduler scheduler) {
            this.scheduler = scheduler;
        }

        /**
         * @param store where messages and offsets live (default: a new {@link InMemoryMessageStore}); a
         *              synchronous store keeps no delivery state (what is in flight, attempts): that lives in
         *              this consumer, so two pull consumers on one store each deliver a group's messages (to
         *              serve one group from several consumers or processes, use one pull consumer, or an
         *              {@link AsyncMessageStore} that keeps the delivery state itself)
         * @return this
         */
        public Builder store(MessageStore store) {
            if (store == null) {
                throw new IllegalArgumentException("store must not be null");
            }
            this.store = store;
            this.asyncStore = null;
            return this;
        }

        /**
         * Uses an asynchronous (remote) store instead: the {@code (subject, group)} actors never wait on it (see
         * {@link AsyncMessageStore}); {@link PullConsumer#append} is then refused, use
         * {@link PullConsumer#appendAsync}. Replaces a {@link #store(MessageStore)} set before.
         *
         * @param store where messages and group positions live
         * @return this
         */
        public Builder asyncStore(AsyncMessageStore store) {
            if (store == null) {
                throw new IllegalArgumentException("store must not be null");
            }
            this.asyncStore = store;
            this.store = null;
            return this;
        }

        /**
         * @param ackTimeout a pulled message not acknowledged within it is redelivered (&gt; 0, default 30 s)
         * @return this
         */
        public Builder ackTimeout(Duration ackTimeout) {
            if (ackTimeout == null || ackTimeout.isNegative() || ackTimeout.isZero()) {
                throw new IllegalArgumentException("ackTimeout must be > 0 but was " + ackTimeout);
            }
            this.ackTimeout = ackTimeout;
            return this;
        }

        /**
         * @param maxWaitingPulls most long polls one group holds at once (≥ 1, default 100,000); beyond
         *                        it a long poll fails with {@link WaitingPullsLimitExceededException} (an
         *                        {@link IllegalStateException}; a pull-once, which
         *                        does not wait, is never refused for it). A {@link #consume} stream's waiting
         *                        pull counts (a stream holds one at most), and only its first one can be
         *                        refused: a stream the group already answered is never cut by the limit
         * @return this
         */
        public Builder maxWaitingPulls(int maxWaitingPulls) {
            if (maxWaitingPulls < 1) {
                throw new IllegalArgumentException("maxWaitingPulls must be >= 1 but was " + maxWaitingPulls);
            }
            this.maxWaitingPulls = maxWaitingPulls;
            return this;
        }

        /**
         * @param maxMessagesPerPull the largest {@code maxMessages} a pull may ask for (≥ 1, default 1,000)
         * @return this
         */
        public Builder maxMessagesPerPull(int maxMessagesPerPull) {
            if (maxMessagesPerPull < 1) {
                throw new IllegalArgumentException("maxMessagesPerPull must be >= 1 but was " + maxMessagesPerPull);
            }
            this.maxMessagesPerPull = maxMessagesPerPull;
            return this;
        }

        /**
         * @param maxBytesPerPull the payload bytes one answer holds at most (≥ 1, default 4 MiB); the
         *                        first message of an answer is always included, however large, so a
         *                        pull always makes progress
         * @return this
         */
        public Builder maxBytesPerPull(long maxBytesPerPull) {
            if (maxBytesPerPull < 1) {
                throw new IllegalArgumentException("maxBytesPerPull must be >= 1 but was " + maxBytesPerPull);
            }
            this.maxBytesPerPull = maxBytesPerPull;
            return this;
        }

        /**
         * @param idleTimeout how long a (subject, group) actor with no waiting pull, nothing in flight,
         *                    no attached consumer and no call lives before it is removed with its meters
         *                    (its committed offset stays in the store); ≥ 0, default 5 min,
         *                    {@link Duration#ZERO}: never removed
         * @return this
         */
        public Builder idleTimeout(Duration idleTimeout) {
            if (idleTimeout == null || idleTimeout.isNegative()) {
                throw new IllegalArgumentException("idleTimeout must be >= 0 but was " + idleTimeout);
            }
            this.idleTimeout = idleTimeout;
            return this;
        }

        /**
         * @param maxGroups the most (subject, group) actors live at once (≥ 1, default 10,000); a call
         *                  that would create one more fails with {@link GroupLimitExceededException}
         * @return this
         */
        public Builder maxGroups(int maxGroups) {
            if (maxGroups < 1) {
                throw new IllegalArgumentException("maxGroups must be >= 1 but was " + maxGroups);
            }
            this.maxGroups = maxGroups;
            return this;
        }

        /**
         * @param failurePolicy applied to nacked messages (default: retry with 1 s back-off, 16
         *                      deliveries in all, then dead-letter)
         * @return this
         */
        public Builder failurePolicy(FailurePolicy failurePolicy) {
            if (failurePolicy == null) {
                throw new IllegalArgumentException("failurePolicy must not be null");
            }
            this.failurePolicy = failurePolicy;
            return this;
        }

        /**
         * @return the consumer
         * @throws RejectedExecutionException if the scheduler is disposed
         * @throws IllegalArgumentException   naming {@code store} if the store's
         *                                    {@link AsyncMessageStore#addAppendListener} returns {@code null}
         */
        public PullConsumer build() {
            if (scheduler.isDisposed()) {
                throw new RejectedExecutionException("scheduler " + scheduler.name() + " is disposed");
            }
            return new PullConsumer(this);
        }
    }
}
