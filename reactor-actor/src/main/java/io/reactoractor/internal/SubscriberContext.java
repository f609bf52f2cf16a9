package io.reactoractor.internal;

import org.reactivestreams.Subscriber;

import reactor.core.CoreSubscriber;
import reactor.util.context.Context;

/**
 * The Reactor context of a unicast publisher's one subscriber (an actor's outbound port, a ring consumer),
 * for what the publisher exposes upstream and to user code and for the discard hook of what it drops. Not API.
 *
 * <p>While a {@link CoreSubscriber} is attached its context is asked for each time ({@link #current()}), as
 * Reactor's processors ask theirs: it may change after it subscribed (a chain
 * {@code Flux.from(a).map(f).subscribe(b)} built before {@code b}'s own subscriber, whose
 * {@code contextWrite} then reaches {@code a} through {@code b}). At the publisher's termination the
 * subscriber is let go (rule 3.13) and its last context kept ({@link #forget()}), so what the publisher
 * discards after its end still reaches that subscriber's discard hook.
 *
 * <h2>Ordering</h2>
 * Both fields are volatile. {@link #attach} writes {@code kept} before {@code attached}; {@link #forget}
 * writes {@code kept} (the last context) before it clears {@code attached}. A reader reads {@code attached}
 * first: non-null, it asks the subscriber; null, the {@code kept} it reads next is at least as new as the
 * context the clearing {@code forget} stored (or the empty one before any subscriber). The publisher itself
 * orders {@link #forget} against a racing {@link #attach} (both call sites say how): this class only keeps the
 * two values.
 */
public final class SubscriberContext {

    /** The context recorded at attach time, then the last one at {@link #forget()}; {@code null} before an attach. */
    private volatile Context kept;
    /** The attached subscriber while it may still be asked, when it is a {@link CoreSubscriber}. */
    private volatile CoreSubscriber<?> attached;

    /**
     * Records the subscriber (before the publisher hands it its subscription): a {@link CoreSubscriber} is
     * asked for its context from now on; a plain Reactive Streams subscriber has the empty one.
     *
     * @param s the subscriber
     * @return its context now
     */
    public Context attach(Subscriber<?> s) {
        if (s instanceof CoreSubscriber<?> cs) {
            Context c = cs.currentContext();
            kept = c;
            attached = cs;
            return c;
        }
        kept = Context.empty();
        return Context.empty();
    }

    /** @return whether a subscriber was ever {@linkplain #attach attached} (any thread) */
    public boolean attachedOnce() {
        return kept != null;
    }

    /**
     * @return the attached subscriber's context, asked for now; its last one once it was {@linkplain #forget
     *         forgotten}; the empty context before any subscriber or for a plain Reactive Streams one (any thread)
     */
    public Context current() {
        CoreSubscriber<?> cs = attached;
        if (cs != null) {
            return cs.currentContext();
        }
        Context c = kept;
        return c != null ? c : Context.empty();
    }

    /** Keeps the attached subscriber's last context and lets the subscriber go (rule 3.13); idempotent. */
    public void forget() {
        CoreSubscriber<?> cs = attached;
        if (cs != null) {
            kept = cs.currentContext();
            attached = null;
        }
    }
}
