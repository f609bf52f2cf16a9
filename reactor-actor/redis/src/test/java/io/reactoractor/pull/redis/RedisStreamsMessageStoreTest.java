package io.reactoractor.pull.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.reactoractor.ActorScheduler;
import io.reactoractor.pull.AsyncMessageStore;
import io.reactoractor.pull.FailurePolicy;
import io.reactoractor.pull.Message;
import io.reactoractor.pull.MessageStoreException;
import io.reactoractor.pull.PullConsumer;
import io.reactoractor.pull.PullResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** What only the Redis store does: offsets from entry IDs, several instances, Redis failures. */
class RedisStreamsMessageStoreTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final AtomicInteger NAMES = new AtomicInteger();
    private static TestRedis shared;

    private final ActorScheduler scheduler = ActorScheduler.builder().name("redis-test").threads(2).build();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeAll
    static void startRedis() throws Exception {
        shared = TestRedis.start(false);
    }

    @AfterAll
    static void stopRedis() throws Exception {
        shared.close();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        scheduler.disposeGracefully().block(Duration.ofSeconds(10));
    }

    private static String unique(String what) {
        return what + NAMES.incrementAndGet() + "-" + Long.toString(System.nanoTime() & 0xFFFFFF, 36);
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private RedisStreamsMessageStore store(TestRedis redis, String prefix, String consumer) {
        RedisStreamsMessageStore s = RedisStreamsMessageStore.builder().uri(redis.uri()).keyPrefix(prefix)
                // generous: no test here waits for a command timeout (a disconnected client fails at once);
                // see RedisStoreContractTest#newStore on the commands that once took the whole timeout
                .consumerName(consumer).commandTimeout(Duration.ofSeconds(20)).build();
        closing.add(s::dispose);
        return s;
    }

    private PullConsumer consumer(AsyncMessageStore store, Duration ackTimeout) {
        PullConsumer c = PullConsumer.builder(scheduler).asyncStore(store).ackTimeout(ackTimeout).build();
        closing.add(c::dispose);
        return c;
    }

    private static void await(Supplier<Boolean> condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(20);
        }
    }

    /**
     * The store talks to its command connection through Lettuce's asynchronous API only. Lettuce's reactive
     * commands apply backpressure by turning the connection's auto-read off while decoded elements of a reply
     * wait for their subscriber; a race in that hand-off left it off under CPU load (the contract's delivery
     * test repeated beside two CPU hogs: 8 stalls in 7 runs, then 0 in 1,200 repetitions on this API; each an
     * append or a fetch answered only when a command timed out 30 s later, the reply bytes unread in the socket).
     * A guard against bringing the reactive API back: it would bring the stalls back with it.
     */
    @Test
    void theCommandConnectionIsUsedThroughLettucesAsynchronousApiOnly() {
        for (java.lang.reflect.Field f : RedisStreamsMessageStore.class.getDeclaredFields()) {
            String type = f.getType().getName();
            assertFalse(type.startsWith("io.lettuce.core.api.reactive."), f.getName() + " is " + type);
        }
    }

    // ================================================================== offsets and configuration

    @Test
    void offsetsMapEntryIdsBothWays() {
        assertEquals((1_700_000_000_000L << 20) | 5, RedisStreamsMessageStore.offset("1700000000000-5"));
        assertEquals("1700000000000-5", RedisStreamsMessageStore.streamId((1_700_000_000_000L << 20) | 5));
        assertEquals(0, RedisStreamsMessageStore.offset("0-0"));
        assertTrue(RedisStreamsMessageStore.offset("1700000000000-1048575")
                < RedisStreamsMessageStore.offset("1700000000001-0"), "monotonic across milliseconds");
        assertThrows(IllegalStateException.class, () -> RedisStreamsMessageStore.offset("1700000000000-1048576"));
        for (String bad : new String[] {"", "-", "1-", "-1", "a-1", "1-b", "12"}) {
            assertThrows(IllegalArgumentException.class, () -> RedisStreamsMessageStore.offset(bad), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> RedisStreamsMessageStore.streamId(-1));
    }

    @Test
    void builderNamesTheBadParameter() {
        RedisStreamsMessageStore.Builder b = RedisStreamsMessageStore.builder();
        assertMessage("uri", assertThrows(IllegalArgumentException.class, () -> b.uri(" ")));
        assertMessage("uri", assertThrows(IllegalArgumentException.class, () -> b.uri("http://x")));
        assertMessage("client", assertThrows(IllegalArgumentException.class, () -> b.client(null)));
        assertMessage("keyPrefix", assertThrows(IllegalArgumentException.class, () -> b.keyPrefix("")));
        assertMessage("consumerName", assertThrows(IllegalArgumentException.class, () -> b.consumerName("a b")));
        assertMessage("maxLen", assertThrows(IllegalArgumentException.class, () -> b.maxLen(0)));
        assertMessage("commandTimeout", assertThrows(IllegalArgumentException.class,
                () -> b.commandTimeout(Duration.ZERO)));
        assertMessage("consumerExpiry", assertThrows(IllegalArgumentException.class,
                () -> b.consumerExpiry(Duration.ofSeconds(-1))));
        assertMessage("maxGroupsPerSubject", assertThrows(IllegalArgumentException.class,
                () -> b.maxGroupsPerSubject(0)));
        assertMessage("maxSubjects", assertThrows(IllegalArgumentException.class, () -> b.maxSubjects(0)));
        assertMessage("groupRetention", assertThrows(IllegalArgumentException.class,
                () -> b.groupRetention(Duration.ZERO)));
        assertMessage("groupRetention", assertThrows(IllegalArgumentException.class, () -> b.groupRetention(null)));
        assertMessage("groupRetention", assertThrows(IllegalArgumentException.class,
                () -> b.groupRetention(Duration.ofNanos(999_999))));
        // values that passed the setter and then failed build() (an overflow, a timeout of every command)
        assertMessage("commandTimeout", assertThrows(IllegalArgumentException.class,
                () -> b.commandTimeout(Duration.ofNanos(1))));
        assertMessage("commandTimeout", assertThrows(IllegalArgumentException.class,
                () -> b.commandTimeout(Duration.ofSeconds(Long.MAX_VALUE))));
        assertMessage("uri", assertThrows(IllegalArgumentException.class, () -> b.uri("redis://127.0.0.1:-1")));
        assertMessage("uri", assertThrows(IllegalArgumentException.class, () -> b.uri("redis://127.0.0.1:65536")));
    }

    @Test
    void anUnboundedConsumerExpiryBuilds() {
        RedisStreamsMessageStore s = RedisStreamsMessageStore.builder().uri(shared.uri())
                .keyPrefix(unique("expiry") + ":").consumerExpiry(Duration.ofSeconds(Long.MAX_VALUE))
                .commandTimeout(Duration.ofDays(1)).build(); // threw ArithmeticException (long overflow)
        closing.add(s::dispose);
        assertTrue(s.append("s", b("m")).block(WAIT) >= 0);
    }

    /** {@code close()} (AutoCloseable: what a Spring bean without a destroyMethod is closed by) disposes the store. */
    @Test
    void closeDisposesTheStoreAsAContainerClosesIt() throws Exception {
        RedisStreamsMessageStore s = store(shared, unique("close") + ":", "c1");
        assertTrue(s.append("s", b("m")).block(WAIT) >= 0);
        try (AutoCloseable resource = s) {
            assertFalse(s.isDisposed());
        }
        assertTrue(s.isDisposed());
        assertFalse(s.connected());
        s.close(); // idempotent, as dispose()
    }

    /** A failure the lost connection made is a connection failure, also while Lettuce still says it is connected. */
    @Test
    void failuresTheConnectionMadeAreToldFromRefusedCommands() {
        RedisStreamsMessageStore s = store(shared, unique("classify") + ":", "c1");
        assertTrue(s.connected());
        assertTrue(s.isConnectionFailure(new io.lettuce.core.RedisException("read failed",
                new java.net.SocketException("Connection reset"))));
        assertTrue(s.isConnectionFailure(new io.lettuce.core.RedisConnectionException("Unable to connect")));
        assertTrue(s.isConnectionFailure(new io.lettuce.core.RedisException("Connection closed")));
        assertTrue(s.isConnectionFailure(new java.io.UncheckedIOException(new java.io.IOException("broken pipe"))));
        assertFalse(s.isConnectionFailure(new io.lettuce.core.RedisCommandExecutionException("WRONGTYPE Operation against a key")));
        assertFalse(s.isConnectionFailure(new io.lettuce.core.RedisCommandTimeoutException("Command timed out")));
        s.dispose();
        assertTrue(s.isConnectionFailure(new IllegalStateException("anything")), "disposed: not connected");
    }

    /** The store's own keys use '#': a subject or group with one (or an empty one) is refused at the call. */
    @Test
    void theStoreRefusesNamesItCannotKey() throws Exception {
        String prefix = unique("names") + ":";
        RedisStreamsMessageStore s = store(shared, prefix, "c1");
        assertMessage("subject", assertThrows(IllegalArgumentException.class, () -> s.append("#subjects", b("x"))));
        assertMessage("subject", assertThrows(IllegalArgumentException.class, () -> s.append("", b("x"))));
        assertMessage("subject", assertThrows(IllegalArgumentException.class,
                () -> s.fetch("#group-walk:s", "g", 0, 1)));
        assertMessage("group", assertThrows(IllegalArgumentException.class, () -> s.fetch("s", "a#b", 0, 1)));
        assertMessage("group", assertThrows(IllegalArgumentException.class, () -> s.fetch("s", "", 0, 1)));
        // nothing was written, and the prefix still works
        assertEquals(":0", shared.command("EXISTS " + prefix + "#subjects"));
        assertTrue(s.append("orders", b("m")).block(WAIT) >= 0);
    }

    /** Whether {@code key} has consumer group {@code group} (a reply's first line is all {@link TestRedis} reads). */
    private static boolean groupExists(String key, String group) throws Exception {
        String reply = shared.command("XINFO CONSUMERS " + key + " " + group);
        assertTrue(reply.startsWith("*") || reply.startsWith("-NOGROUP"), reply);
        return reply.startsWith("*");
    }

    private static void assertMessage(String parameter, IllegalArgumentException e) {
        assertTrue(e.getMessage().startsWith(parameter + " "), e.getMessage());
    }

    @Test
    void keysArePrefixedAndStreamsTrimmed() throws Exception {
        String prefix = unique("app") + ":";
        RedisStreamsMessageStore s = RedisStreamsMessageStore.builder().uri(shared.uri()).keyPrefix(prefix)
                .maxLen(10).build();
        closing.add(s::dispose);
        for (int i = 0; i < 1_000; i++) {
            s.append("orders", b("m" + i)).block(WAIT);
        }
        assertEquals(prefix + "orders", s.key("orders"));
        assertEquals(":1", shared.command("EXISTS " + prefix + "orders"));
        long len = Long.parseLong(shared.command("XLEN " + prefix + "orders").substring(1));
        assertTrue(len < 1_000 && len >= 10, "MAXLEN ~ 10 trimmed 1,000 entries to " + len);
    }

    // ================================================================== what clients may create

    /**
     * Subject names come from clients: a fetch of a subject nobody appended to answers empty and creates
     * nothing in Redis (no stream, no group); the group is created at its first fetch once the stream exists,
     * at the oldest entry, so it misses nothing appended meanwhile.
     */
    @Test
    void aFetchNeverCreatesAStream() throws Exception {
        String prefix = unique("nostream") + ":";
        RedisStreamsMessageStore s = RedisStreamsMessageStore.builder().uri(shared.uri()).keyPrefix(prefix).build();
        closing.add(s::dispose);
        assertEquals(List.of(), s.fetch("ghost", "g", -1, 10).block(WAIT));
        assertEquals(List.of(), s.fetch("ghost", "g", 0, 10).block(WAIT));
        assertEquals(":0", shared.command("EXISTS " + prefix + "ghost"));
        long first = s.append("ghost", b("a")).block(WAIT);
        s.append("ghost", b("b")).block(WAIT);
        List<Message> got = s.fetch("ghost", "g", 0, 10).block(WAIT);
        assertEquals(2, got.size());
        assertEquals(first, got.get(0).offset());
        assertEquals(List.of(), s.fetch("ghost", "g", 0, 10).block(WAIT)); // the group exists: nothing new
    }

    /**
     * Group names come from clients: a stream holds at most {@code maxGroupsPerSubject} groups. A fetch for one
     * more fails with {@link RedisGroupLimitExceededException} and creates nothing; the existing groups go on,
     * and so do other subjects; through the pull consumer, the new group's pull fails with the store's error.
     */
    @Test
    void aStreamHoldsAtMostMaxGroupsPerSubjectGroups() throws Exception {
        String prefix = unique("groups") + ":";
        RedisStreamsMessageStore s = RedisStreamsMessageStore.builder().uri(shared.uri()).keyPrefix(prefix)
                .maxGroupsPerSubject(2).commandTimeout(Duration.ofSeconds(20)).build();
        closing.add(s::dispose);
        assertEquals(2, s.maxGroupsPerSubject());
        assertEquals(RedisStreamsMessageStore.DEFAULT_MAX_GROUPS_PER_SUBJECT,
                store(shared, prefix + "x:", "defaults").maxGroupsPerSubject());
        s.append("t", b("m")).block(WAIT);
        assertEquals(1, s.fetch("t", "g1", 0, 10).block(WAIT).size());
        assertEquals(1, s.fetch("t", "g2", -1, 10).block(WAIT).size());
        RedisGroupLimitExceededException e = assertThrows(RedisGroupLimitExceededException.class,
                () -> s.fetch("t", "g3", 0, 10).block(WAIT));
        assertEquals(2, e.limit());
        assertTrue(e.getMessage().contains("maxGroupsPerSubject") && e.getMessage().contains("g3"), e.getMessage());
        assertFalse(groupExists(prefix + "t", "g3"), "no group created");
        assertTrue(groupExists(prefix + "t", "g2"));
        // the existing groups go on; another subject has room of its own
        s.append("t", b("n")).block(WAIT);
        assertEquals(1, s.fetch("t", "g1", 1, 10).block(WAIT).size());
        s.append("u", b("m")).block(WAIT);
        assertEquals(1, s.fetch("u", "g3", 0, 10).block(WAIT).size());

        PullConsumer c = consumer(s, Duration.ofSeconds(30));
        Throwable error = assertThrows(Throwable.class, () -> c.pullOnce("t", "g4", 10).block(WAIT));
        boolean caused = false;
        for (Throwable t = error; t != null; t = t.getCause()) {
            caused |= t instanceof RedisGroupLimitExceededException;
        }
        assertTrue(caused, error.toString());
        assertFalse(c.pullOnce("t", "g2", 10).block(WAIT).messages().isEmpty(), "an existing group is served");
    }

    /**
     * A full stream makes room for a new group by destroying the group nobody read for longest, if for at least
     * {@code groupRetention}, one per new group. Kept however idle: a group that read everything (Redis 6.2 cannot
     * tell it from one polling a quiet stream) and a group with no consumer (created by someone else); kept too:
     * a group that read recently, though an old entry waits for it. Retention 5 s: a group would be destroyed
     * too early only after a stall of 5 s between two calls of this test.
     */
    @Test
    void theGroupUnreadLongestMakesRoomForANewOneOnAFullStream() throws Exception {
        String prefix = unique("idle-groups") + ":";
        RedisStreamsMessageStore s = RedisStreamsMessageStore.builder().uri(shared.uri()).keyPrefix(prefix)
                .maxGroupsPerSubject(5).groupRetention(Duration.ofSeconds(5)).sweepInterval(Duration.ZERO)
                .commandTimeout(Duration.ofSeconds(20)).build();
        closing.add(s::dispose);
        assertEquals(Duration.ofSeconds(5), s.groupRetention());
        RedisStreamsMessageStore defaults = store(shared, prefix + "x:", "defaults");
        assertEquals(RedisStreamsMessageStore.DEFAULT_GROUP_RETENTION, defaults.groupRetention());
        s.append("t", b("m")).block(WAIT);
        shared.command("XGROUP CREATE " + prefix + "t g0 0"); // no consumer: never destroyed
        assertEquals(1, s.fetch("t", "g1", 0, 10).block(WAIT).size());
        s.append("t", b("n")).block(WAIT);
        s.append("t", b("o")).block(WAIT); // g1 never reads n and o
        assertEquals(3, s.fetch("t", "g2", 0, 10).block(WAIT).size()); // g2 read everything
        assertEquals(1, s.fetch("t", "recent", 0, 1).block(WAIT).size()); // reads one at a time
        pause(500);
        assertEquals(1, s.fetch("t", "g6", 0, 1).block(WAIT).size()); // unread, but half a second less than g1
        assertThrows(RedisGroupLimitExceededException.class, () -> s.fetch("t", "g3", 0, 10).block(WAIT),
                "nobody unread for 5 s yet");
        pause(5_500);
        // g2 asks for more and finds nothing: Redis 6.2 and 7.0 do not count that as a read (g2 is kept because it
        // read everything), 7.2 and later do (kept because it read now); either way g2 must be kept below
        assertEquals(List.of(), s.fetch("t", "g2", 1, 10).block(WAIT));
        assertEquals(1, s.fetch("t", "recent", 1, 1).block(WAIT).size()); // o still waits for it, 5.5 s old
        assertEquals(3, s.fetch("t", "g3", 0, 10).block(WAIT).size(), "g1, unread longest, made room");
        assertFalse(groupExists(prefix + "t", "g1"), "g1 destroyed");
        for (String kept : new String[] {"g0", "g2", "recent", "g6", "g3"}) {
            assertTrue(groupExists(prefix + "t", kept), kept + " kept: one group per new group");
        }
        assertEquals(3, s.fetch("t", "g4", 0, 10).block(WAIT).size(), "g6, unread for 5 s too, made room");
        assertFalse(groupExists(prefix + "t", "g6"), "g6 destroyed");
        assertThrows(RedisGroupLimitExceededException.class, () -> s.fetch("t", "g7", 0, 10).block(WAIT),
                "nothing unread for 5 s: g2 read everything, recent read recently, g0 has no consumer");
        // g1 comes back as a new group would, at the oldest entry held (at least once), once there is room
        shared.command("XGROUP DESTROY " + prefix + "t g0");
        assertEquals(3, s.fetch("t", "g1", 0, 10).block(WAIT).size());
    }

    /**
     * A stream's groups are walked for one to destroy at most once per interval (1 s by default; 1 h here), across
     * instances: a walk that found nothing leaves the key {@code <keyPrefix>#group-walk:<subject>} for the interval,
     * and until it expires a new group is refused without a walk, even once a group is unread long enough.
     */
    @Test
    void aFullStreamsGroupsAreWalkedAtMostOncePerInterval() throws Exception {
        String prefix = unique("group-walk") + ":";
        RedisStreamsMessageStore s = RedisStreamsMessageStore.builder().uri(shared.uri()).keyPrefix(prefix)
                .maxGroupsPerSubject(1).groupRetention(Duration.ofSeconds(4)).sweepInterval(Duration.ofHours(1))
                .commandTimeout(Duration.ofSeconds(20)).build();
        closing.add(s::dispose);
        s.append("u", b("m")).block(WAIT);
        assertEquals(1, s.fetch("u", "g1", 0, 10).block(WAIT).size());
        s.append("u", b("n")).block(WAIT); // g1 never reads it
        assertThrows(RedisGroupLimitExceededException.class, () -> s.fetch("u", "g2", 0, 10).block(WAIT));
        assertEquals(":1", shared.command("EXISTS " + prefix + "#group-walk:u"), "the walk ran, and left its key");
        pause(4_500);
        assertThrows(RedisGroupLimitExceededException.class, () -> s.fetch("u", "g2", 0, 10).block(WAIT),
                "no second walk within the interval");
        assertTrue(groupExists(prefix + "u", "g1"));
        shared.command("DEL " + prefix + "#group-walk:u"); // the interval is over
        assertEquals(2, s.fetch("u", "g2", 0, 10).block(WAIT).size());
        assertFalse(groupExists(prefix + "u", "g1"));
    }

    /**
     * Subject names come from clients: the store creates streams for at most {@code maxSubjects} of them. An
     * append that would create one more fails with {@link io.reactoractor.pull.SubjectLimitExceededException}
     * and creates nothing; appends to existing streams go on, including a stream the registry did not know
     * (created before it); a stream deleted by an operator frees its place.
     */
    @Test
    void theStoreCreatesStreamsForAtMostMaxSubjectsSubjects() throws Exception {
        String prefix = unique("subjects") + ":";
        RedisStreamsMessageStore s = RedisStreamsMessageStore.builder().uri(shared.uri()).keyPrefix(prefix)
                .maxSubjects(2).sweepInterval(Duration.ZERO).commandTimeout(Duration.ofSeconds(20)).build();
        closing.add(s::dispose);
        assertEquals(2, s.maxSubjects());
        assertEquals(prefix + "#subjects", s.registryKey());
        s.append("a", b("1")).block(WAIT);
        s.append("b", b("1")).block(WAIT);
        s.fetch("never-appended", "g", -1, 10).block(WAIT); // a fetch registers nothing
        io.reactoractor.pull.SubjectLimitExceededException e = assertThrows(
                io.reactoractor.pull.SubjectLimitExceededException.class, () -> s.append("c", b("1")).block(WAIT));
        assertEquals(2, e.limit());
        assertEquals(":0", shared.command("EXISTS " + prefix + "c"));
        s.append("a", b("2")).block(WAIT); // existing subjects go on
        // a stream created before the registry (or by an older instance) is never refused, and joins it
        shared.command("XADD " + prefix + "old * p x");
        s.append("old", b("1")).block(WAIT);
        assertEquals(":1", shared.command("SISMEMBER " + prefix + "#subjects old"));
        assertEquals(":3", shared.command("SCARD " + prefix + "#subjects"));
        // streams deleted by an operator free their places: a refused append sweeps the set for them
        shared.command("DEL " + prefix + "a");
        shared.command("DEL " + prefix + "b");
        s.append("c", b("1")).block(WAIT);
        assertEquals(":1", shared.command("EXISTS " + prefix + "c"));
        assertEquals(":0", shared.command("SISMEMBER " + prefix + "#subjects a"));
        assertEquals(1, s.fetch("c", "g", 0, 10).block(WAIT).size());
        // dead letters are never refused: one stream per group at most, and refusing one would keep the
        // message pending and nacked again forever
        s.append("c", b("2")).block(WAIT);
        Message second = s.fetch("c", "g", 0, 10).block(WAIT).get(0);
        s.deadLetter("c", "g", second).block(WAIT);
        assertEquals(":1", shared.command("EXISTS " + prefix + "dlq.g"));
        // ... and take no subject's room (the Javadoc: dead-letter streams excepted)
        assertEquals(":0", shared.command("SISMEMBER " + prefix + "#subjects dlq.g"));
    }

    // ================================================================== several instances

    @Test
    void anAppendOnOneInstanceWakesALongPollOnAnother() {
        String prefix = unique("wake") + ":";
        PullConsumer a = consumer(store(shared, prefix, "a"), Duration.ofSeconds(30));
        CountingFetches bStore = new CountingFetches(store(shared, prefix, "b"));
        PullConsumer b = consumer(bStore, Duration.ofSeconds(30));
        Mono<PullResult> poll = b.pull("s", "g", 10, Duration.ofSeconds(120)).cache();
        poll.subscribe();
        // the poll waits 120 s: only the Pub/Sub wake-up can answer it within WAIT
        // B has asked Redis and its answer came back empty (no stream yet: a fetch creates none), so the
        // append below cannot be read by that fetch
        await(() -> bStore.emptyAnswers.get() > 0);
        pause(200); // not needed for correctness: B is waiting for a wake-up, so only a wake-up helps
        a.appendAsync("s", b("from a")).block(WAIT);
        PullResult r = poll.block(WAIT);
        assertEquals(PullResult.Status.MESSAGES, r.status());
        assertEquals("from a", r.messages().get(0).payloadAsString());
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(Supplier<Boolean> condition) {
        try {
            await(condition, "condition");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void anInstanceTakesOverTheMessagesOfOneThatDied() {
        String prefix = unique("dead") + ":";
        RedisStreamsMessageStore dying = store(shared, prefix, "dying");
        for (int i = 0; i < 3; i++) {
            dying.append("s", b("m" + i)).block(WAIT);
        }
        assertEquals(3, dying.fetch("s", "g", -1, 10).block(WAIT).size(), "taken by the dying instance");
        dying.dispose(); // dies without acknowledging

        PullConsumer survivor = consumer(store(shared, prefix, "survivor"), Duration.ofMillis(300));
        List<String> got = new ArrayList<>();
        while (got.size() < 3) {
            PullResult r = survivor.pull("s", "g", 10, Duration.ofSeconds(20)).block(WAIT);
            assertEquals(PullResult.Status.MESSAGES, r.status(), "reclaimed within the poll");
            r.messages().forEach(m -> got.add(m.payloadAsString()));
            survivor.ack("s", "g", r.messages().stream().map(Message::offset).toList()).block(WAIT);
        }
        assertEquals(List.of("m0", "m1", "m2"), got.stream().sorted().toList());
        AsyncMessageStore.Position p = survivor.asyncStore().position("s", "g").block(WAIT);
        assertEquals(0, p.pending(), "all acknowledged: " + p);
        assertEquals(0, p.lag());
    }

    /**
     * Several instances behind a load balancer: the ack (or nack) of a message may reach another instance
     * than the one that delivered it. The message is settled in Redis there, and the delivering instance
     * does not hand it out again once its ack timeout passes (it asks Redis first).
     */
    @Test
    void anAckThroughAnotherInstanceSettlesTheMessageForGood() throws Exception {
        String prefix = unique("xack") + ":";
        PullConsumer a = consumer(store(shared, prefix, "a"), Duration.ofMillis(300));
        PullConsumer b = consumer(store(shared, prefix, "b"), Duration.ofMillis(300));
        a.appendAsync("s", b("x")).block(WAIT);
        a.appendAsync("s", b("y")).block(WAIT);
        PullResult r = a.pull("s", "g", 10, Duration.ofSeconds(10)).block(WAIT);
        assertEquals(2, r.messages().size());
        b.ack("s", "g", r.epoch(), List.of(r.messages().get(0).offset())).block(WAIT);
        // past the ack timeout: y (not acknowledged) comes again, x does not
        PullResult again = a.pull("s", "g", 10, Duration.ofSeconds(10)).block(WAIT);
        assertEquals(List.of("y"), again.messages().stream().map(Message::payloadAsString).toList());
        a.ack("s", "g", again.epoch(), List.of(again.messages().get(0).offset())).block(WAIT);
        PullResult none = a.pull("s", "g", 10, Duration.ofSeconds(1)).block(WAIT);
        assertEquals(List.of(), none.messages(), "nothing comes again");
        await(() -> a.stats("s", "g").inFlight() == 0, "settled on the delivering instance too");
        AsyncMessageStore.Position p = a.asyncStore().position("s", "g").block(WAIT);
        assertEquals(0, p.pending(), p.toString());
    }

    /**
     * Entries trimmed from the stream while pending are gone: {@code renewPending} does not report them, so the
     * delivering instance does not hand its own copies out again, and they leave the pending list. Redis 6.2
     * (the test server) still answers their IDs to {@code XCLAIM ... JUSTID}, which made them look pending.
     */
    @Test
    void entriesTrimmedWhilePendingAreNotRenewedAndLeaveThePendingList() throws Exception {
        String prefix = unique("trim") + ":";
        RedisStreamsMessageStore a = store(shared, prefix, "a");
        long[] offsets = new long[3];
        for (int i = 0; i < 3; i++) {
            offsets[i] = a.append("s", b("m" + i)).block(WAIT);
        }
        assertEquals(3, a.fetch("s", "g", -1, 10).block(WAIT).size());
        assertEquals(":2", shared.command("XTRIM " + prefix + "s MINID "
                + RedisStreamsMessageStore.streamId(offsets[2])), "m0 and m1 trimmed");
        assertEquals(List.of(offsets[2]),
                java.util.Arrays.stream(a.renewPending("s", "g", offsets).block(WAIT)).boxed().toList(),
                "only m2 is still there to deliver");
        assertEquals(1, a.position("s", "g").block(WAIT).pending(), "the trimmed ones left the pending list");
    }

    /** The same through the pull consumer: after the ack timeout only what the stream still holds comes again. */
    @Test
    void messagesTrimmedWhileInFlightAreNotDeliveredAgain() throws Exception {
        String prefix = unique("trimmed") + ":";
        PullConsumer c = consumer(store(shared, prefix, "a"), Duration.ofMillis(300));
        for (int i = 0; i < 3; i++) {
            c.appendAsync("s", b("m" + i)).block(WAIT);
        }
        PullResult r = c.pull("s", "g", 10, Duration.ofSeconds(10)).block(WAIT);
        assertEquals(3, r.messages().size());
        assertEquals(":3", shared.command("XTRIM " + prefix + "s MAXLEN 0"));
        c.appendAsync("s", b("new")).block(WAIT);
        List<String> seen = new ArrayList<>();
        long until = System.nanoTime() + Duration.ofSeconds(2).toNanos(); // several ack timeouts
        while (System.nanoTime() < until) {
            PullResult p = c.pull("s", "g", 10, Duration.ofMillis(400)).block(WAIT);
            p.messages().forEach(m -> seen.add(m.payloadAsString()));
            if (!p.messages().isEmpty()) {
                c.ack("s", "g", p.epoch(), p.messages().stream().map(Message::offset).toList()).block(WAIT);
            }
        }
        assertEquals(List.of("new"), seen, "m0-m2 were trimmed away while in flight");
        await(() -> c.stats("s", "g").inFlight() == 0, "nothing left in flight");
        assertEquals(0, c.asyncStore().position("s", "g").block(WAIT).pending());
    }

    @Test
    void aSkipThroughEitherInstanceAcknowledgesInRedis() throws Exception {
        String prefix = unique("skip") + ":";
        PullConsumer a = PullConsumer.builder(scheduler).asyncStore(store(shared, prefix, "a"))
                .ackTimeout(Duration.ofMillis(300)).failurePolicy(FailurePolicy.skip()).build();
        closing.add(a::dispose);
        PullConsumer b = PullConsumer.builder(scheduler).asyncStore(store(shared, prefix, "b"))
                .ackTimeout(Duration.ofMillis(300)).failurePolicy(FailurePolicy.skip()).build();
        closing.add(b::dispose);
        a.appendAsync("s", b("x")).block(WAIT);
        a.appendAsync("s", b("y")).block(WAIT);
        PullResult r = a.pull("s", "g", 10, Duration.ofSeconds(10)).block(WAIT);
        assertEquals(2, r.messages().size());
        a.nack("s", "g", r.epoch(), r.messages().get(0).offset()).block(WAIT); // on the delivering instance
        b.nack("s", "g", r.epoch(), r.messages().get(1).offset()).block(WAIT); // through another one
        await(() -> a.asyncStore().position("s", "g").block(WAIT).pending() == 0, "both acknowledged in Redis");
        assertEquals(List.of(), b.pull("s", "g", 10, Duration.ofSeconds(1)).block(WAIT).messages());
        assertEquals(List.of(), a.pull("s", "g", 10, Duration.ofSeconds(1)).block(WAIT).messages());
        assertEquals(1, a.stats("s", "g").skipped());
        assertEquals(1, b.stats("s", "g").skipped());
    }

    @Test
    void aRestartedInstanceWithTheSameNameGetsItsPendingMessagesAtOnce() {
        String prefix = unique("restart") + ":";
        RedisStreamsMessageStore before = store(shared, prefix, "app-1");
        for (int i = 0; i < 3; i++) {
            before.append("s", b("m" + i)).block(WAIT);
        }
        assertEquals(3, before.fetch("s", "g", -1, 10).block(WAIT).size());
        before.dispose(); // the process ends without acknowledging

        // ack timeout 10 min: no reclaim can hand them out within this test, only reading its own pending
        PullConsumer after = consumer(store(shared, prefix, "app-1"), Duration.ofMinutes(10));
        PullResult r = after.pull("s", "g", 10, Duration.ofSeconds(20)).block(WAIT);
        assertEquals(List.of("m0", "m1", "m2"), r.messages().stream().map(Message::payloadAsString).toList());
        after.ack("s", "g", r.messages().stream().map(Message::offset).toList()).block(WAIT);
        after.appendAsync("s", b("m3")).block(WAIT);
        PullResult next = after.pull("s", "g", 10, Duration.ofSeconds(20)).block(WAIT);
        assertEquals(List.of("m3"), next.messages().stream().map(Message::payloadAsString).toList(),
                "then new messages, the acknowledged ones not again");
    }

    @Test
    void renewRestartsTheIdleTimeSoOtherInstancesDoNotReclaim() throws Exception {
        String prefix = unique("renew") + ":";
        RedisStreamsMessageStore a = store(shared, prefix, "a");
        RedisStreamsMessageStore b = store(shared, prefix, "b");
        long offset = a.append("s", b("slow")).block(WAIT);
        assertEquals(1, a.fetch("s", "g", -1, 10).block(WAIT).size());
        pause(1_000);
        a.renew("s", "g", new long[] {offset}).block(WAIT); // a delivers it again
        // without the renewal it has been idle for 1 s or more, and b (1 s minimum idle) would take it over
        assertEquals(List.of(), b.reclaim("s", "g", 0, Duration.ofSeconds(1), 10).block(WAIT).messages());
        pause(1_000);
        assertEquals(1, b.reclaim("s", "g", 0, Duration.ofSeconds(1), 10).block(WAIT).messages().size(),
                "idle again for 1 s: taken over");
    }

    @Test
    void reclaimSkipsMessagesStillWithinTheAckTimeout() {
        String prefix = unique("idle") + ":";
        RedisStreamsMessageStore a = store(shared, prefix, "a");
        RedisStreamsMessageStore b = store(shared, prefix, "b");
        a.append("s", b("x")).block(WAIT);
        assertEquals(1, a.fetch("s", "g", -1, 10).block(WAIT).size());
        assertEquals(List.of(), b.reclaim("s", "g", 0, Duration.ofMinutes(10), 10).block(WAIT).messages());
        assertEquals(1, b.reclaim("s", "g", 0, Duration.ZERO, 10).block(WAIT).messages().size());
    }

    @Test
    void consumersThatHoldNothingAndWentIdleAreRemoved() throws Exception {
        String prefix = unique("expire") + ":";
        for (String name : new String[] {"gone-1", "gone-2"}) {
            RedisStreamsMessageStore gone = store(shared, prefix, name);
            gone.append("s", b("x")).block(WAIT);
            List<Message> m = gone.fetch("s", "g", -1, 10).block(WAIT);
            gone.acknowledge("s", "g", m.stream().mapToLong(Message::offset).toArray(), -1).block(WAIT);
            gone.dispose();
        }
        RedisStreamsMessageStore holder = store(shared, prefix, "holder");
        holder.append("s", b("held")).block(WAIT);
        assertEquals(1, holder.fetch("s", "g", -1, 10).block(WAIT).size()); // holder keeps it pending
        assertEquals("*3", shared.command("XINFO CONSUMERS " + prefix + "s g"));
        pause(50); // idle > 1 ms
        RedisStreamsMessageStore survivor = RedisStreamsMessageStore.builder().uri(shared.uri()).keyPrefix(prefix)
                .consumerName("survivor").consumerExpiry(Duration.ofMillis(1)).build();
        closing.add(survivor::dispose);
        survivor.reclaim("s", "g", 0, Duration.ofMinutes(10), 10).block(WAIT);
        // gone-1 and gone-2 held nothing: removed; holder has a pending message: kept; survivor: never there
        assertEquals("*1", shared.command("XINFO CONSUMERS " + prefix + "s g"));
        assertEquals(1, survivor.position("s", "g").block(WAIT).pending());
    }

    /**
     * Found by a black-box probe: the expiry read the consumers ({@code XINFO CONSUMERS}) and removed the idle ones
     * ({@code XGROUP DELCONSUMER}) in two commands, and a fetch by another instance that landed between them was
     * removed with its consumer: Redis drops a deleted consumer's pending entries, so the message left the pending
     * list unacknowledged and nobody could reclaim it. On the two-command expiry this failed within 2-66 rounds.
     */
    @Test
    void aConsumerHandedAMessageWhileAnotherInstanceExpiresIdleConsumersKeepsItPending() throws Exception {
        String prefix = unique("expire-race") + ":";
        RedisStreamsMessageStore expiring = RedisStreamsMessageStore.builder().uri(shared.uri()).keyPrefix(prefix)
                .consumerName("expiring").consumerExpiry(Duration.ofMillis(1)).commandTimeout(WAIT).build();
        closing.add(expiring::dispose);
        RedisStreamsMessageStore reader = store(shared, prefix, "reader");
        reader.append("s", b("first")).block(WAIT);
        List<Message> first = reader.fetch("s", "g", -1, 10).block(WAIT);
        reader.acknowledge("s", "g", first.stream().mapToLong(Message::offset).toArray(), -1).block(WAIT);
        for (int round = 0; round < 300; round++) {
            reader.append("s", b("m" + round)).block(WAIT);
            Thread.sleep(3); // the reader holds nothing and is idle past the other instance's expiry
            Mono<AsyncMessageStore.Reclaimed> reclaim = expiring.reclaim("s", "g", 0, Duration.ofHours(1), 10)
                    .subscribeOn(Schedulers.parallel());
            Mono<List<Message>> fetch = reader.fetch("s", "g", 0, 10).subscribeOn(Schedulers.parallel());
            List<Message> got = Mono.zip(reclaim, fetch).block(WAIT).getT2();
            if (got.isEmpty()) {
                got = reader.fetch("s", "g", 0, 10).block(WAIT);
            }
            long[] offsets = got.stream().mapToLong(Message::offset).toArray();
            assertEquals(1, offsets.length, "round " + round);
            assertEquals(1, reader.position("s", "g").block(WAIT).pending(),
                    "round " + round + ": the message handed to the reader is still pending");
            assertEquals(1, reader.renewPending("s", "g", offsets).block(WAIT).length, "round " + round);
            reader.acknowledge("s", "g", offsets, -1).block(WAIT);
        }
    }

    // ================================================================== Redis failures

    @Test
    void aRedisRestartWithAofLosesNothing() throws Exception {
        TestRedis redis = TestRedis.start(true);
        closing.add(redis);
        RedisStreamsMessageStore s = store(redis, "aof:", "c");
        List<Long> offsets = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            offsets.add(s.append("s", b("m" + i)).block(WAIT));
        }
        List<Message> taken = s.fetch("s", "g", -1, 10).block(WAIT);
        assertEquals(offsets, taken.stream().map(Message::offset).toList());
        s.acknowledge("s", "g", offsets.subList(0, 5).stream().mapToLong(Long::longValue).toArray(), -1).block(WAIT);

        redis.kill(); // SIGKILL: only what AOF (fsync always) kept survives
        redis.restart();
        AsyncMessageStore.Position p = retry(() -> s.position("s", "g"));
        assertEquals(5, p.pending(), "the unacknowledged are still pending: " + p);
        assertEquals(offsets.get(5), p.committedOffset());
        assertEquals(offsets.get(9) + 1, p.endOffset());
        List<Message> again = s.reclaim("s", "g", 0, Duration.ZERO, 100).block(WAIT).messages();
        assertEquals(offsets.subList(5, 10), again.stream().map(Message::offset).toList(),
                "exactly the unacknowledged, none of the acknowledged");
        assertEquals(List.of(), s.fetch("s", "g", offsets.get(9) + 1, 10).block(WAIT), "nothing new");
        long next = s.append("s", b("after")).block(WAIT);
        assertTrue(next > offsets.get(9), "offsets keep increasing after the restart");
    }

    private static <T> T retry(Supplier<Mono<T>> call) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            try {
                return call.get().block(WAIT);
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50); // reconnecting
            }
        }
    }

    @Test
    void redisDownFailsFastAndReconnects() throws Exception {
        TestRedis redis = TestRedis.start(false);
        closing.add(redis);
        RedisStreamsMessageStore store = store(redis, "down:", "c");
        PullConsumer c = consumer(store, Duration.ofSeconds(30));
        c.appendAsync("s", b("before")).block(WAIT);
        assertTrue(store.connected());
        PullResult first = c.pull("s", "g", 10, Duration.ofSeconds(5)).block(WAIT);
        List<Long> unacked = first.messages().stream().map(Message::offset).toList();

        redis.kill();
        // the ack is answered only once Redis recorded it: here it fails, nothing is reported settled
        Throwable ack = assertThrows(RuntimeException.class, () -> c.ack("s", "g", unacked).block(WAIT));
        assertInstanceOf(MessageStoreException.class, ack, ack.toString());
        Throwable append = assertThrows(RuntimeException.class, () -> c.appendAsync("s", b("lost")).block(WAIT));
        assertInstanceOf(MessageStoreException.class, append, append.toString());
        // what a new pull is failed by (without a read of its own): the connection state
        for (long until = System.nanoTime() + WAIT.toNanos(); store.connected() && System.nanoTime() < until; ) {
            Thread.sleep(10); // Lettuce saw the connection drop when the ack failed; a liveness bound only
        }
        assertFalse(store.connected(), "disconnected");
        // a long poll is failed, not left waiting for its 60 s timeout (block(WAIT) would time out)
        Throwable pull = assertThrows(RuntimeException.class,
                () -> c.pull("s", "g", 10, Duration.ofSeconds(60)).block(WAIT));
        assertInstanceOf(MessageStoreException.class, pull, pull.toString());

        redis.restart();
        long offset = retry(() -> c.appendAsync("s", b("after")));
        PullResult r = retry(() -> c.pull("s", "g", 10, Duration.ofSeconds(5)));
        assertTrue(store.connected(), "reconnected");
        assertEquals(List.of(offset), r.messages().stream().map(Message::offset).toList(),
                "reconnected; the failed append was not stored (Redis had no AOF and restarted empty)");
    }

    /**
     * An append whose notification was lost while the store's Pub/Sub connection was down (here: an entry added
     * without one, then that connection killed) reaches a long poll that waited across it, once Lettuce has
     * subscribed again (found by a black-box probe: the poll waited out its whole timeout, answered empty,
     * though the message was there).
     */
    @Test
    void aLongPollWaitingAcrossALostNotificationConnectionLooksAgainOnceResubscribed() throws Exception {
        String prefix = unique("resub") + ":";
        RedisStreamsMessageStore store = store(shared, prefix, "c");
        PullConsumer c = consumer(store, Duration.ofSeconds(30));
        c.appendAsync("s", b("first")).block(WAIT);
        PullResult first = c.pull("s", "g", 10, Duration.ofSeconds(10)).block(WAIT);
        c.ack("s", "g", first.epoch(), first.messages().stream().map(Message::offset).toList()).block(WAIT);

        CompletableFuture<PullResult> waiting = c.pull("s", "g", 10, Duration.ofSeconds(60)).toFuture();
        await(() -> c.stats("s", "g").waitingPulls() == 1, "the long poll waits");
        // an append nobody is told of: what an append made while the Pub/Sub connection is down amounts to
        String id = shared.command("XADD " + prefix + "s * " + RedisStreamsMessageStore.PAYLOAD_FIELD + " unheard");
        assertTrue(id.startsWith("$"), id); // a bulk string: the entry's ID on the next line
        pause(300);
        assertFalse(waiting.isDone(), "not heard, so not fetched: " + waiting);
        String killed = shared.command("CLIENT KILL TYPE pubsub");
        assertTrue(killed.startsWith(":") && !killed.equals(":0"), killed);

        PullResult r = waiting.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(PullResult.Status.MESSAGES, r.status(), r.toString());
        assertEquals(List.of("unheard"), r.messages().stream().map(Message::payloadAsString).toList());
    }

    @Test
    void aSlowRedisNeverHoldsAPollPastItsTimeout() throws Exception {
        TestRedis redis = TestRedis.start(false);
        closing.add(redis);
        PullConsumer c = consumer(store(redis, "slow:", "c"), Duration.ofSeconds(30));
        c.appendAsync("warm", b("x")).block(WAIT); // connected
        // Redis answers nothing for 60 s (longer than any wait below); the store is killed after the test
        CompletableFuture.runAsync(() -> {
            try {
                redis.command("DEBUG SLEEP 60");
            } catch (Exception ignored) {
                // killed at the end of the test
            }
        });
        Thread.sleep(200); // not needed for correctness: lets DEBUG SLEEP start first, most of the time
        // a poll of 300 ms: answered by its own deadline, not after Redis (60 s) or the command timeout (20 s,
        // which would fail it with a MessageStoreException)
        PullResult r = c.pull("s", "g", 10, Duration.ofMillis(300)).block(Duration.ofSeconds(10));
        assertEquals(PullResult.Status.TIMED_OUT, r.status());
    }

    /** The Redis store, counting fetches that completed empty (to know a group has asked and found nothing). */
    private static final class CountingFetches implements AsyncMessageStore {
        private final RedisStreamsMessageStore store;
        final AtomicInteger emptyAnswers = new AtomicInteger();

        CountingFetches(RedisStreamsMessageStore store) {
            this.store = store;
        }

        @Override
        public Mono<List<Message>> fetch(String subject, String group, long fromOffset, int maxMessages) {
            return store.fetch(subject, group, fromOffset, maxMessages).doOnNext(m -> {
                if (m.isEmpty()) {
                    emptyAnswers.incrementAndGet();
                }
            });
        }

        @Override
        public Mono<Long> append(String subject, byte[] payload) {
            return store.append(subject, payload);
        }

        @Override
        public String epoch() {
            return store.epoch();
        }

        @Override
        public boolean denseOffsets() {
            return store.denseOffsets();
        }

        @Override
        public boolean pipelinedFetches() {
            return store.pipelinedFetches();
        }

        @Override
        public boolean connected() {
            return store.connected();
        }

        @Override
        public Mono<Void> acknowledge(String subject, String group, long[] offsets, long committed) {
            return store.acknowledge(subject, group, offsets, committed);
        }

        @Override
        public Mono<Reclaimed> reclaim(String subject, String group, long cursor, Duration minIdle, int maxMessages) {
            return store.reclaim(subject, group, cursor, minIdle, maxMessages);
        }

        @Override
        public Mono<Void> renew(String subject, String group, long[] offsets) {
            return store.renew(subject, group, offsets);
        }

        @Override
        public Mono<Void> deadLetter(String subject, String group, Message message) {
            return store.deadLetter(subject, group, message);
        }

        @Override
        public Mono<Position> position(String subject, String group) {
            return store.position(subject, group);
        }

        @Override
        public reactor.core.Disposable addAppendListener(io.reactoractor.pull.MessageStore.AppendListener listener) {
            return store.addAppendListener(listener);
        }
    }
}
