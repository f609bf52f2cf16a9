package io.reactoractor.samples.pull;

import java.util.List;

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
     */
    public record MessageView(long offset, String payload, long timestamp) {

        /**
         * @param m a message
         * @return its view
         */
        public static MessageView of(Message m) {
            return new MessageView(m.offset(), m.payloadAsString(), m.timestampMillis());
        }
    }

    /**
     * Answer to a long poll.
     *
     * @param status   {@code MESSAGES}, {@code EMPTY} (pull-once found nothing) or {@code TIMED_OUT}
     * @param messages the messages, empty unless {@code MESSAGES}
     */
    public record Pulled(PullResult.Status status, List<MessageView> messages) {

        /**
         * @param r a pull result
         * @return its view
         */
        public static Pulled of(PullResult r) {
            return new Pulled(r.status(), r.messages().stream().map(MessageView::of).toList());
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
