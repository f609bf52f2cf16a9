package io.reactoractor.actor;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import io.reactoractor.internal.mailbox.MpscChunkedArrayQueue;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;

/**
 * The actor's mailbox credits: {@code capacity} of them, each either free, granted to an
 * {@link InboundPort} as demand, taken by {@link Actor#tell}/{@link Actor#send}, or held by a message in
 * the mailbox. The turn gives them back as messages leave ({@link #returnCredits}), and
 * {@link #distribute()} hands free ones to waiting {@link Actor#send}s first, then to the ports up to
 * their fair share (see {@link Actor}'s "Inbound" section for the policy). While the actor's group or
 * scheduler closes gracefully ({@link ActorTurnLoop#isClosing()}) nothing new is admitted: returned
 * credits stay free (a {@code tell} is refused before it looks at them), {@link #distribute()} fails the
 * waiting sends with the scheduler's rejection (a new send fails so at once) and grants new demand only to
 * ports fed by a stage closing too ({@link InboundPort#drainsClosingStage()}: an actor or a fair
 * {@code publishOn} whose output is work it held); so the input ends with the demand the other upstreams
 * already hold, and a chain of actors drains what its stages held.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li>{@code freeCredits} (atomic; the mailbox's {@link MpscChunkedArrayQueue#credits() credits} counter): taken only by CAS ({@link #acquireUpTo}): without the lock by
 *       {@link #tryAcquire()} (any thread: {@code tell}, {@code send}), and under it when
 *       {@link #distribute()} moves them to ports or waiting sends; given back by {@link #returnCredits}
 *       (the turn) and by a closing port. Never negative, so demand plus messages never exceed the
 *       capacity.</li>
 *   <li>{@code ports}, {@code openPorts}, {@code anyPortAttached}, {@code pendingSends}: guarded by this
 *       object's monitor (attach, close and distribute run on the upstreams', senders' and actor's
 *       threads). A monitor because {@link #distribute()} must see the ports, their windows and the
 *       waiting sends together to share credits fairly; it is taken once per replenish batch and per
 *       port or waiting-send event, never by a port's {@code onNext} or by {@code tell()}; and it is
 *       this internal object's, not the public {@link Actor}'s, which user code could lock. Signals to
 *       other parties (a port's {@code request}, a send's {@code success}) are made after the lock is
 *       released, never under it.</li>
 *   <li>a port's {@code outstanding} (atomic): raised under the lock by {@link #distribute()},
 *       decremented by the port's {@code onNext} (its upstream's thread, without the lock).</li>
 * </ul>
 * Termination ({@link #close}) runs after the actor set {@code done}; {@link #send} and
 * {@link #distribute()} re-check {@code done} under the monitor, so a waiting send is either drained by
 * {@code close} or sees {@code done} itself.
 *
 * @param <I> inbound message type
 */
final class InboundCredits<I> {

    private final ActorTurnLoop<I, ?> loop;
    final int capacity;
    /** Credits are returned in batches of this size (or when the mailbox empties); also an extra port's window. */
    final int replenishBatch;
    /** The actor's own {@link org.reactivestreams.Processor} side. */
    final InboundPort<I> primary;
    /**
     * The actor's mailbox, whose {@link MpscChunkedArrayQueue#credits() credits} counter is
     * {@code freeCredits}: it lives on the mailbox's producer line, which a {@code tell()} writes next.
     */
    private final MpscChunkedArrayQueue<I> mailbox;

    // ---- guarded by 'this'
    private final List<InboundPort<I>> ports = new ArrayList<>();
    /**
     * Where the next {@link #distribute()} starts looking among {@link #ports} (guarded by the monitor):
     * each call starts one port further, so the credits a turn gives back reach every port in turn. Always
     * starting at the first let a fast upstream attached first, below its target again at once, take every
     * returned credit while the later ports starved.
     */
    private int firstPort;
    private final ArrayDeque<PendingSend<I>> pendingSends = new ArrayDeque<>();
    private int openPorts;
    private boolean anyPortAttached;
    /**
     * Extra ports handed out ({@link Actor#newSubscriber()}) and not subscribed yet (monitor): the actor's
     * completion waits for them too, so a port subscribed after another upstream completed is not cancelled
     * and its elements are not lost ("when every inbound subscriber completed").
     */
    private int unattachedPorts;
    /** Set by {@link #stopUpstreams()} under the monitor: no port is attached any more. */
    private boolean inputStopped;
    /**
     * {@code pendingSends.size() + openPorts}, written under the monitor after each change, read without
     * it by {@link #distribute()}'s fast path (see there).
     */
    private volatile int claimants;
    /** {@code pendingSends.size()}, written under the monitor with {@link #claimants}, read by {@link #returnCredits}. */
    private volatile int waitingSends;

