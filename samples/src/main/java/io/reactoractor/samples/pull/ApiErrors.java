package io.reactoractor.samples.pull;

import java.util.concurrent.RejectedExecutionException;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.netty.handler.timeout.ReadTimeoutException;
import io.reactoractor.pull.GroupLimitExceededException;
import io.reactoractor.pull.MessageStoreException;
import io.reactoractor.pull.OffsetLimitExceededException;
import io.reactoractor.pull.StaleDeliveryException;
import io.reactoractor.pull.SubjectLimitExceededException;
import io.reactoractor.pull.WaitingPullsLimitExceededException;
import io.reactoractor.pull.redis.RedisGroupLimitExceededException;
import reactor.core.publisher.Mono;
import reactor.netty.channel.AbortedException;
import io.netty.channel.ChannelException;
import reactor.util.Logger;
import reactor.util.Loggers;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebInputException;

/**
 * Maps failures to JSON answers: bad input is a 400 naming the parameter, never a 500; a consumer that
 * is disposed (the end of a shutdown) or holds too many waiting polls is a 503. (Earlier in a shutdown the
 * consumer quiesces: waiting polls are answered {@code 200 TIMED_OUT}, not by this class.)
 */
@RestControllerAdvice
public class ApiErrors {

    /**
     * The body of every error answer of this app.
     *
     * @param status    the HTTP status code
     * @param error     its reason phrase
     * @param parameter the offending parameter, or {@code null} when the error is not about one
     * @param message   what went wrong
     * @param limit     the setting whose limit was reached (e.g. {@code reactor.actor.pull.max-groups}), absent otherwise
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ErrorBody(int status, String error, String parameter, String message, String limit) {

        /**
         * @param status    the HTTP status code
         * @param error     its reason phrase
         * @param parameter the offending parameter, or {@code null}
         * @param message   what went wrong
         */
        public ErrorBody(int status, String error, String parameter, String message) {
            this(status, error, parameter, message, null);
        }
    }

    private static final Logger LOG = Loggers.getLogger(ApiErrors.class);

    /** The property that bounds subjects in the store in use: the Redis store's, or the in-memory one's. */
    private final String subjectLimit;

    /**
     * @param properties {@code pull.*}: which store is in use
     */
    public ApiErrors(PullServerProperties properties) {
        this.subjectLimit = "redis".equals(properties.store()) ? "pull.redis.max-subjects"
                : "reactor.actor.pull.max-subjects";
    }

    /**
     * A new (subject, group) while {@code reactor.actor.pull.max-groups} pairs are live: nothing was created. Idle
     * pairs retire after {@code reactor.actor.pull.idle-timeout}, so the client may retry later.
     *
     * @param e the exception
     * @return 503 with {@code Retry-After} and the limit's name
     */
    @ExceptionHandler(GroupLimitExceededException.class)
    ResponseEntity<ErrorBody> tooManyGroups(GroupLimitExceededException e) {
        HttpStatus status = HttpStatus.SERVICE_UNAVAILABLE;
        return json(status).header(HttpHeaders.RETRY_AFTER, "60")
                .body(new ErrorBody(status.value(), status.getReasonPhrase(), null, e.getMessage(), "reactor.actor.pull.max-groups"));
    }

    /**
     * A long poll of a group that holds {@code reactor.actor.pull.max-waiting-pulls} waiting polls: refused, nothing
     * delivered. Waiting polls end when messages come or at their timeout, so the client may retry soon.
     *
     * @param e the exception
     * @return 503 with {@code Retry-After} and the limit's name
     */
    @ExceptionHandler(WaitingPullsLimitExceededException.class)
    ResponseEntity<ErrorBody> tooManyWaitingPulls(WaitingPullsLimitExceededException e) {
        HttpStatus status = HttpStatus.SERVICE_UNAVAILABLE;
        return json(status).header(HttpHeaders.RETRY_AFTER, "1").body(new ErrorBody(status.value(),
                status.getReasonPhrase(), null, e.getMessage(), "reactor.actor.pull.max-waiting-pulls"));
    }

    /**
     * A new subject while the in-memory store holds {@code reactor.actor.pull.max-subjects} subjects, all
     * with messages (or the Redis store has streams for {@code pull.redis.max-subjects}): nothing was
     * created. Not transient (messages are only dropped by retention), so no {@code Retry-After}.
     *
     * @param e the exception
     * @return 503 with the limit's name
     */
    @ExceptionHandler(SubjectLimitExceededException.class)
    ResponseEntity<ErrorBody> tooManySubjects(SubjectLimitExceededException e) {
        HttpStatus status = HttpStatus.SERVICE_UNAVAILABLE;
        return json(status)
                .body(new ErrorBody(status.value(), status.getReasonPhrase(), null, e.getMessage(), subjectLimit));
    }

    /**
     * A commit for a new (subject, group) while the in-memory store holds
     * {@code reactor.actor.pull.max-committed-offsets} offsets, all used within
     * {@code reactor.actor.pull.offset-retention}: the acknowledgement is settled in the group (its messages
     * are not delivered again while the group lives) but not recorded in the store, which a later commit of
     * the group does once room is made. Also reached as the cause of a poll's {@link MessageStoreException}.
     *
     * @param e the exception
     * @return 503 with the limit's name
     */
    @ExceptionHandler(OffsetLimitExceededException.class)
    ResponseEntity<ErrorBody> tooManyOffsets(OffsetLimitExceededException e) {
        HttpStatus status = HttpStatus.SERVICE_UNAVAILABLE;
        return json(status).body(new ErrorBody(status.value(), status.getReasonPhrase(), null,
                e.getMessage(), "reactor.actor.pull.max-committed-offsets"));
    }

    /**
     * An ack of a delivery from another epoch (before a restart): nothing was settled.
     *
     * @param e the exception
     * @return 409
     */
    @ExceptionHandler(StaleDeliveryException.class)
    ResponseEntity<ErrorBody> staleDelivery(StaleDeliveryException e) {
        return answer(HttpStatus.CONFLICT, "epoch", e.getMessage());
    }

    /**
     * The client went away or stopped sending in the middle of its request (an aborted upload, a reset
     * connection, a read or request timeout that closed the connection: Reactor Netty's
     * {@code RequestTimeoutException} is a package-private {@code ChannelException}): there is nobody to answer, and it is the
     * client's doing, so it is logged at debug level, without a stack trace, and not as a 500.
     *
     * @param e the exception
     * @return nothing: the connection is closed
     */
    @ExceptionHandler({AbortedException.class, ReadTimeoutException.class, ChannelException.class,
            java.io.IOException.class})
    Mono<Void> clientGone(Exception e) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("request abandoned by the client: " + e);
        }
        return Mono.empty();
    }

    /**
     * @param e a bad parameter
     * @return 400 naming it
     */
    @ExceptionHandler(BadParameterException.class)
    ResponseEntity<ErrorBody> badParameter(BadParameterException e) {
        return answer(HttpStatus.BAD_REQUEST, e.parameter(), e.getMessage());
    }

    /**
     * Input Spring itself rejected before the controller ran (e.g. an unreadable body).
     *
     * @param e the exception
     * @return 400
     */
    @ExceptionHandler(ServerWebInputException.class)
    ResponseEntity<ErrorBody> badInput(ServerWebInputException e) {
        String parameter = e.getMethodParameter() != null ? e.getMethodParameter().getParameterName() : null;
        return ResponseEntity.status(e.getStatusCode()).contentType(MediaType.APPLICATION_JSON)
                .body(new ErrorBody(e.getStatusCode().value(), reason(e.getStatusCode().value()), parameter,
                        e.getReason()));
    }

    /**
     * A request body over {@code pull.max-body-size}.
     *
     * @param e the exception
     * @return 413
     */
    @ExceptionHandler(DataBufferLimitException.class)
    ResponseEntity<ErrorBody> tooLarge(DataBufferLimitException e) {
        return answer(HttpStatus.CONTENT_TOO_LARGE, "body", "body: " + e.getMessage());
    }

    /**
     * The pull consumer is disposed (shutting down: {@link RejectedExecutionException} at the call,
     * {@link IllegalStateException} for a waiting poll).
     *
     * @param e the exception
     * @return 503
     */
    @ExceptionHandler({RejectedExecutionException.class, IllegalStateException.class})
    ResponseEntity<ErrorBody> unavailable(RuntimeException e) {
        return answer(HttpStatus.SERVICE_UNAVAILABLE, null, e.getMessage());
    }

    /**
     * The message store failed (Redis down or too slow): nothing was appended or acknowledged for sure;
     * the client may retry.
     *
     * @param e the exception
     * @return 503
     */
    @ExceptionHandler(MessageStoreException.class)
    ResponseEntity<ErrorBody> storeUnavailable(MessageStoreException e) {
        for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
            if (c instanceof OffsetLimitExceededException limit) {
                return tooManyOffsets(limit);
            }
            if (c instanceof SubjectLimitExceededException limit) {
                return tooManySubjects(limit); // the Redis store's, through the consumer's append
            }
            if (c instanceof RedisGroupLimitExceededException limit) {
                // a new group on a Redis stream that has pull.redis.max-groups-per-subject; not transient
                HttpStatus status = HttpStatus.SERVICE_UNAVAILABLE;
                return json(status).body(new ErrorBody(status.value(), status.getReasonPhrase(),
                        null, limit.getMessage(), "pull.redis.max-groups-per-subject"));
            }
        }
        return answer(HttpStatus.SERVICE_UNAVAILABLE, null, e.getMessage());
    }

    /**
     * An error answer's start: JSON whatever the request accepts. Without the content type WebFlux picked
     * the endpoint's, and a stream request ({@code Accept: text/event-stream}) got its 400 wrapped as an SSE
     * {@code data:} event.
     */
    private static ResponseEntity.BodyBuilder json(HttpStatus status) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON);
    }

    private static ResponseEntity<ErrorBody> answer(HttpStatus status, String parameter, String message) {
        return json(status)
                .body(new ErrorBody(status.value(), status.getReasonPhrase(), parameter, message));
    }

    private static String reason(int status) {
        HttpStatus s = HttpStatus.resolve(status);
        return s != null ? s.getReasonPhrase() : String.valueOf(status);
    }
}
