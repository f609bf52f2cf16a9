package io.reactoractor.samples.pull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Parsing and validation of the HTTP parameters. Query parameters arrive as strings and are parsed
 * here rather than by Spring's conversion, so that every bad value gets the same 400 answer naming the
 * parameter, whatever went wrong (not a number, out of range, malformed JSON).
 */
final class RequestParams {

    /** Default {@code max} of a long poll. */
    static final int DEFAULT_MAX = 100;
    /** Default {@code timeoutMs} of a long poll. */
    static final long DEFAULT_TIMEOUT_MS = 30_000;
    /** Most offsets one ack request may carry. */
    static final int MAX_ACK_OFFSETS = 10_000;

    private RequestParams() {
    }

    /**
     * @param raw        the query value, or {@code null} when absent
     * @param maxAllowed the consumer's {@code maxMessagesPerPull}
     * @return the parsed {@code max}, {@value #DEFAULT_MAX} when absent
     */
    static int max(String raw, int maxAllowed) {
        if (raw == null) {
            return Math.min(DEFAULT_MAX, maxAllowed);
        }
        long v = parseLong("max", raw, "an integer between 1 and " + maxAllowed);
        if (v < 1 || v > maxAllowed) {
            throw new BadParameterException("max", "max must be between 1 and " + maxAllowed + " but was " + v);
        }
        return (int) v;
    }

    /**
     * @param raw        the {@code limit} query value of {@code /status}, or {@code null} when absent
     * @param maxAllowed {@code pull.status-limit}
     * @return the limit ({@code maxAllowed} when absent)
     */
    static int limit(String raw, int maxAllowed) {
        if (raw == null) {
            return maxAllowed;
        }
        long v = parseLong("limit", raw, "an integer between 1 and " + maxAllowed);
        if (v < 1 || v > maxAllowed) {
            throw new BadParameterException("limit", "limit must be between 1 and " + maxAllowed + " but was " + v);
        }
        return (int) v;
    }

    /**
     * @param raw        the query value, or {@code null} when absent
     * @param maxTimeout the longest allowed
     * @return the timeout ({@value #DEFAULT_TIMEOUT_MS} ms, capped to {@code maxTimeout}, when absent)
     */
    static Duration timeout(String raw, Duration maxTimeout) {
        long maxMs = maxTimeout.toMillis();
        if (raw == null) {
            return Duration.ofMillis(Math.min(DEFAULT_TIMEOUT_MS, maxMs));
        }
        long v = parseLong("timeoutMs", raw, "an integer number of milliseconds between 0 and " + maxMs);
        if (v < 0 || v > maxMs) {
            throw new BadParameterException("timeoutMs", "timeoutMs must be between 0 and " + maxMs
                    + " (milliseconds) but was " + v);
        }
        return Duration.ofMillis(v);
    }

    /**
     * @param raw the query value, or {@code null} when absent
     * @return {@code true} for {@code auto} (acknowledged when delivered), {@code false} for
     *         {@code explicit} (the default)
     */
    static boolean autoAck(String raw) {
        if (raw == null) {
            return false;
        }
        return switch (raw.toLowerCase(Locale.ROOT)) {
            case "explicit" -> false;
            case "auto" -> true;
            default -> throw new BadParameterException("ack", "ack must be 'explicit' or 'auto' but was '"
                    + abbreviate(raw) + "'");
        };
    }

    /**
     * Parses {@code {"offsets": [0, 1, ...]}}.
     *
     * @param body   the request body (may be {@code null} or empty)
     * @param mapper the JSON mapper
     * @return the offsets, each ≥ 0
     */
    static List<Long> ackOffsets(byte[] body, ObjectMapper mapper) {
        if (body == null || body.length == 0) {
            throw new BadParameterException("offsets", "offsets: the body must be {\"offsets\": [..]} but was empty");
        }
        JsonNode root;
        try {
            root = mapper.readTree(body);
        } catch (JacksonException e) {
            throw new BadParameterException("offsets", "offsets: the body is not valid JSON: "
                    + abbreviate(e.getOriginalMessage()));
        }
        if (root == null || !root.isObject()) {
            throw new BadParameterException("offsets", "offsets: the body must be a JSON object {\"offsets\": [..]}");
        }
        JsonNode offsets = root.get("offsets");
        if (offsets == null || !offsets.isArray()) {
            throw new BadParameterException("offsets", "offsets must be a JSON array of offsets");
        }
        if (offsets.size() > MAX_ACK_OFFSETS) {
            throw new BadParameterException("offsets", "offsets must hold at most " + MAX_ACK_OFFSETS
                    + " offsets but holds " + offsets.size());
        }
        List<Long> out = new ArrayList<>(offsets.size());
        for (int i = 0; i < offsets.size(); i++) {
            JsonNode n = offsets.get(i);
            // canConvertToLong() rejects integers beyond long; isIntegralNumber() rejects 1.5 and "1"
            if (!n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < 0) {
                throw new BadParameterException("offsets", "offsets[" + i + "] must be an integer >= 0 but was "
                        + abbreviate(n.toString()));
            }
            out.add(n.asLong());
        }
        return out;
    }

    /**
     * The delivery epoch of an ack body {@code {"epoch": "...", "offsets": [..]}} (the {@code epoch} of
     * the poll answer that delivered the messages). Required: offsets alone could name other messages
     * after a restart of the in-memory store. Check {@link #ackOffsets} first, so a malformed body is
     * reported for its offsets.
     *
     * @param body   the request body
     * @param mapper the JSON mapper
     * @return the epoch
     * @throws BadParameterException naming {@code epoch} when it is missing, not a string, empty or
     *                               longer than 128 characters
     */
    static String ackEpoch(byte[] body, ObjectMapper mapper) {
        JsonNode epoch = mapper.readTree(body).get("epoch");
        if (epoch == null || !epoch.isString() || epoch.asString().isEmpty() || epoch.asString().length() > 128) {
            throw new BadParameterException("epoch", "epoch must be the non-empty string of the poll answer that "
                    + "delivered the messages (1 to 128 characters) but was " + (epoch == null ? "missing"
                    : abbreviate(epoch.toString())));
        }
        return epoch.asString();
    }

    /**
     * Runs a library call whose arguments the library validates itself (subject and group names: the
     * rule lives in the library, which does not expose it), turning its
     * {@link IllegalArgumentException} into a 400 naming the parameter. The library's messages start
     * with the argument's name ({@code "subject ..."}, {@code "group ..."}); the tests pin that.
     *
     * @param call the library call
     * @param <T>  its result
     * @return its result
     */
    static <T> T validatedByLibrary(Supplier<T> call) {
        try {
            return call.get();
        } catch (IllegalArgumentException e) {
            String message = String.valueOf(e.getMessage());
            String parameter = message.startsWith("subject") ? "subject"
                    : message.startsWith("group") ? "group" : null;
            if (parameter == null) {
                throw e; // not a name: a bug of this app, reported as such (500)
            }
            throw new BadParameterException(parameter, message);
        }
    }

    private static long parseLong(String parameter, String raw, String expected) {
        try {
            return Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw new BadParameterException(parameter, parameter + " must be " + expected + " but was '"
                    + abbreviate(raw) + "'");
        }
    }

    /** Keeps echoed client input short in answers and logs. */
    static String abbreviate(String s) {
        if (s == null) {
            return "null";
        }
        return s.length() <= 64 ? s : s.substring(0, 61) + "...";
    }
}