    InboundCredits(ActorTurnLoop<I, ?> loop, int capacity) {
        this.loop = loop;
        this.capacity = capacity;
        this.replenishBatch = Math.max(1, capacity / 4);
        this.mailbox = loop.mailbox;
        mailbox.setCredits(capacity); // freeCredits
        this.primary = new InboundPort<>(this, loop, null, null); // exposes the downstream's context; the actor scans itself
    }

    /**
     * @param context the context the port exposes upstream ({@code null}: the downstream's)
     * @param actor   the actor the port feeds (its {@code Scannable.Attr.ACTUAL})
     * @return a new, not yet attached, inbound port ({@link Actor#newSubscriber()})
     */
    InboundPort<I> newPort(Context context, Object actor) {
        synchronized (this) {
            unattachedPorts++; // an inbound subscriber already: completion waits for it (see portClosed)
        }
        return new InboundPort<>(this, loop, context, actor);
    }

    /** @return whether a free credit was taken (any thread) */
    boolean tryAcquire() {
        return acquireUpTo(1) == 1;
    }

    /**
     * A credit for a new message ({@link Actor#tell}, a {@link Actor#send} that does not wait): none while a
     * send waits, which gets the returned credits first ({@link Actor}'s promise), also the one a turn adds to
     * {@code freeCredits} just before its {@link #distribute()} hands it on. A thread that made a send wait and
     * then tells is thereby refused until that send's message is in the mailbox, so its messages keep its order:
     * {@code waitingSends} is written under the monitor after the accepted sends' messages were enqueued
     * ({@link #admitOldestLocked}), so a volatile read of a smaller count comes after those enqueues.
     *
     * @return whether a free credit was taken (any thread)
     */
    boolean tryAcquireForNewMessage() {
        return waitingSends == 0 && tryAcquire();
    }

    /**
     * Takes up to {@code want} free credits by CAS. Always by CAS, also under the monitor:
     * {@link #tryAcquire()} takes credits without it, so a read-then-subtract could hand out credits
     * a {@code tell()} took in between, leaving {@code freeCredits} negative and the demand plus the
     * mailbox above the capacity.
     *
     * @return the credits taken, {@code 0} if none are free
     */
    private long acquireUpTo(long want) {
        for (;;) {
            long f = mailbox.credits();
            long take = Math.min(f, want);
            if (take <= 0) {
                return 0;
            }
            if (mailbox.compareAndSetCredits(f, f - take)) {
                return take;
            }
        }
    }

    /** {@link Actor#send}: enqueues at once if a credit is free, else waits in {@code pendingSends}. */
    Mono<Void> send(I message) {
        return Mono.create(sink -> {
            PendingSend<I> p = new PendingSend<>(message, sink);
            // first: a cancel is seen whenever it comes (Reactor runs a callback registered after it at once)
            sink.onCancel(() -> {
                if (p.cancel()) {
                    synchronized (this) {
                        if (pendingSends.remove(p)) {
                            updateClaimants();
                        }
                    }
                }
            });
            if (p.cancelled()) {
                return; // cancelled as it subscribed (in onSubscribe): nothing is sent
            }
            if (loop.isTerminated() || loop.isCompleteRequested()) {
                sink.error(new IllegalStateException("actor " + loop.path()
                        + (loop.isTerminated() ? " is terminated" : " is completing: it takes no new message")));
                return;
            }
            if (loop.isClosing()) {
                sink.error(loop.engine.rejectSignal(sink.contextView())); // a graceful disposal began: no new input (see Actor)
                return;
            }
            if (tryAcquireForNewMessage()) {
                if (!p.claim()) {
                    returnCredits(1); // cancelled meanwhile: the message is not sent
                    return;
                }
                // taken either way: a termination meanwhile hands it to the discard hook (Actor#tell)
                loop.enqueue(message);
                sink.success();
                return;
            }
            boolean queued;
            synchronized (this) {
                // terminate() sets 'done' and then drains pendingSends under this lock: re-checked
                // here, under the same lock, a send either is drained by it or sees 'done' itself; a cancel
                // before this finds nothing to remove, so a cancelled send is not queued
                queued = !loop.done;
                if (queued && !p.cancelled()) {
                    pendingSends.addLast(p);
                    updateClaimants();
                }
            }
            if (!queued) {
                sink.error(new IllegalStateException("actor " + loop.path() + " is terminated"));
                return;
            }
            distribute();
        });
    }

