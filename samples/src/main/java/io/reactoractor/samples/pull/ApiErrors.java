package io.reactoractor.samples.pull;

import java.util.concurrent.RejectedExecutionException;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebInputException;

/**
 * Maps failures to JSON answers: bad input is a 400 naming the parameter, never a 500; a consumer that
 * is shutting down or holds too many waiting polls is a 503.
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
     */
    public record ErrorBody(int status, String error, String parameter, String message) {
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
        return ResponseEntity.status(e.getStatusCode())
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
     * {@link IllegalStateException} for a waiting poll) or a group already holds the maximum of waiting
     * polls ({@link IllegalStateException}).
     *
     * @param e the exception
     * @return 503
     */
    @ExceptionHandler({RejectedExecutionException.class, IllegalStateException.class})
    ResponseEntity<ErrorBody> unavailable(RuntimeException e) {
        return answer(HttpStatus.SERVICE_UNAVAILABLE, null, e.getMessage());
    }

    private static ResponseEntity<ErrorBody> answer(HttpStatus status, String parameter, String message) {
        return ResponseEntity.status(status)
                .body(new ErrorBody(status.value(), status.getReasonPhrase(), parameter, message));
    }

    private static String reason(int status) {
        HttpStatus s = HttpStatus.resolve(status);
        return s != null ? s.getReasonPhrase() : String.valueOf(status);
    }
}
