package io.reactoractor.pull;

import java.util.Comparator;

/**
 * A message a group has delivered at least once and not yet settled (acknowledged, skipped or
 * dead-lettered). Confined to its {@link ConsumerGroupActor}'s thread.
 *
 * <pre>
 *   NEW --deliver--> DELIVERED --ack / skip / dead-letter--> DONE
 *                    DELIVERED --nack (retry) / release / ack timeout--> QUEUED --deliver--> DELIVERED
 *                    QUEUED --ack / nack (skip, dead-letter)--> DONE  (the stale queue entry is skipped
 *                                                                     when it surfaces)
 *                    QUEUED --nack (retry)--> QUEUED (due after the back-off: taken out of the queue, re-added)
 *   NEW / QUEUED --deliver with ack-on-delivery--> DONE
 *   DELIVERED --ack timeout, asynchronous store--> CHECKING --still pending in the store--> QUEUED
 *                                                  CHECKING --settled there (another process) / ack--> DONE
 *                                                  CHECKING --nack--> as from DELIVERED
 *   DELIVERED / QUEUED / CHECKING --nack, last attempt, asynchronous store--> DEAD_LETTERING (the store's
 *                                  dead-letter call in flight; a nack meanwhile is ignored)
 *                                  DEAD_LETTERING --the call succeeded--> DONE
 *                                  DEAD_LETTERING --the call failed--> QUEUED, due after the ack timeout
 *                                  DEAD_LETTERING --ack--> DONE
 * </pre>
 * {@code DEAD_LETTERING}: the message stays pending (the committed offset cannot pass it) until the store
 * confirms the copy; settling it at once, a failed copy lost the message (the next ack moved the store's
 * committed offset past it, and a cursor-based store never delivered it again).
 * {@code CHECKING}: with an {@link AsyncMessageStore} shared by several processes, an acknowledgement may
 * have reached another one; the store is asked ({@link AsyncMessageStore#renewPending}) before the
 * message is delivered again.
 * {@code generation} changes on every delivery and re-queue, so an ack deadline recorded for an
 * earlier delivery is recognised as stale.
 */
final class InFlight {

    static final int NEW = 0;
    static final int DELIVERED = 1;
    static final int QUEUED = 2;
    static final int DONE = 3;
    static final int CHECKING = 4;
    static final int DEAD_LETTERING = 5;

    /** Redeliveries by due time, then offset (oldest message first). */
    static final Comparator<InFlight> BY_DUE = Comparator.<InFlight>comparingLong(f -> f.due)
            .thenComparingLong(f -> f.message.offset());

    final Message message;
    int state = NEW;
    int attempts;
    long consumerId;
    long due;
    long generation;
    /**
     * Its last delivery never reached the application and was taken back out of {@link #attempts}
     * ({@link AckLedger#release(long, long[], long)}); reset by the next delivery.
     */
    boolean lastDeliveryUncounted;
    /** Its ack-timeout check renewed it in the store ({@code CHECKING}): its redelivery needs no renewal of its own. */
    boolean renewedByCheck;

    InFlight(Message message) {
        this.message = message;
    }
}
