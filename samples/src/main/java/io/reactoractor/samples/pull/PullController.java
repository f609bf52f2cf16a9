package io.reactoractor.samples.pull;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import io.reactoractor.pull.AckMode;
import io.reactoractor.pull.ConsumerOptions;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.samples.pull.HttpViews.Acked;
import io.reactoractor.samples.pull.HttpViews.Appended;
import io.reactoractor.samples.pull.HttpViews.MessageView;
import io.reactoractor.samples.pull.HttpViews.Pulled;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.ObjectMapper;

/**
 * The HTTP API of the pull consumer. No handler blocks: a long poll is a {@link Mono} answered by the
 * group's actor (no thread waits for it), the event stream is the consumer's {@link Flux}.
 *
 * <h2>Delivery guarantees</h2>
 * <ul>
 *   <li>{@code GET .../messages?ack=explicit} (default): at least once. Messages stay in flight until
 *       {@code POST .../ack} names their offsets; those not acknowledged within the ack timeout
 *       ({@code reactor.actor.pull.ack-timeout}, 30 s) are delivered again, to this or another poll of the group.
 *       A poll whose client went away before the answer was written is redelivered the same way.</li>
 *   <li>{@code GET .../messages?ack=auto}: at most once; messages count as acknowledged when the poll
 *       is answered.</li>
 *   <li>{@code GET .../stream} (default {@code ack=auto}): a message is acknowledged as soon as its
 *       event has been encoded and handed to the response, that is when it enters Reactor Netty's
 *       write pipeline ({@code sendGroups}: a queue of up to 32 events, then the channel's outbound
 *       buffer, then the socket). It is <em>not</em> a proof of receipt: if the connection breaks, the
 *       events still in that pipeline are lost (at most once for them). With
 *       {@code ?ack=explicit} the client acknowledges with {@code POST .../ack} (offsets are the event
 *       ids), unacknowledged messages are redelivered after the ack timeout or at once when the stream
 *       closes: at least once.</li>
 * </ul>
 * <b>Flow control of the stream.</b> Nothing is pulled without demand, and the demand comes from the
 * response: the write pipeline requests events while the channel is writable and stops when the
 * client stops reading (socket buffers full, Netty's outbound buffer above its high-water mark), so a
 * slow client holds back its own pulls, and only those (see the tests).
 *
 * <p><b>Threads.</b> A long poll's answer and a stream's events complete on the group actor's thread,
 * so encoding them and handing them to Netty runs there too: that CPU time counts toward the consumer
 * group's fair share (the {@code cpuShare} of {@code /status}), as serving its clients should.
 */
@RestController
public class PullController {

    private final PullConsumer consumer;
    private final PullServerProperties properties;
    private final ObjectMapper mapper;

    /**
     * @param consumer   the pull consumer
     * @param properties the settings
     * @param mapper     Boot's JSON mapper (Jackson 3), to parse ack bodies with our own error messages
     */
    public PullController(PullConsumer consumer, PullServerProperties properties, ObjectMapper mapper) {
        this.consumer = consumer;
        this.properties = properties;
        this.mapper = mapper;
    }