    void attach(InboundPort<I> port) {
        synchronized (this) {
            if (inputStopped) {
                port.cancelUpstream(); // completion was requested: no new input (see stopUpstreams)
                return;
            }
            if (port != primary && unattachedPorts > 0) {
                unattachedPorts--;
            }
            ports.add(port);
            openPorts++;
            anyPortAttached = true;
            updateClaimants();
        }
        distribute();
    }

    /** A port's upstream terminated: its unused demand is freed; the last one to complete completes the actor. */
    void portClosed(InboundPort<I> port, Throwable error) {
        boolean completeNow = false;
        synchronized (this) {
            if (ports.remove(port)) {
                openPorts--;
                updateClaimants();
                mailbox.addCredits(port.outstanding.getAndSet(0));
                completeNow = error == null && openPorts == 0 && unattachedPorts == 0 && anyPortAttached;
            }
        }
        if (error != null) {
            loop.fail(error);
        } else if (completeNow) {
            loop.requestComplete();
        }
        distribute();
    }

    /**
     * Called by the actor thread as messages leave the mailbox. Waiting sends get the credits first
     * ({@link Actor}'s promise): while one waits they are handed over under the monitor, before any of
     * them reaches {@code freeCredits}, where a {@code tell()} (which takes credits without the monitor)
     * could take one between the give-back and {@link #distribute()} and leave the send waiting. A send
     * that starts waiting at that very moment is served by the usual handshake (see {@link #distribute()}).
     */
    void returnCredits(int n) {
        long rest = n;
        if (waitingSends > 0 && !loop.isClosing()) { // closing: distribute() fails them instead
            rest = admitWaitingSends(rest);
        }
        if (rest > 0) {
            mailbox.addCredits(rest);
        }
        distribute();
    }

    /**
     * Hands up to {@code n} returned credits to waiting sends, oldest first, and enqueues their messages.
     *
     * @return the credits left over
     */
    private long admitWaitingSends(long n) {
        Admissions<I> admitted = null;
        long rest = n;
        synchronized (this) {
            if (loop.done) {
                return rest; // close() failed the waiting sends
            }
            while (rest > 0 && !pendingSends.isEmpty()) {
                admitted = admitOldestLocked(admitted);
                rest--;
            }
            if (admitted != null) {
                updateClaimants();
            }
        }
        complete(admitted);
        return rest;
    }

    /**
     * Monitor held: the oldest waiting send, given a credit, enqueues its message, unless it was cancelled after
     * it was queued (then its message is not sent, and {@link #complete} gives the credit back). Under the
     * monitor, so the message is in the mailbox before {@code waitingSends} drops and before the sender's own
     * {@link #distribute()} (after it queued the send) can return: a {@code tell} the sender makes next comes
     * after it (see {@link #tryAcquireForNewMessage()}). Enqueueing is lock-free and signalling the actor never
     * waits for this monitor (a drain of a terminated actor that {@code signal()} runs on this thread re-enters
     * it).
     *
     * @param admitted this call's admissions so far, {@code null} for none (most calls admit nobody)
     * @return the admissions with this one
     */
    private Admissions<I> admitOldestLocked(Admissions<I> admitted) {
        Admissions<I> a = admitted != null ? admitted : new Admissions<>();
        PendingSend<I> p = pendingSends.pollFirst();
        if (p.claim()) {
            loop.enqueue(p.message); // taken either way: a termination meanwhile hands it to the discard hook
            a.accepted.add(p);
        } else {
            a.unused++;
        }
        return a;
    }

