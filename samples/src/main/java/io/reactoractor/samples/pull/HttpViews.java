package io.reactoractor.samples.pull;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.stream.IntStream;

import io.reactoractor.pull.Delivery;
import io.reactoractor.pull.Message;
import io.reactoractor.pull.PullResult;

/** The JSON bodies of the pull endpoints (records, serialised by Boot's Jackson). */
public final class HttpViews {

    private HttpViews() {
    }

    /**
     * Answer to an append.
     *
     * @param subject the subject
     * @param offset  the new message's offset
     */
    public record Appended(String subject, long offset) {
    }

    /**
     * One message as the HTTP API shows it.
     *
     * @param offset    its offset in the subject (what {@code /ack} takes)
     * @param payload   the payload decoded as UTF-8 (bytes that are not UTF-8 become U+FFFD)
     * @param timestamp wall-clock time of the append, epoch milliseconds
     * @param attempt   its delivery attempt: 1 for the first delivery to the group, 2 for the first
     *                  redelivery, ... (a nack at the last attempt dead-letters it)
     * @param epoch     in a stream's events, the delivery epoch {@code /ack} needs with the offset;
     *                  {@code null} in a poll answer, which carries it once for all its messages
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record MessageView(long offset, String payload, long timestamp, int attempt, String epoch) {

        /**
         * @param r     a pull result
         * @param index a position in its messages
         * @return the view of the message there, in a poll answer
         */
        public static MessageView of(PullResult r, int index) {
            return of(r.messages().get(index), r.attempt(index), null);
        }

        /**
         * @param d     a delivery of a stream
         * @param epoch its delivery epoch
         * @return its view in a stream's event
         */
        public static MessageView of(Delivery d, String epoch) {
            return of(d.message(), d.attempt(), epoch);
        }

        private static MessageView of(Message m, int attempt, String epoch) {
            return new MessageView(m.offset(), m.payloadAsString(), m.timestampMillis(), attempt, epoch);
        }
    }

    /**
     * Answer to a long poll.
     *
     * @param status   {@code MESSAGES}, {@code EMPTY} (pull-once found nothing) or {@code TIMED_OUT}
     * @param epoch    the delivery epoch: send it back with the ack ({@code {"epoch": .., "offsets": ..}})
     * @param skipped  messages the store had dropped (retention) before the group read them, passed over
     *                 by this answer: they will never be delivered to the group
     * @param messages the messages, empty unless {@code MESSAGES}
     */
    public record Pulled(PullResult.Status status, String epoch, long skipped, List<MessageView> messages) {

        /**
         * @param r a pull result
         * @return its view
         */
        public static Pulled of(PullResult r) {
            return new Pulled(r.status(), r.epoch(), r.skipped(),
                    IntStream.range(0, r.messages().size()).mapToObj(i -> MessageView.of(r, i)).toList());
        }
    }

    /**
     * Answer to an ack.
     *
     * @param committedOffset every message of the group before this offset is acknowledged
     */
    public record Acked(long committedOffset) {
    }
}