    /**
     * Appends the request body to the subject, as bytes, whatever its content type (so that
     * {@code curl --data} works: WebFlux would refuse a form-encoded {@code @RequestBody}).
     *
     * @param subject the subject (created on first use)
     * @param request the request (an absent body is an empty payload; over {@code pull.max-body-size}: 413)
     * @return 201 with the new message's offset
     */
    @PostMapping(path = "/subjects/{subject}/messages", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<ResponseEntity<Appended>> append(@PathVariable("subject") String subject,
            ServerHttpRequest request) {
        // appendAsync: the in-memory store answers at once, Redis once the XADD is answered (no thread waits)
        return body(request)
                .flatMap(payload -> RequestParams.validatedByLibrary(() -> consumer.appendAsync(subject, payload)))
                .map(offset -> ResponseEntity.status(HttpStatus.CREATED).body(new Appended(subject, offset)));
    }

    /**
     * Long poll: answers as soon as messages are available, or {@code TIMED_OUT} and empty at the
     * timeout; {@code timeoutMs=0} pulls once ({@code EMPTY} when nothing is there).
     *
     * @param subject   the subject
     * @param group     the consumer group
     * @param max       most messages (1 to the consumer's {@code reactor.actor.pull.max-messages-per-pull}, 1000;
     *                  default 100)
     * @param timeoutMs how long to wait, ms (0 to {@code pull.max-timeout}, default 30000)
     * @param ack       {@code explicit} (default: acknowledge with {@code POST .../ack}) or {@code auto}
     * @return the answer
     */
    @GetMapping(path = "/subjects/{subject}/groups/{group}/messages", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<Pulled> pull(@PathVariable("subject") String subject, @PathVariable("group") String group,
            @RequestParam(name = "max", required = false) String max,
            @RequestParam(name = "timeoutMs", required = false) String timeoutMs,
            @RequestParam(name = "ack", required = false) String ack) {
        int maxMessages = RequestParams.max(max, consumer.maxMessagesPerPull());
        Duration timeout = RequestParams.timeout(timeoutMs, properties.maxTimeout());
        boolean autoAck = RequestParams.autoAck(ack);
        return RequestParams.validatedByLibrary(() -> consumer.pull(subject, group, maxMessages, timeout, autoAck))
                .map(Pulled::of);
    }

    /**
     * {@code HEAD} of the long poll: refused ({@code 405}, {@code Allow: GET}). Served through the {@code GET}
     * (WebFlux's default for a {@code HEAD}) it pulled messages and threw the answer away: held until their ack
     * timeout with {@code ack=explicit}, lost with {@code ack=auto}, for every {@code curl -I} or link checker.
     *
     * @return 405
     */
    @RequestMapping(method = RequestMethod.HEAD, path = "/subjects/{subject}/groups/{group}/messages")
    public ResponseEntity<Void> headOfPull() {
        return ResponseEntity.status(HttpStatus.METHOD_NOT_ALLOWED).allow(HttpMethod.GET).build();
    }

    /**
     * Acknowledges messages of the group: {@code {"epoch": "<the poll answer's epoch>", "offsets": [3, 4,
     * 5]}}. Unknown or already acknowledged offsets are ignored. An epoch other than the store's current
     * one (the messages were delivered before a restart: their offsets may now name other messages) is
     * refused with 409 and settles nothing; pull again.
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param request the request, whose body is JSON (read whatever the content type says)
     * @return the group's committed offset afterwards
     */
    @PostMapping(path = "/subjects/{subject}/groups/{group}/ack", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<Acked> ack(@PathVariable("subject") String subject, @PathVariable("group") String group,
            ServerHttpRequest request) {
        return body(request).flatMap(body -> {
            // names first, then the body: each answer names the first bad parameter
            RequestParams.validatedByLibrary(() -> PullConsumer.requireValidSubject(subject));
            RequestParams.validatedByLibrary(() -> PullConsumer.requireValidGroup(group));
            List<Long> offsets = RequestParams.ackOffsets(body, mapper);
            String epoch = RequestParams.ackEpoch(body, mapper);
            return RequestParams.validatedByLibrary(() -> consumer.ack(subject, group, epoch, offsets));
        }).map(Acked::new);
    }

    /**
     * Server-sent events: one {@code message} event per message (id = offset, data = the message as
     * JSON), pulled as the response asks for more (see the class comment for flow control and
     * guarantees).
     *
     * @param subject the subject
     * @param group   the consumer group
     * @param ack     {@code auto} (default: acknowledged when handed to the response) or {@code explicit}
     * @return the endless event stream
     */
    @GetMapping(path = "/subjects/{subject}/groups/{group}/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public Flux<ServerSentEvent<MessageView>> stream(@PathVariable("subject") String subject,
            @PathVariable("group") String group, @RequestParam(name = "ack", required = false) String ack) {
        // the default differs from the long poll's: a stream client usually has no ack channel
        boolean explicit = ack != null && !RequestParams.autoAck(ack);
        String epoch = consumer.asyncStore().epoch();
        ConsumerOptions options = ConsumerOptions.builder()
                .ackMode(explicit ? AckMode.EXPLICIT : AckMode.AFTER_ON_NEXT)
                .build();
        // no operator that buffers (merge, publishOn, ...) between the consumer and the response:
        // AFTER_ON_NEXT acknowledges when onNext returns, which must mean "handed to the response"
        if (consumer.isDisposed() || consumer.isQuiescing()) {
            // nothing sent yet: a 503 (ApiErrors), as the other calls answer; an empty 200 (what a quiescing
            // consumer's stream is) made an SSE client reconnect at once, again and again
            return Flux.error(new RejectedExecutionException(
                    consumer.isDisposed() ? "pull consumer disposed" : "pull consumer shutting down"));
        }
        return RequestParams.validatedByLibrary(() -> consumer.consume(subject, group, options))
                .map(d -> ServerSentEvent.builder(MessageView.of(d, epoch))
                        .id(Long.toString(d.message().offset()))
                        .event("message")
                        .build())
                // disposed while the stream is open: end it cleanly (an SSE client reconnects, and gets the
                // 503 above), rather than an error that can no longer become an error answer once the
                // response has started
                .onErrorResume(e -> consumer.isDisposed(), e -> Flux.empty());
    }

    /** The whole body as bytes, at most {@code pull.max-body-size} (more: {@code DataBufferLimitException}). */
    private Mono<byte[]> body(ServerHttpRequest request) {
        return DataBufferUtils.join(request.getBody(), (int) properties.maxBodySize().toBytes())
                .map(buffer -> {
                    try {
                        byte[] bytes = new byte[buffer.readableByteCount()];
                        buffer.read(bytes);
                        return bytes;
                    } finally {
                        DataBufferUtils.release(buffer);
                    }
                })
                .defaultIfEmpty(new byte[0]);
    }

    /**
     * A snapshot of the scheduler, the consumer groups' CPU shares and the (subject, group) pairs with
     * the largest lag. Bounded (at most {@code pull.status-limit} pairs, fewer with {@code ?limit=}) and
     * computed on a bounded-elastic thread, never on an event loop: with thousands of pairs it costs
     * milliseconds that other clients' requests must not wait for.
     *
     * @param limit how many pairs at most (1 to {@code pull.status-limit}, default: that limit)
     * @return the report
     */
    @GetMapping(path = "/status", produces = MediaType.APPLICATION_JSON_VALUE)
    public Mono<StatusReport> status(@RequestParam(name = "limit", required = false) String limit) {
        int n = RequestParams.limit(limit, properties.statusLimit());
        return Mono.fromCallable(() -> StatusReport.of(consumer, n)).subscribeOn(Schedulers.boundedElastic());
    }
}
