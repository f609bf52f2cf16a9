package io.reactoractor.pull.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.reactoractor.pull.AsyncMessageStore;
import io.reactoractor.pull.FailurePolicy;
import io.reactoractor.pull.Message;
import io.reactoractor.pull.MessageStore;
import io.reactoractor.pull.SubjectLimitExceededException;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The pull consumer's store on Redis Streams, through Lettuce's reactive API: several application
 * instances share subjects and consumer groups, and a message survives the instance that appended or
 * took it.
 *
 * <h2>Mapping</h2>
 * <table>
 *   <caption>What lives where in Redis</caption>
 *   <tr><th>pull consumer</th><th>Redis</th></tr>
 *   <tr><td>subject {@code s}</td><td>the stream at key {@code <keyPrefix>s}; each message an entry
 *       {@code p -> payload}; created by the first append, never by a fetch</td></tr>
 *   <tr><td>subjects</td><td>the set {@code <keyPrefix>#subjects} of their names, checked and filled by the
 *       append script: a stream is created for at most {@link Builder#maxSubjects} subjects (dead-letter streams
 *       excepted: never refused and not counted; streams that existed before the set join it, past the bound); this
 *       store refuses a subject or group name that is empty or contains {@code '#'}
 *       ({@code IllegalArgumentException}, as the pull consumer does), so the set never collides with a stream</td></tr>
 *   <tr><td>consumer group {@code g}</td><td>the stream's consumer group {@code g}, created at
 *       {@code 0-0} (a new group starts at the oldest entry held) on its first fetch once the stream exists
 *       (a fetch never creates a stream: one of a subject nobody appended to answers empty and leaves
 *       nothing behind); at most {@link Builder#maxGroupsPerSubject} groups per stream; when the stream is full,
 *       the group nobody read for longest, if for at least {@link Builder#groupRetention}, is destroyed to make
 *       room for a new one</td></tr>
 *   <tr><td>this process</td><td>the consumer {@link Builder#consumerName} of every group; consumers
 *       holding nothing and idle past {@link Builder#consumerExpiry} are removed when a process
 *       reclaims (each check and removal in one script: a consumer handed entries meanwhile keeps them)</td></tr>
 *   <tr><td>fetch / acknowledge</td><td>{@code XREADGROUP ... >} / {@code XACK}; a caller's first fetch
 *       reads this consumer's own pending entries first ({@code XREADGROUP ... 0}: what a previous run
 *       under the same name left unacknowledged); later fetches may be pipelined
 *       ({@link #pipelinedFetches()}: the pull consumer keeps up to 4 {@code XREADGROUP}s of at most 512
 *       entries outstanding on the command connection)</td></tr>
 *   <tr><td>in flight</td><td>the group's pending entries list (PEL)</td></tr>
 *   <tr><td>reclaim (ack timeout, dead instance)</td><td>{@code XAUTOCLAIM} with the ack timeout as the
 *       minimum idle time; a redelivery by this process restarts the idle time ({@code XCLAIM ... JUSTID},
 *       {@link #renew}); after its own ack timeout it redelivers only the entries that claim finds still
 *       pending ({@link #renewPending}): an ack that reached another instance settles a message for good</td></tr>
 *   <tr><td>dead letters of {@code g}</td><td>the stream of subject {@code dlq.g}, then {@code XACK}</td></tr>
 *   <tr><td>retention</td><td>{@code XADD ... MAXLEN ~ n}</td></tr>
 *   <tr><td>append wake-ups</td><td>{@code PUBLISH <keyPrefix>appends "subject\nid"} in the same script as
 *       the {@code XADD}; every instance holds one Pub/Sub connection subscribed to it</td></tr>
 * </table>
 *
 * <h2>Offsets</h2>
 * A stream entry ID {@code ms-seq} (milliseconds, sequence within the millisecond) is the offset
 * {@code ms * 2^20 + seq} ({@link #offset(String)}, {@link #streamId(long)}): IDs increase, so offsets
 * do, across instances and restarts; an offset tells its append time ({@code offset >>> 20} ms since
 * the epoch). Offsets have gaps ({@link #denseOffsets()} is false): the distance between two offsets
 * is not a message count. A sequence number of 2^20 or more within one millisecond (not reached by one
 * Redis) fails the call; milliseconds up to 2^43 (the year 2248) fit.
 *
 * <h2>Failures</h2>
 * Commands fail at once while the connection is down ({@code REJECT_COMMANDS}) and after
 * {@link Builder#commandTimeout} otherwise; Lettuce reconnects by itself, and re-subscribes the Pub/Sub
 * connection. A lost wake-up costs latency, not messages: a pull asks Redis unless a fetch issued
 * within the last millisecond covers it, and once the Pub/Sub connection is subscribed again (and the command
 * connection is up) the listeners are told that appends may have been missed
 * ({@link MessageStore.AppendListener#appendsMissed}), so the long polls that waited across the outage ask
 * Redis again rather than wait out their timeouts; a pull arriving while the command connection is down fails at
 * once ({@link #connected()}).
 * {@link #append} completes only once Redis answered the {@code XADD}.
 *
 * <pre>{@code
 * RedisStreamsMessageStore store = RedisStreamsMessageStore.builder()
 *         .uri("redis://localhost:6379").keyPrefix("orders:").consumerName("instance-1").build();
 * PullConsumer consumer = PullConsumer.builder(scheduler).asyncStore(store).build();
 * }</pre>
 */
public final class RedisStreamsMessageStore implements AsyncMessageStore, Disposable, AutoCloseable {

    private static final Logger LOG = Loggers.getLogger(RedisStreamsMessageStore.class);

    /** The stream field holding a message's payload. */
    public static final String PAYLOAD_FIELD = "p";
    /** Default key prefix. */
    public static final String DEFAULT_KEY_PREFIX = "reactor-actor:";
    /** Default retention: entries kept per stream (approximately, {@code MAXLEN ~}). */
    public static final long DEFAULT_MAX_LEN = 1_000_000;
    /** Default idle time after which a consumer holding nothing is removed from its group. */
    public static final Duration DEFAULT_CONSUMER_EXPIRY = Duration.ofHours(1);
    /** Default timeout of one Redis command. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);
    /** Default bound on the consumer groups of one subject ({@link Builder#maxGroupsPerSubject}). */
    public static final int DEFAULT_MAX_GROUPS_PER_SUBJECT = 1_000;
    /**
     * Default time nobody must have read a group before it may make room for another
     * ({@link Builder#groupRetention}).
     */
    public static final Duration DEFAULT_GROUP_RETENTION = Duration.ofDays(7);
    /** Default bound on the number of subjects ({@link Builder#maxSubjects}). */
    public static final int DEFAULT_MAX_SUBJECTS = 100_000;
    /**
     * Registry names looked at, per sweep, for streams deleted since they were registered
     * ({@link #forgetDeletedSubjects}).
     */
    static final int REGISTRY_SWEEP = 64;
    /**
     * Least time between two sweeps of the registry by one store ({@link #forgetDeletedSubjects}), and between two
     * walks of one full stream's groups ({@link #CREATE_GROUP_SCRIPT}), by default.
     */
    static final long REGISTRY_SWEEP_INTERVAL_NANOS = 1_000_000_000L;
    /** {@code ARGV[5]} of the append script for dead letters: their streams are never refused. */
    private static final byte[] NO_SUBJECT_LIMIT = Long.toString(Long.MAX_VALUE).getBytes(StandardCharsets.US_ASCII);
    /** {@code APPEND_SCRIPT}'s {@code ARGV[6]}: the subject counts in the registry (every append but dead letters). */
    private static final byte[] REGISTER = {'1'};
    /** {@code APPEND_SCRIPT}'s {@code ARGV[6]} for dead letters: not registered, so they take no subject's room. */
    private static final byte[] UNREGISTERED = {'0'};

    private static final int SEQ_BITS = 20;
    private static final long SEQ_MASK = (1L << SEQ_BITS) - 1;
    private static final long MAX_MILLIS = (1L << (63 - SEQ_BITS)) - 1;
    /** {@link #position}: undelivered entries counted at most (Redis 6 has no group lag of its own). */
    static final int LAG_SCAN_LIMIT = 10_000;

    /**
     * XADD (with approximate trimming) and the wake-up PUBLISH, in one round trip and atomically. A subject
     * new to the registry {@code KEYS[2]} is refused ({@code SUBJECTLIMIT}) if its stream does not exist and
     * the registry holds {@code ARGV[5]} names, else added to it after the XADD (a key that is not a stream
     * fails the XADD and is not registered). A stream that exists is never refused: one created before the
     * registry, or by an instance of an older version, joins it here, past the bound if it is full.
     * Dead letters ({@code ARGV[6] == '0'}) are neither refused nor registered: they take no subject's room.
     */
    private static final String APPEND_SCRIPT = """
            local register = ARGV[6] == '1'
            local known = (not register) or redis.call('SISMEMBER', KEYS[2], ARGV[4]) == 1
            if not known and redis.call('EXISTS', KEYS[1]) == 0
                and redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[5]) then
              return redis.error_reply('SUBJECTLIMIT the store holds ' .. ARGV[5] .. ' subjects')
            end
            local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'p', ARGV[2])
            if not known then redis.call('SADD', KEYS[2], ARGV[4]) end
            redis.call('PUBLISH', ARGV[3], ARGV[4] .. '\\n' .. id)
            return id
            """;

    /**
     * Removes from the registry {@code KEYS[1]} each name {@code ARGV[i]} whose stream {@code KEYS[i + 1]} does
     * not exist, atomically (an append that creates one of these streams meanwhile runs before or after, never
     * between its check and its removal). Returns how many were removed.
     */
    private static final String FORGET_SCRIPT = """
            local removed = 0
            for i = 1, #ARGV do
              if redis.call('EXISTS', KEYS[i + 1]) == 0 then
                removed = removed + redis.call('SREM', KEYS[1], ARGV[i])
              end
            end
            return removed
            """;
    private static final String FORGET_SHA = sha1(FORGET_SCRIPT);

    /**
     * Removes the consumers of group {@code ARGV[1]} on stream {@code KEYS[1]} that hold no pending entry and were
     * idle more than {@code ARGV[2]} ms, except {@code ARGV[3]} (this process), each check and removal atomic:
     * Redis drops a deleted consumer's pending entries with it, so a consumer that took entries between a
     * separate {@code XINFO CONSUMERS} and its {@code XGROUP DELCONSUMER} lost them from the pending list (never
     * acknowledged, never reclaimed). An {@code XREADGROUP} now runs before the script (the consumer holds
     * entries: kept) or after it (the read creates the consumer again). Returns how many were removed.
     */
    private static final String EXPIRE_CONSUMERS_SCRIPT = """
            local removed = 0
            local expiry = tonumber(ARGV[2])
            for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
              local name, pending, idle = nil, nil, nil
              for i = 1, #c - 1, 2 do
                if c[i] == 'name' then name = c[i + 1]
                elseif c[i] == 'pending' then pending = c[i + 1]
                elseif c[i] == 'idle' then idle = c[i + 1] end
              end
              if name ~= nil and name ~= ARGV[3] and pending == 0 and idle ~= nil and idle > expiry then
                redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
                removed = removed + 1
              end
            end
            return removed
            """;
    private static final String EXPIRE_CONSUMERS_SHA = sha1(EXPIRE_CONSUMERS_SCRIPT);
    private static final String APPEND_SHA = sha1(APPEND_SCRIPT);

    /**
     * Creates consumer group {@code ARGV[1]} at {@code 0-0} on stream {@code KEYS[1]}, atomically with its two
     * checks: the stream exists (a fetch never creates one: {@code {0, false}}, nothing to read yet) and has fewer
     * than {@code ARGV[2]} groups, unless the group is one of them. The group count comes from
     * {@code XINFO STREAM}, and a full stream looks up only the one group ({@code XINFO CONSUMERS}).
     *
     * <p>On a full stream the groups are walked for one nobody has read for {@code ARGV[3]} ms, and the one unread
     * longest is destroyed to make room: one group per new group, never more. At most one walk per stream per
     * {@code ARGV[4]} ms (the key {@code KEYS[2]}, set with {@code NX PX} by the walk, across every instance; 0:
     * no limit): a client naming new groups on a full stream costs a refused script call each, not a walk.
     * "Nobody has read it": the group has consumers, all idle for that long, and, before Redis 7.2, an entry
     * appended after its last delivery that is at least that old. Redis 6.2 and 7.0 leave a consumer's idle time
     * alone on an {@code XREADGROUP} that finds nothing new, so a group polling a quiet stream looks idle there;
     * a group still polled would have read that entry. From 7.2 (its consumers report {@code inactive}) every
     * read attempt refreshes the idle time, so the idle time alone is the evidence. A group without consumers is
     * kept (created by someone else, or an instant before its first fetch). Returns {@code {status, destroyed}}:
     * status {@code 1} created or there already, {@code -1} refused; {@code destroyed} the group destroyed to
     * make room, or nil.
     */
    private static final String CREATE_GROUP_SCRIPT = """
            if redis.call('EXISTS', KEYS[1]) == 0 then return {0, false} end
            local info = redis.call('XINFO', 'STREAM', KEYS[1])
            local groups = 0
            for i = 1, #info - 1, 2 do
              if info[i] == 'groups' then groups = info[i + 1] end
            end
            local victim = false
            if groups >= tonumber(ARGV[2]) then
              local r = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
              if not (type(r) == 'table' and r['err']) then return {1, false} end
              local interval = tonumber(ARGV[4])
              if interval > 0 and not redis.call('SET', KEYS[2], '1', 'NX', 'PX', interval) then
                return {-1, false}
              end
              local retention = tonumber(ARGV[3])
              local time = redis.call('TIME')
              local before = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) - retention
              local longest = -1
              for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
                local name, consumers, last = nil, 0, '0-0'
                for i = 1, #g - 1, 2 do
                  if g[i] == 'name' then name = g[i + 1]
                  elseif g[i] == 'consumers' then consumers = g[i + 1]
                  elseif g[i] == 'last-delivered-id' then last = g[i + 1] end
                end
                if consumers > 0 then
                  local least, refreshed = nil, false
                  for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], name)) do
                    for i = 1, #c - 1, 2 do
                      if c[i] == 'idle' and (least == nil or c[i + 1] < least) then least = c[i + 1]
                      elseif c[i] == 'inactive' then refreshed = true end
                    end
                  end
                  if least ~= nil and least >= retention and least > longest then
                    local unread = refreshed
                    if not unread then
                      local after = redis.call('XRANGE', KEYS[1], '(' .. last, '+', 'COUNT', 1)
                      unread = #after > 0 and tonumber(string.match(after[1][1], '^%d+')) <= before
                    end
                    if unread then victim, longest = name, least end
                  end
                end
              end
              if not victim then return {-1, false} end
              redis.call('XGROUP', 'DESTROY', KEYS[1], victim)
            end
            local r = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0-0')
            if type(r) == 'table' and r['err'] and string.sub(r['err'], 1, 9) ~= 'BUSYGROUP' then
              return redis.error_reply(r['err'])
            end
            return {1, victim}
            """;
    private static final String CREATE_GROUP_SHA = sha1(CREATE_GROUP_SCRIPT);

    private final RedisClient client;
    private final boolean ownsClient;
    private final StatefulRedisConnection<String, byte[]> connection;
    /**
     * The command connection's asynchronous API. Not the reactive one: Lettuce's reactive commands stream a
     * multi-element reply (an {@code XREADGROUP}'s entries) with backpressure, turning the connection's
     * auto-read off while decoded elements wait for their subscriber, and a race between that and a
     * subscriber taking them on another thread can leave auto-read off: every later reply on the connection
     * (appends, acknowledgements, other groups' fetches) then waits unread until a command times out. Seen
     * under CPU load as appends taking the whole command timeout; see {@link #call}.
     */
    private final RedisAsyncCommands<String, byte[]> commands;
    private final StatefulRedisPubSubConnection<String, String> pubSub;
    private final String keyPrefix;
    private final String channel;
    private final String consumerName;
    private final long maxLen;
    /**
     * {@code ARGV[2]} of {@link #EXPIRE_CONSUMERS_SCRIPT} ({@link Builder#consumerExpiry} in ms, saturated) and
     * {@code ARGV[3]} (this process's consumer name).
     */
    private final byte[] consumerExpiryArg;
    private final byte[] consumerNameArg;
    private final int maxGroupsPerSubject;
    private final byte[] maxGroupsArg;
    private final Duration groupRetention;
    private final byte[] groupRetentionArg;
    /** {@code ARGV[4]} of {@link #CREATE_GROUP_SCRIPT}: the least time between two walks of one stream's groups. */
    private final byte[] groupWalkIntervalArg;
    private final int maxSubjects;
    private final byte[] maxSubjectsArg;
    /** The set of subject names ({@link #registryKey()}). */
    private final String registryKey;
    /** Where the next sweep of the registry continues ({@code SSCAN} cursor; "0": from the start). */
    private final AtomicReference<String> sweepCursor = new AtomicReference<>("0");
    /** When the next sweep may run ({@code System.nanoTime()}). */
    private final AtomicLong nextSweepAt = new AtomicLong(System.nanoTime());
    private final long sweepIntervalNanos;
    private final byte[] maxLenArg;
    private final byte[] channelArg;
    private final CopyOnWriteArrayList<MessageStore.AppendListener> listeners = new CopyOnWriteArrayList<>();
    /** Confirmed subscriptions of the Pub/Sub connection: 1 after the constructor's, more after reconnects. */
    private final AtomicLong subscriptions = new AtomicLong();
    private volatile boolean disposed;

    private RedisStreamsMessageStore(Builder b) {
        this.keyPrefix = b.keyPrefix;
        this.channel = b.keyPrefix + "appends";
        this.consumerName = b.consumerName != null ? b.consumerName : "instance-" + UUID.randomUUID();
        this.maxLen = b.maxLen;
        this.consumerExpiryArg = Long.toString(saturatedMillis(b.consumerExpiry)).getBytes(StandardCharsets.US_ASCII);
        this.consumerNameArg = consumerName.getBytes(StandardCharsets.UTF_8);
        this.maxGroupsPerSubject = b.maxGroupsPerSubject;
        this.maxGroupsArg = Integer.toString(b.maxGroupsPerSubject).getBytes(StandardCharsets.US_ASCII);
        this.groupRetention = b.groupRetention;
        this.groupRetentionArg = Long.toString(saturatedMillis(b.groupRetention)).getBytes(StandardCharsets.US_ASCII);
        this.groupWalkIntervalArg = Long.toString(b.sweepIntervalNanos / 1_000_000L).getBytes(StandardCharsets.US_ASCII);
        this.maxSubjects = b.maxSubjects;
        this.maxSubjectsArg = Integer.toString(b.maxSubjects).getBytes(StandardCharsets.US_ASCII);
        this.registryKey = b.keyPrefix + "#subjects";
        this.sweepIntervalNanos = b.sweepIntervalNanos;
        this.maxLenArg = Long.toString(b.maxLen).getBytes(StandardCharsets.US_ASCII);
        this.channelArg = channel.getBytes(StandardCharsets.UTF_8);
        if (b.client != null) {
            this.client = b.client;
            this.ownsClient = false;
        } else {
            this.client = RedisClient.create(b.uri);
            this.ownsClient = true;
            client.setOptions(ClientOptions.builder()
                    .autoReconnect(true)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .timeoutOptions(TimeoutOptions.enabled(b.commandTimeout))
                    .build());
        }
        StatefulRedisConnection<String, byte[]> c = null;
        StatefulRedisPubSubConnection<String, String> p = null;
        try {
            c = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
            p = client.connectPubSub(StringCodec.UTF8);
            p.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    heard(message);
                }

                @Override
                public void subscribed(String ch, long count) {
                    // Redis confirms each SUBSCRIBE: the first is this constructor's, a later one Lettuce's
                    // re-subscription after a reconnect, when what was published meanwhile is lost
                    if (subscriptions.getAndIncrement() > 0) {
                        resubscribed(0);
                    }
                }
            });
            p.sync().subscribe(channel);
        } catch (RuntimeException e) {
            if (c != null) {
                c.close();
            }
            if (p != null) {
                p.close();
            }
            if (ownsClient) {
                client.shutdown();
            }
            throw e;
        }
        this.connection = c;
        this.commands = c.async();
        this.pubSub = p;
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    // ================================================================== offsets

    /**
     * The offset of a stream entry ID (see the class comment).
     *
     * @param streamId {@code ms-seq}
     * @return {@code ms * 2^20 + seq}
     * @throws IllegalArgumentException if it is not an entry ID
     * @throws IllegalStateException    if it does not fit (a sequence of 2^20 or more)
     */
    public static long offset(String streamId) {
        int dash = streamId == null ? -1 : streamId.indexOf('-');
        if (dash <= 0 || dash == streamId.length() - 1) {
            throw new IllegalArgumentException("not a stream entry ID: " + streamId);
        }
        long ms;
        long seq;
        try {
            ms = Long.parseLong(streamId, 0, dash, 10);
            seq = Long.parseLong(streamId, dash + 1, streamId.length(), 10);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a stream entry ID: " + streamId, e);
        }
        if (ms < 0 || seq < 0) {
            throw new IllegalArgumentException("not a stream entry ID: " + streamId);
        }
        if (seq > SEQ_MASK || ms > MAX_MILLIS) {
            throw new IllegalStateException("stream entry ID " + streamId + " does not fit an offset (sequence < 2^"
                    + SEQ_BITS + ", milliseconds < 2^" + (63 - SEQ_BITS) + ")");
        }
        return (ms << SEQ_BITS) | seq;
    }

    /**
     * The stream entry ID of an offset (see the class comment).
     *
     * @param offset an offset, ≥ 0
     * @return its entry ID {@code ms-seq}
     * @throws IllegalArgumentException if {@code offset} is negative
     */
    public static String streamId(long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0 but was " + offset);
        }
        return (offset >>> SEQ_BITS) + "-" + (offset & SEQ_MASK);
    }

    // ================================================================== the SPI

    /**
     * {@inheritDoc}
     *
     * <p>The command connection's state: {@code false} from the moment Lettuce sees it drop until it has
     * reconnected (commands are then rejected at once, {@code REJECT_COMMANDS} on a client of the store's
     * own), and after {@link #dispose()}.
     */
    @Override
    public boolean connected() {
        return !disposed && connection.isOpen();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Also a failure that the lost connection made, which Lettuce may report before it marks the connection down:
     * an I/O failure among its causes (a read under way when Redis went away fails with "Connection reset"), or
     * Lettuce's own connection failures ({@code RedisConnectionException}; "Connection closed" and
     * "Connection disconnected" for commands it cancels as the connection goes). So a long poll already waiting when
     * Redis goes down waits on, also when a read for it was under way.
     */
    @Override
    public boolean isConnectionFailure(Throwable error) {
        if (!connected()) {
            return true;
        }
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.io.IOException || t instanceof io.lettuce.core.RedisConnectionException) {
                return true;
            }
            String m = t.getMessage();
            if (t instanceof io.lettuce.core.RedisException && m != null
                    && (m.startsWith("Connection closed") || m.startsWith("Connection disconnected"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@code true}: {@code XREADGROUP ... >} reads after what this consumer was last handed, and the
     * store's commands go out on one connection, answered in order.
     */
    @Override
    public boolean pipelinedFetches() {
        return true;
    }

    /**
     * {@inheritDoc}
     *
     * @return the offset; a {@link SubjectLimitExceededException} if the subject has no stream and the
     *     store's registry holds {@link Builder#maxSubjects} names
     */
    @Override
    public Mono<Long> append(String subject, byte[] payload) {
        return append(subject, payload, maxSubjectsArg, REGISTER);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The dead-letter stream is created whatever {@link Builder#maxSubjects} says: there is one per group
     * at most (groups are bounded), and refusing it would keep the message pending and nacked again forever.
     */
    @Override
    public Mono<Void> deadLetter(String subject, String group, Message message) {
        requireNames(subject, group);
        Objects.requireNonNull(message, "message");
        return append(FailurePolicy.deadLetterSubject(group), message.payload(), NO_SUBJECT_LIMIT, UNREGISTERED)
                .then(acknowledge(subject, group, new long[] {message.offset()}, -1));
    }

    private Mono<Long> append(String subject, byte[] payload, byte[] subjectLimitArg, byte[] registerArg) {
        requireName(subject, "subject");
        Objects.requireNonNull(payload, "payload");
        String[] keys = {key(subject), registryKey};
        byte[] subjectArg = subject.getBytes(StandardCharsets.UTF_8);
        Mono<byte[]> once = script(APPEND_SHA, APPEND_SCRIPT, ScriptOutputType.VALUE, keys,
                maxLenArg, payload, channelArg, subjectArg, subjectLimitArg, registerArg);
        // a full registry: forget the names of streams deleted meanwhile (a sweep at most every second), then
        // try once more
        return once.onErrorResume(RedisStreamsMessageStore::subjectLimit, e -> forgetDeletedSubjects()
                        .flatMap(removed -> removed > 0 ? once : Mono.error(e))
                        .onErrorMap(RedisStreamsMessageStore::subjectLimit,
                                again -> new SubjectLimitExceededException(subject, maxSubjects)))
                .map(id -> {
                    long offset = offset(new String(id, StandardCharsets.US_ASCII));
                    notifyListeners(subject, offset + 1);
                    return offset;
                });
    }

    /**
     * {@inheritDoc}
     *
     * <p>The first fetch of a caller ({@code fromOffset < 0}) first reads this consumer's own pending
     * entries ({@code XREADGROUP ... 0}): what a previous run under the same {@link Builder#consumerName}
     * took and did not acknowledge comes back at once, not after the ack timeout, up to that fetch's
     * count (what the waiting pulls ask for); any rest comes back through {@code XAUTOCLAIM} once the ack
     * timeout passed. Two consumers (two
     * {@code PullConsumer}s) sharing one store in one process would then see each other's in-flight
     * messages again: give each its own store.
     */
    @Override
    public Mono<List<Message>> fetch(String subject, String group, long fromOffset, int maxMessages) {
        requireNames(subject, group);
        requirePositive(maxMessages);
        String key = key(subject);
        Mono<List<Message>> fresh = read(subject, group, XReadArgs.StreamOffset.lastConsumed(key), maxMessages);
        Mono<List<Message>> read = fromOffset >= 0 ? fresh
                : read(subject, group, XReadArgs.StreamOffset.from(key, "0"), maxMessages)
                        .flatMap(own -> own.isEmpty() ? fresh : Mono.just(own));
        // no group yet: create it (only on an existing stream: a fetch never creates one), then read
        return read.onErrorResume(RedisStreamsMessageStore::noGroup, e -> createGroup(subject, key, group)
                .flatMap(created -> created ? fresh : Mono.just(List.<Message>of())));
    }

    /** {@code XREADGROUP} from {@code offset} ({@code >}: new entries; an ID: this consumer's pending ones). */
    private Mono<List<Message>> read(String subject, String group, XReadArgs.StreamOffset<String> offset, int max) {
        return call(() -> commands
                .xreadgroup(Consumer.from(group, consumerName), XReadArgs.Builder.count(max), offset))
                .map(entries -> {
                    List<Message> messages = new ArrayList<>(entries.size());
                    for (StreamMessage<String, byte[]> m : entries) {
                        if (m.getBody() != null && !m.getBody().isEmpty()) { // trimmed while pending: gone
                            messages.add(message(subject, m));
                        }
                    }
                    return messages;
                })
                .defaultIfEmpty(List.of());
    }

    @Override
    public Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed) {
        requireNames(subject, group);
        Objects.requireNonNull(offsets, "offsets");
        if (offsets.length == 0) {
            return Mono.empty();
        }
        String[] ids = new String[offsets.length];
        for (int i = 0; i < offsets.length; i++) {
            ids[i] = streamId(offsets[i]);
        }
        // a group that does not exist has nothing pending: nothing to settle
        return call(() -> commands.xack(key(subject), group, ids))
                .onErrorResume(RedisStreamsMessageStore::noGroup, e -> Mono.empty())
                .then();
    }

    /** {@code XCLAIM ... 0 ids JUSTID}: the entries' idle time starts again, owned by this consumer. */
    @Override
    public Mono<Void> renew(String subject, String group, long[] offsets) {
        requireNames(subject, group);
        Objects.requireNonNull(offsets, "offsets");
        if (offsets.length == 0) {
            return Mono.empty();
        }
        String[] ids = new String[offsets.length];
        for (int i = 0; i < offsets.length; i++) {
            ids[i] = streamId(offsets[i]);
        }
        return call(() -> commands.xclaim(key(subject), Consumer.from(group, consumerName),
                        io.lettuce.core.XClaimArgs.Builder.justid(), ids))
                .onErrorResume(RedisStreamsMessageStore::noGroup, e -> Mono.empty())
                .then();
    }

    /**
     * {@code XCLAIM ... 0 ids} (with the entries, not {@code JUSTID}): Redis answers the entries it claimed,
     * those still pending; one another instance acknowledged is not, and this instance does not deliver it
     * again. One trimmed from the stream while pending is not delivered again either: Redis 7 drops it from
     * the pending list and leaves it out of the answer, Redis 6.2 answers it without its entry (where
     * {@code JUSTID} answered its ID alone, so it looked pending and was delivered again from the consumer's
     * copy), and it is then acknowledged, as {@link #reclaim} does with the trimmed entries it meets. A group
     * that is gone answers all of them (delivered again: at least once).
     */
    @Override
    public Mono<long[]> renewPending(String subject, String group, long[] offsets) {
        requireNames(subject, group);
        Objects.requireNonNull(offsets, "offsets");
        if (offsets.length == 0) {
            return Mono.just(offsets);
        }
        String key = key(subject);
        String[] ids = new String[offsets.length];
        for (int i = 0; i < offsets.length; i++) {
            ids[i] = streamId(offsets[i]);
        }
        return call(() -> commands.xclaim(key, Consumer.from(group, consumerName),
                        io.lettuce.core.XClaimArgs.Builder.minIdleTime(0), ids))
                .defaultIfEmpty(List.of())
                .flatMap(claimed -> {
                    java.util.Set<Long> present = new java.util.HashSet<>();
                    for (StreamMessage<String, byte[]> m : claimed) {
                        if (m != null && m.getId() != null && m.getBody() != null && !m.getBody().isEmpty()) {
                            present.add(offset(m.getId()));
                        }
                    }
                    long[] pending = new long[present.size()];
                    List<String> gone = new ArrayList<>();
                    int n = 0;
                    for (int i = 0; i < offsets.length; i++) {
                        if (present.contains(offsets[i])) {
                            pending[n++] = offsets[i];
                        } else {
                            // not pending (an ack settled it: acknowledging again does nothing) or trimmed while
                            // pending (Redis 6.2 keeps it pending: settled here, as reclaim settles those it meets)
                            gone.add(ids[i]);
                        }
                    }
                    long[] answer = n == pending.length ? pending : java.util.Arrays.copyOf(pending, n);
                    return gone.isEmpty() ? Mono.just(answer)
                            : call(() -> commands.xack(key, group, gone.toArray(String[]::new))).thenReturn(answer);
                })
                .onErrorResume(RedisStreamsMessageStore::noGroup, e -> Mono.just(offsets));
    }

    @Override
    public Mono<Reclaimed> reclaim(String subject, String group, long cursor, Duration minIdle, int maxMessages) {
        requireNames(subject, group);
        Objects.requireNonNull(minIdle, "minIdle");
        if (cursor < 0) {
            throw new IllegalArgumentException("cursor must be >= 0 but was " + cursor);
        }
        if (minIdle.isNegative()) {
            throw new IllegalArgumentException("minIdle must not be negative but was " + minIdle);
        }
        requirePositive(maxMessages);
        String key = key(subject);
        XAutoClaimArgs<String> args = new XAutoClaimArgs<String>()
                .consumer(Consumer.from(group, consumerName))
                .minIdleTime(minIdle)
                .startId(cursor <= 0 ? "0-0" : streamId(cursor))
                .count(maxMessages);
        return call(() -> commands.xautoclaim(key, args))
                .flatMap(claimed -> {
                    List<Message> messages = new ArrayList<>(claimed.getMessages().size());
                    List<String> gone = new ArrayList<>();
                    for (StreamMessage<String, byte[]> m : claimed.getMessages()) {
                        if (m.getBody() == null || m.getBody().isEmpty()) {
                            gone.add(m.getId()); // trimmed away while pending: nothing left to deliver
                        } else {
                            messages.add(message(subject, m));
                        }
                    }
                    String next = claimed.getId();
                    Reclaimed r = new Reclaimed(messages, next == null || "0-0".equals(next) ? 0 : offset(next));
                    Mono<Void> settleGone = gone.isEmpty() ? Mono.empty()
                            : call(() -> commands.xack(key, group, gone.toArray(String[]::new))).then();
                    return settleGone.then(expireConsumers(key, group)).thenReturn(r);
                })
                .onErrorResume(RedisStreamsMessageStore::noGroup, e -> Mono.just(Reclaimed.NONE));
    }

    @Override
    public Mono<Position> position(String subject, String group) {
        requireNames(subject, group);
        String key = key(subject);
        Mono<Long> end = call(() -> commands.xrevrange(key, Range.create("-", "+"), Limit.from(1)))
                .filter(last -> !last.isEmpty())
                .map(last -> offset(last.get(0).getId()) + 1)
                .defaultIfEmpty(0L);
        Mono<Map<String, Object>> info = call(() -> commands.xinfoGroups(key))
                .flatMapIterable(groups -> groups)
                .map(RedisStreamsMessageStore::fields)
                .filter(f -> group.equals(f.get("name")))
                .next()
                .onErrorResume(e -> e instanceof RedisCommandExecutionException
                        && String.valueOf(e.getMessage()).startsWith("ERR no such key"), e -> Mono.empty());
        return end.flatMap(endOffset -> info
                .flatMap(f -> groupPosition(key, group, endOffset, f))
                .switchIfEmpty(call(() -> commands.xlen(key))
                        .map(len -> new Position(endOffset, -1, len, 0))));
    }

    private Mono<Position> groupPosition(String key, String group, long end, Map<String, Object> f) {
        long pending = f.get("pending") instanceof Long l ? l : 0;
        String lastDelivered = String.valueOf(f.get("last-delivered-id"));
        long delivered = "0-0".equals(lastDelivered) ? -1 : offset(lastDelivered);
        Mono<Long> committed = pending == 0
                ? Mono.just(delivered + 1)
                : call(() -> commands.xpending(key, group))
                        // acknowledged between XINFO and XPENDING: nothing pending any more
                        .map(p -> p.getCount() == 0 || p.getMessageIds() == null
                                || p.getMessageIds().getLower() == null || p.getMessageIds().getLower().getValue() == null
                                ? delivered + 1 : offset(p.getMessageIds().getLower().getValue()));
        Mono<Long> undelivered = f.get("lag") instanceof Long lag
                ? Mono.just(lag) // Redis 7 counts it
                : call(() -> commands.xrange(key,
                                Range.create(delivered < 0 ? "-" : streamId(delivered + 1), "+"),
                                Limit.from(LAG_SCAN_LIMIT)))
                        .map(entries -> (long) entries.size());
        return committed.zipWith(undelivered, (c, u) -> new Position(end, c, pending + u, pending));
    }

    @Override
    public Disposable addAppendListener(MessageStore.AppendListener listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    // ================================================================== lifecycle

    /** @return this process's consumer name in every group */
    public String consumerName() {
        return consumerName;
    }

    /** @return the prefix of every key (and of the Pub/Sub channel) */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** @return the approximate number of entries each stream keeps */
    public long maxLen() {
        return maxLen;
    }

    /**
     * @param subject a subject
     * @return the key of its stream
     */
    public String key(String subject) {
        return keyPrefix + Objects.requireNonNull(subject, "subject");
    }

    /**
     * {@link #dispose()}, under the name a container closes a resource by: a Spring {@code @Bean} of this type is
     * closed with the context without a {@code destroyMethod} (Spring infers {@code close()}; Reactor's
     * {@code Disposable} alone it does not know). Close the store after the consumers using it finished with it:
     * the Spring Boot starter closes its scheduler and consumer before Spring destroys any bean.
     */
    @Override
    public void close() {
        dispose();
    }

    /** Closes the connections (and the client, unless it was given to the builder). Idempotent. */
    @Override
    public void dispose() {
        synchronized (this) {
            // once, also under concurrent calls
            if (disposed) {
                return;
            }
            disposed = true;
        }
        listeners.clear();
        // each step whatever the previous one threw: a failing close must not leak the other connection
        try {
            pubSub.close();
        } finally {
            try {
                connection.close();
            } finally {
                if (ownsClient) {
                    client.shutdown();
                }
            }
        }
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }

    @Override
    public String toString() {
        return "RedisStreamsMessageStore[prefix=" + keyPrefix + ", consumer=" + consumerName + ", maxLen=" + maxLen
                + "]";
    }

    // ================================================================== internals

    /**
     * Removes the group's consumers that hold nothing and were idle past {@link Builder#consumerExpiry}
     * (instances gone for good, e.g. with random names): the group's consumer list stays bounded. Each check
     * and removal is atomic ({@link #EXPIRE_CONSUMERS_SCRIPT}), so a consumer that is handed entries meanwhile
     * keeps them. Best effort: a failure is ignored (the next reclaim tries again). A removed consumer that comes
     * back is created again by its next fetch.
     */
    private Mono<Void> expireConsumers(String key, String group) {
        return this.<Long>script(EXPIRE_CONSUMERS_SHA, EXPIRE_CONSUMERS_SCRIPT, ScriptOutputType.INTEGER,
                        new String[] {key}, group.getBytes(StandardCharsets.UTF_8), consumerExpiryArg,
                        consumerNameArg)
                .then()
                .onErrorResume(e -> {
                    LOG.debug("expiring idle consumers of " + key + "/" + group + " failed", e);
                    return Mono.empty();
                });
    }

    /**
     * Creates the group at {@code 0-0} (it starts at the oldest entry held), if its stream exists and has room,
     * or if a group nobody read for {@link Builder#groupRetention} can make room ({@link #CREATE_GROUP_SCRIPT}).
     *
     * @return {@code true} if the group exists now, {@code false} if the stream does not (nothing created);
     *     a {@link RedisGroupLimitExceededException} if the stream has {@code maxGroupsPerSubject} groups
     */
    private Mono<Boolean> createGroup(String subject, String key, String group) {
        String[] keys = {key, keyPrefix + "#group-walk:" + subject};
        return this.<List<Object>>script(CREATE_GROUP_SHA, CREATE_GROUP_SCRIPT, ScriptOutputType.MULTI, keys,
                        group.getBytes(StandardCharsets.UTF_8), maxGroupsArg, groupRetentionArg, groupWalkIntervalArg)
                .flatMap(r -> {
                    long status = (Long) r.get(0);
                    Object destroyed = r.size() > 1 ? r.get(1) : null;
                    if (destroyed != null) {
                        LOG.info("destroyed consumer group " + text(destroyed) + " of subject " + subject
                                + ", which nobody read for " + groupRetention + " or more, to make room for group "
                                + group + " (maxGroupsPerSubject " + maxGroupsPerSubject + ")");
                    }
                    return status < 0
                            ? Mono.error(new RedisGroupLimitExceededException(subject, group, maxGroupsPerSubject))
                            : Mono.just(status > 0);
                });
    }

    /**
     * @return how long nobody must have read a group before it may make room for another
     *     ({@link Builder#groupRetention})
     */
    public Duration groupRetention() {
        return groupRetention;
    }

    private static long saturatedMillis(Duration d) {
        try {
            return d.toMillis();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** @return the most subjects the store creates streams for (see {@link Builder#maxSubjects}) */
    public int maxSubjects() {
        return maxSubjects;
    }

    /** @return the key of the set of subject names the store created or appended to ({@code <keyPrefix>#subjects}) */
    public String registryKey() {
        return registryKey;
    }

    /** @return the most consumer groups one subject's stream may have (see {@link Builder#maxGroupsPerSubject}) */
    public int maxGroupsPerSubject() {
        return maxGroupsPerSubject;
    }

    private static Message message(String subject, StreamMessage<String, byte[]> m) {
        long offset = offset(m.getId());
        byte[] payload = m.getBody().get(PAYLOAD_FIELD);
        return new Message(subject, offset, offset >>> SEQ_BITS, payload == null ? new byte[0] : payload);
    }

    /** A Pub/Sub message {@code subject\nid}: wakes this process's listeners. */
    private void heard(String message) {
        int nl = message == null ? -1 : message.lastIndexOf('\n');
        if (nl <= 0) {
            return;
        }
        long end;
        try {
            end = offset(message.substring(nl + 1)) + 1;
        } catch (RuntimeException e) {
            end = -1;
        }
        notifyListeners(message.substring(0, nl), end);
    }

    /** How often, and how many times, {@link #resubscribed} looks whether the command connection is back. */
    private static final long RECONNECT_CHECK_MILLIS = 50;
    private static final int RECONNECT_CHECKS = 1_200;

    /**
     * The Pub/Sub connection subscribed again after a lost connection: appends published while it was down
     * were not heard, so the listeners are told to look again ({@link MessageStore.AppendListener#appendsMissed})
     * once the command connection is up too (their fetches would fail before that, and fail the long polls
     * waiting). Redis orders each lost {@code PUBLISH} before this subscription, and its {@code XADD} before
     * that, so a fetch issued after this call sees those entries. Looked at every 50 ms on Lettuce's event
     * executor, for at most a minute (then the long polls fall back on their timeouts, as before).
     */
    private void resubscribed(int checks) {
        if (disposed) {
            return;
        }
        if (connection.isOpen()) {
            forEachListener(MessageStore.AppendListener::appendsMissed);
        } else if (checks < RECONNECT_CHECKS) {
            try {
                client.getResources().eventExecutorGroup().schedule(() -> resubscribed(checks + 1),
                        RECONNECT_CHECK_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (RuntimeException e) {
                // the client is shutting down (its executor refuses): nothing will be fetched anyway
                LOG.debug("append listeners not told of missed appends: " + e);
            }
        }
    }

    private void notifyListeners(String subject, long endOffset) {
        forEachListener(l -> l.appended(subject, endOffset));
    }

    /** Calls each listener; one that throws is logged and the others are still called. */
    private void forEachListener(java.util.function.Consumer<MessageStore.AppendListener> call) {
        for (MessageStore.AppendListener l : listeners) {
            try {
                call.accept(l);
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                LOG.warn("append listener " + l + " failed", t);
            }
        }
    }

    /** XINFO GROUPS gives each group as a flat list {@code name, value, ...} (RESP2) or a map (RESP3). */
    private static Map<String, Object> fields(Object group) {
        Map<String, Object> out = new java.util.HashMap<>();
        if (group instanceof List<?> list) {
            for (int i = 0; i + 1 < list.size(); i += 2) {
                out.put(text(list.get(i)), value(list.get(i + 1)));
            }
        } else if (group instanceof Map<?, ?> map) {
            map.forEach((k, v) -> out.put(text(k), value(v)));
        }
        return out;
    }

    private static Object value(Object v) {
        return v instanceof byte[] || v instanceof java.nio.ByteBuffer ? text(v) : v;
    }

    private static String text(Object o) {
        if (o instanceof byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        if (o instanceof java.nio.ByteBuffer buffer) {
            return StandardCharsets.UTF_8.decode(buffer.duplicate()).toString();
        }
        return String.valueOf(o);
    }

    private static boolean noGroup(Throwable e) {
        return e instanceof RedisCommandExecutionException && String.valueOf(e.getMessage()).startsWith("NOGROUP");
    }

    /**
     * Runs one of the store's Lua scripts: by its SHA-1 ({@code EVALSHA}), sending its text ({@code EVAL}) only
     * when Redis does not have it cached ({@code NOSCRIPT}: a new or restarted server, or a flushed cache).
     */
    private <T> Mono<T> script(String sha, String text, ScriptOutputType type, String[] keys, byte[]... args) {
        Mono<T> bySha = call(() -> commands.<T>evalsha(sha, type, keys, args));
        Mono<T> byText = call(() -> commands.<T>eval(text, type, keys, args));
        return bySha.onErrorResume(RedisStreamsMessageStore::noScript, e -> byText);
    }

    private static boolean subjectLimit(Throwable e) {
        return e instanceof RedisCommandExecutionException && String.valueOf(e.getMessage()).startsWith("SUBJECTLIMIT");
    }

    /**
     * Removes from the registry the names whose stream no longer exists (deleted by an operator), among the
     * next {@value #REGISTRY_SWEEP} or so of a walk over the registry ({@code SSCAN}, continued by each sweep,
     * so repeated sweeps cover all of it), each check and removal atomic ({@link #FORGET_SCRIPT}). At most one
     * sweep per second per store: a client that keeps naming new subjects in a
     * full store costs one refused script call each, not a walk. An operator who deletes a stream should also
     * {@code SREM} its name from {@code <keyPrefix>#subjects}: until a sweep reaches it, the name counts.
     *
     * @return how many names were removed (0 without a sweep)
     */
    private Mono<Long> forgetDeletedSubjects() {
        return Mono.defer(() -> {
            long now = System.nanoTime();
            long due = nextSweepAt.get();
            if (now - due < 0 || !nextSweepAt.compareAndSet(due, now + sweepIntervalNanos)) {
                return Mono.just(0L);
            }
            String cursor = sweepCursor.get();
            return call(() -> commands.sscan(registryKey, ScanCursor.of(cursor),
                            ScanArgs.Builder.limit(REGISTRY_SWEEP)))
                    .flatMap(scan -> {
                        sweepCursor.compareAndSet(cursor, scan.isFinished() ? "0" : scan.getCursor());
                        List<byte[]> names = scan.getValues();
                        if (names.isEmpty()) {
                            return Mono.just(0L);
                        }
                        String[] keys = new String[names.size() + 1];
                        keys[0] = registryKey;
                        for (int i = 0; i < names.size(); i++) {
                            keys[i + 1] = key(new String(names.get(i), StandardCharsets.UTF_8));
                        }
                        return this.<Long>script(FORGET_SHA, FORGET_SCRIPT, ScriptOutputType.INTEGER, keys,
                                names.toArray(byte[][]::new));
                    });
        });
    }

    /**
     * One command, issued when the {@code Mono} is subscribed (each subscription issues it again, as a retry
     * expects), through Lettuce's asynchronous API: the reply is decoded whole, then completes the future on
     * the connection's event loop. Lettuce's reactive API is not used (see {@link #commands}). A {@code null}
     * reply is an empty {@code Mono}; a cancellation cancels the command's future (Lettuce still reads, then
     * drops, its reply).
     */
    private static <T> Mono<T> call(Supplier<? extends CompletionStage<T>> command) {
        return Mono.fromCompletionStage(command);
    }

    private static boolean noScript(Throwable e) {
        return e instanceof RedisCommandExecutionException && String.valueOf(e.getMessage()).startsWith("NOSCRIPT");
    }

    /** Rule of every store method: a null name is the caller's error, never a key named {@code "null"}. */
    private static void requireNames(String subject, String group) {
        requireName(subject, "subject");
        requireName(group, "group");
    }

    /**
     * A subject or group name this store can key: not empty, and without {@code '#'}, which its own keys use
     * ({@code <prefix>#subjects}, {@code <prefix>#group-walk:..}): a stream written at such a key broke every
     * later append under the prefix. The pull consumer's names pass (they cannot contain {@code '#'}).
     */
    private static String requireName(String name, String parameter) {
        Objects.requireNonNull(name, parameter);
        if (name.isEmpty() || name.indexOf('#') >= 0) {
            throw new IllegalArgumentException(parameter + " must be non-empty and must not contain '#' (reserved for "
                    + "the store's own keys) but was \"" + name + "\"");
        }
        return name;
    }

    private static void requirePositive(int maxMessages) {
        if (maxMessages < 1) {
            throw new IllegalArgumentException("maxMessages must be >= 1 but was " + maxMessages);
        }
    }

    private static String sha1(String script) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(script.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Builds a {@link RedisStreamsMessageStore}; every parameter validated when set. */
    public static final class Builder {
        private RedisURI uri = RedisURI.create("redis://localhost:6379");
        private RedisClient client;
        private String keyPrefix = DEFAULT_KEY_PREFIX;
        private String consumerName;
        private long maxLen = DEFAULT_MAX_LEN;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private Duration consumerExpiry = DEFAULT_CONSUMER_EXPIRY;
        private int maxGroupsPerSubject = DEFAULT_MAX_GROUPS_PER_SUBJECT;
        private Duration groupRetention = DEFAULT_GROUP_RETENTION;
        private int maxSubjects = DEFAULT_MAX_SUBJECTS;
        private long sweepIntervalNanos = REGISTRY_SWEEP_INTERVAL_NANOS;

        private Builder() {
        }

        /**
         * Tests: the least time between two sweeps of the registry, and between two walks of a full stream's groups
         * (1 s by default, each; below 1 ms: no limit on walks).
         */
        Builder sweepInterval(Duration interval) {
            this.sweepIntervalNanos = interval.toNanos();
            return this;
        }

        /**
         * @param maxSubjects the most subjects the store creates a stream for (default
         *                    {@value #DEFAULT_MAX_SUBJECTS}); ≥ 1. Subject names come from clients: their names
         *                    are kept in the set {@code <keyPrefix>#subjects}, and an append that would create a
         *                    stream past this many fails with {@link SubjectLimitExceededException} and creates
         *                    nothing. Appends to existing streams are never refused (a stream that existed
         *                    before the set joins it, past the bound), nor are dead letters. The store never
         *                    deletes a stream; an operator who does should {@code SREM} its name from the set
         *                    (a full set is also swept for such names, at most 64 or so per second)
         * @return this
         * @throws IllegalArgumentException if it is &lt; 1
         */
        public Builder maxSubjects(int maxSubjects) {
            if (maxSubjects < 1) {
                throw new IllegalArgumentException("maxSubjects must be >= 1 but was " + maxSubjects);
            }
            this.maxSubjects = maxSubjects;
            return this;
        }

        /**
         * @param maxGroupsPerSubject the most consumer groups a subject's stream may have (default
         *                            {@value #DEFAULT_MAX_GROUPS_PER_SUBJECT}); ≥ 1. Group names come from
         *                            clients and a Redis group lives until destroyed, so a fetch for a new group
         *                            on a stream that has this many fails with
         *                            {@link RedisGroupLimitExceededException} and creates nothing, unless a group
         *                            nobody read for {@link #groupRetention} makes room (it is destroyed first)
         * @return this
         * @throws IllegalArgumentException if it is &lt; 1
         */
        public Builder maxGroupsPerSubject(int maxGroupsPerSubject) {
            if (maxGroupsPerSubject < 1) {
                throw new IllegalArgumentException("maxGroupsPerSubject must be >= 1 but was " + maxGroupsPerSubject);
            }
            this.maxGroupsPerSubject = maxGroupsPerSubject;
            return this;
        }

        /**
         * @param groupRetention how long nobody must have read a group before it may be destroyed to make room for
         *                       a new group on a stream that has {@link #maxGroupsPerSubject} groups (default 7
         *                       days, as Kafka's {@code offsets.retention.minutes}); at least 1 ms. "Nobody read
         *                       it": the group has consumers, all idle that long (Redis's consumer idle time),
         *                       and, before Redis 7.2, an entry appended after its last delivery is that old:
         *                       Redis 6.2 and 7.0 do not count a read that finds nothing new, so a group that has
         *                       read everything is kept there however idle (it cannot be told from one still
         *                       polling a quiet stream), and so is a lagging group whose unread entries were all
         *                       trimmed ({@link #maxLen}) younger than this. A group with no consumer is always
         *                       kept. One group is destroyed per new group, the one unread longest; a walk over a
         *                       stream's groups runs at most once a second per stream, across instances (the key
         *                       {@code <keyPrefix>#group-walk:<subject>} lives that second). A destroyed group that
         *                       comes back starts again at the oldest entry held, so its messages are delivered
         *                       again (at least once)
         * @return this
         * @throws IllegalArgumentException if it is {@code null} or less than 1 ms
         */
        public Builder groupRetention(Duration groupRetention) {
            if (groupRetention == null || groupRetention.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("groupRetention must be at least 1 ms but was " + groupRetention);
            }
            this.groupRetention = groupRetention;
            return this;
        }

        /**
         * @param consumerExpiry a consumer of a group that holds no pending message and was idle this
         *                       long is removed from the group when this process reclaims (default 1 h):
         *                       instances that are gone (a random name per start) do not pile up; &gt; 0
         * @return this
         * @throws IllegalArgumentException if it is {@code null}, zero or negative
         */
        public Builder consumerExpiry(Duration consumerExpiry) {
            if (consumerExpiry == null || consumerExpiry.isZero() || consumerExpiry.isNegative()) {
                throw new IllegalArgumentException("consumerExpiry must be > 0 but was " + consumerExpiry);
            }
            this.consumerExpiry = consumerExpiry;
            return this;
        }

        /**
         * @param uri the Redis to connect to, e.g. {@code redis://localhost:6379} (default)
         * @return this
         * @throws IllegalArgumentException if it is {@code null} or not a Redis URI
         */
        public Builder uri(String uri) {
            if (uri == null || uri.isBlank()) {
                throw new IllegalArgumentException("uri must not be null or blank");
            }
            RedisURI parsed;
            try {
                parsed = RedisURI.create(uri);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("uri is not a Redis URI: " + uri + " (" + e.getMessage() + ")", e);
            }
            String host = parsed.getHost();
            // Lettuce reads "host:-1" as the host "host:-1" on the default port; an IPv6 literal has two colons
            if (parsed.getSocket() == null && host != null && (parsed.getPort() < 1 || parsed.getPort() > 65_535
                    || (host.indexOf(':') >= 0 && host.indexOf(':') == host.lastIndexOf(':')))) {
                throw new IllegalArgumentException("uri must have a port from 1 to 65535 but was " + uri);
            }
            this.uri = parsed;
            return this;
        }

        /**
         * @param client a client to connect with instead of {@link #uri}: its options are left as they
         *               are (this store sets fail-fast, auto-reconnect and the command timeout only on a
         *               client of its own) and it is not shut down by {@link #dispose()}; it must speak
         *               RESP3 (Lettuce's default; the store needs Redis 6.2 or later for {@code XAUTOCLAIM}): with RESP2 Lettuce 7.2 returned only
         *               the first entry of an {@code XREADGROUP} reply
         * @return this
         * @throws IllegalArgumentException if it is {@code null}
         */
        public Builder client(RedisClient client) {
            if (client == null) {
                throw new IllegalArgumentException("client must not be null");
            }
            this.client = client;
            return this;
        }

        /**
         * @param keyPrefix put before every subject to make its stream's key (default
         *                  {@value #DEFAULT_KEY_PREFIX}); not empty
         * @return this
         * @throws IllegalArgumentException if it is {@code null} or empty
         */
        public Builder keyPrefix(String keyPrefix) {
            if (keyPrefix == null || keyPrefix.isEmpty()) {
                throw new IllegalArgumentException("keyPrefix must not be null or empty");
            }
            this.keyPrefix = keyPrefix;
            return this;
        }

        /**
         * @param consumerName this process's consumer name in every group (default: {@code instance-}
         *                     and a random UUID); a stable name (a host or pod name) lets a restarted
         *                     instance find its own pending messages at once (its first fetch of a
         *                     group reads them) instead of after the ack timeout; 1 to 200 printable
         *                     characters without spaces
         * @return this
         * @throws IllegalArgumentException if it is not such a name
         */
        public Builder consumerName(String consumerName) {
            if (consumerName == null || consumerName.isEmpty() || consumerName.length() > 200
                    || !consumerName.chars().allMatch(ch -> ch > 0x20 && ch < 0x7f)) {
                throw new IllegalArgumentException("consumerName must be 1 to 200 printable ASCII characters"
                        + " without spaces but was " + consumerName);
            }
            this.consumerName = consumerName;
            return this;
        }

        /**
         * @param maxLen entries each stream keeps, approximately ({@code MAXLEN ~}; default
         *               {@value #DEFAULT_MAX_LEN}); ≥ 1
         * @return this
         * @throws IllegalArgumentException if it is &lt; 1
         */
        public Builder maxLen(long maxLen) {
            if (maxLen < 1) {
                throw new IllegalArgumentException("maxLen must be >= 1 but was " + maxLen);
            }
            this.maxLen = maxLen;
            return this;
        }

        /**
         * @param commandTimeout how long one Redis command may take before it fails (default 5 s); from 1 ms
         *                       to 1 day (a shorter one fails every command, connecting included)
         * @return this
         * @throws IllegalArgumentException if it is {@code null}, under 1 ms or over 1 day
         */
        public Builder commandTimeout(Duration commandTimeout) {
            if (commandTimeout == null || commandTimeout.compareTo(Duration.ofMillis(1)) < 0
                    || commandTimeout.compareTo(Duration.ofDays(1)) > 0) {
                throw new IllegalArgumentException("commandTimeout must be between 1 ms and 1 day but was "
                        + commandTimeout);
            }
            this.commandTimeout = commandTimeout;
            return this;
        }

        /**
         * Connects (blocking the caller until both connections are up: call it at start-up, not on a
         * scheduler thread).
         *
         * @return the store
         * @throws io.lettuce.core.RedisConnectionException if Redis cannot be reached
         */
        public RedisStreamsMessageStore build() {
            return new RedisStreamsMessageStore(this);
        }
    }
}