    /** The sends one call admitted: completed, and the credits of cancelled ones given back, outside the monitor. */
    private static final class Admissions<I> {
        final List<PendingSend<I>> accepted = new ArrayList<>();
        int unused;
    }

    private void complete(Admissions<I> admitted) {
        if (admitted == null) {
            return;
        }
        for (PendingSend<I> p : admitted.accepted) {
            p.sink.success();
        }
        if (admitted.unused > 0) {
            returnCredits(admitted.unused);
        }
    }

    /**
     * Hands free credits to waiting senders first, then to inbound ports up to their fair share.
     *
     * <p>Fast path: with no waiting send and no open port there is nobody to hand credits to
     * ({@code tell()} takes them from {@code freeCredits} itself), so the monitor is not taken; an
     * actor fed only by {@code tell()} returns its credits at every turn's end without a lock. No
     * claimant is missed: a claimant registers under the monitor (and {@link #claimants} is written,
     * volatile) and then calls this method, which reads {@code freeCredits} under the monitor; a
     * returner adds to {@code freeCredits} (a volatile read-modify-write) and then reads
     * {@code claimants}. In the single order of these volatile accesses, either the returner sees the
     * claimant, or the claimant's own call comes after the returned credits and sees them.
     */
    void distribute() {
        if (claimants == 0) {
            return;
        }
        boolean closing = loop.isClosing();
        if (closing) {
            // no new input: waiting sends fail; a port gets new demand only from a stage that is closing too
            // (InboundPort.drainsClosingStage: what it emits is work it held), the others keep what they hold
            rejectWaitingSends();
        }
        Admissions<I> admitted = null;
        List<InboundPort<I>> granted = null;
        List<Long> grants = null;
        synchronized (this) {
            if (loop.done) {
                return;
            }
            while (!closing && !pendingSends.isEmpty() && tryAcquire()) {
                admitted = admitOldestLocked(admitted);
            }
            if (admitted != null) {
                updateClaimants();
            }
            if (openPorts > 0 && !ports.isEmpty() && mailbox.credits() > 0) {
                long share = Math.max(1, capacity / openPorts);
                int n = ports.size();
                int start = firstPort % n;
                firstPort = start + 1;
                for (int i = 0; i < n; i++) {
                    InboundPort<I> p = ports.get((start + i) % n);
                    // the primary port (Processor API) may hold the whole capacity when alone; an extra
                    // port holds at most one replenish batch, so an idle upstream cannot sit on the
                    // credits the other upstreams, tell() and send() need (demand cannot be revoked)
                    long target = p == primary ? share : Math.min(share, replenishBatch);
                    long have = p.outstanding.get();
                    if (have >= target || p.closed || (closing && !p.drainsClosingStage())) {
                        continue;
                    }
                    long give = acquireUpTo(target - have);
                    if (give <= 0) {
                        break;
                    }
                    p.outstanding.addAndGet(give);
                    if (granted == null) {
                        granted = new ArrayList<>(ports.size());
                        grants = new ArrayList<>(ports.size());
                    }
                    granted.add(p);
                    grants.add(give);
                }
            }
        }
        complete(admitted);
        if (granted != null) {
            for (int i = 0; i < granted.size(); i++) {
                granted.get(i).request(grants.get(i));
            }
        }
    }

    /**
     * The actor's group or scheduler is closing ({@link ActorTurnLoop#isClosing()}): the sends still waiting
     * for a credit were never taken, so they fail with the scheduler's rejection, as a new {@code send} does.
     * A send that starts waiting after this calls {@link #distribute()} itself and fails there.
     */
    private void rejectWaitingSends() {
        List<PendingSend<I>> toFail;
        synchronized (this) {
            if (pendingSends.isEmpty()) {
                return;
            }
            toFail = new ArrayList<>(pendingSends);
            pendingSends.clear();
            updateClaimants();
        }
        for (PendingSend<I> p : toFail) {
            if (p.claim()) { // else cancelled meanwhile: its subscriber is gone
                p.sink.error(loop.engine.rejectSignal(p.sink.contextView()));
            }
        }
    }

    /**
     * Completion was requested ({@link Actor#complete()}): the actor takes no more input from upstreams.
     * Each is cancelled and its unused demand returned, and a port subscribing later is cancelled at
     * once; the messages already in the mailbox, and waiting sends, are still delivered. Without this an
     * upstream that keeps up with the actor kept the mailbox from ever draining, so the actor never
     * completed.
     */
    void stopUpstreams() {
        List<InboundPort<I>> detached;
        synchronized (this) {
            if (inputStopped) {
                return;
            }
            detached = detachPortsLocked();
        }
        cancel(detached);
        distribute(); // the freed credits may serve waiting sends
    }

    /**
     * The actor terminated ({@code done} is set): cancels every upstream and fails every waiting send
     * with {@code error}, or with "terminated" when it ended without one.
     */
    void close(Throwable error) {
        List<InboundPort<I>> detached;
        List<PendingSend<I>> toFail;
        synchronized (this) {
            detached = detachPortsLocked();
            toFail = new ArrayList<>(pendingSends);
            pendingSends.clear();
            updateClaimants();
        }
        cancel(detached);
        IllegalStateException gone = new IllegalStateException("actor " + loop.path() + " is terminated");
        for (PendingSend<I> p : toFail) {
            p.sink.error(error != null ? error : gone);
        }
    }

    /**
     * Monitor held: no more input (a port attaching later is cancelled, see {@link #attach}); every port
     * leaves, its unused demand returned to the free credits.
     *
     * @return the ports that left, to cancel outside the monitor
     */
    private List<InboundPort<I>> detachPortsLocked() {
        inputStopped = true;
        List<InboundPort<I>> detached = new ArrayList<>(ports);
        for (InboundPort<I> p : ports) {
            // closed before its demand is taken back: an element the upstream sends meanwhile, against
            // demand it was granted (in flight, as rule 3.12 allows after a cancel), then finds the port
            // closed (see InboundPort.onNext) instead of failing the actor with an overflow
            p.closed = true;
            mailbox.addCredits(p.outstanding.getAndSet(0));
        }
        ports.clear();
        openPorts = 0;
        updateClaimants();
        return detached;
    }

    /** Cancels the upstreams of {@code detached} and the primary port's (never under the monitor). */
    private void cancel(List<InboundPort<I>> detached) {
        for (InboundPort<I> p : detached) {
            p.cancelUpstream();
        }
        if (!primary.closed) {
            primary.cancelUpstream(); // also one that has not subscribed yet: it is cancelled when it does
        }
    }

    /** Monitor held, after a change of {@code pendingSends} or {@code openPorts}. */
    private void updateClaimants() {
        waitingSends = pendingSends.size();
        claimants = pendingSends.size() + openPorts;
    }

    /**
     * A {@link Actor#send} waiting for a credit (identity matters: it is removed by reference on cancel),
     * and its outcome, decided once: {@link #claim()} (its message is enqueued) or
     * {@link #cancel()} (its subscriber cancelled: the message is never enqueued), by CAS, whichever comes
     * first. A cancel after the claim does not take the message back, as a cancel after any completion.
     */
    private static final class PendingSend<I> {
        private static final int WAITING = 0;
        private static final int CLAIMED = 1;
        private static final int CANCELLED = 2;

        final I message;
        final MonoSink<Void> sink;
        private final java.util.concurrent.atomic.AtomicInteger state = new java.util.concurrent.atomic.AtomicInteger();

        PendingSend(I message, MonoSink<Void> sink) {
            this.message = message;
            this.sink = sink;
        }

        /** @return whether this send may enqueue its message (it was not cancelled first) */
        boolean claim() {
            return state.compareAndSet(WAITING, CLAIMED);
        }

        /** @return whether the cancel came first: the message is then never enqueued */
        boolean cancel() {
            return state.compareAndSet(WAITING, CANCELLED);
        }

        boolean cancelled() {
            return state.get() == CANCELLED;
        }
    }
}
