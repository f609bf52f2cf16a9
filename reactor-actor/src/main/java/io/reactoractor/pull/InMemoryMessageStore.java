package io.reactoractor.pull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

import reactor.core.Disposable;

/**
 * The embedded {@link MessageStore}: subjects kept in memory with a bounded retention (the newest
 * {@code retention} messages of each subject), committed offsets in a concurrent map.
 *
 * <p>Each subject is a ring buffer that grows by doubling up to the retention, guarded by the
 * subject's own monitor: an append or a read holds it for a few array accesses only, and different
 * subjects never contend. The end offset is a volatile field written inside the monitor before the
 * listeners run, so {@link #endOffset} is a lock-free read (the pull consumer calls it on every
 * "is there new data?" check).
 *
 * <h2>Bounded subjects</h2>
 * Subjects are named by clients (an append or a pull creates one), so their number is bounded:
 * {@link Builder#maxSubjects maxSubjects} (default {@value #DEFAULT_MAX_SUBJECTS}). When a new subject
 * would pass the bound, the subjects that never held a message and have no committed offset are
 * removed first: nothing is lost, since such a subject reads exactly as one that does not exist, and
 * the next append or pull creates it again at offset 0. If every subject holds messages, the call is
 * refused with {@link SubjectLimitExceededException} and nothing is created. A subject that holds
 * messages is never removed: its messages are data, bounded by the retention.
 *
 * <h2>Bounded committed offsets</h2>
 * A committed offset is kept per (subject, group), and groups are named by clients too, so their number
 * is bounded as well: {@link Builder#maxCommittedOffsets maxCommittedOffsets} (default
 * {@value #DEFAULT_MAX_COMMITTED_OFFSETS}). An offset is <em>used</em> when it is committed and when
 * {@link #committedOffset} reads it (a group starting, or the pull consumer's {@code stats} of the pair).
 * When a commit for a new pair would pass the
 * bound, the offsets not used for {@link Builder#offsetRetention offsetRetention} (default 7 days, as
 * Kafka's {@code offsets.retention.minutes}) are removed first; if none is that old, the commit is
 * refused with {@link OffsetLimitExceededException} and nothing is recorded. A refused commit loses
 * nothing: the pull consumer keeps the group's progress (the group does not retire while it holds some)
 * and commits again at each of the group's turns until the store has room. A removed offset reads as never
 * committed: if its group comes back, it starts again
 * at the oldest message held and may receive again what it had acknowledged (at least once, never
 * lost). Offsets are only removed to make room, never by time alone, so a store below the bound keeps
 * every offset.
 *
 * <pre>{@code
 * MessageStore store = InMemoryMessageStore.builder().retention(1_000_000).build();
 * }</pre>
 */
public final class InMemoryMessageStore implements MessageStore {

    /** Default number of messages kept per subject. */
    public static final int DEFAULT_RETENTION = 100_000;

    /** Default bound on the number of subjects (class doc, "Bounded subjects"). */
    public static final int DEFAULT_MAX_SUBJECTS = 100_000;

    /** Default bound on the number of committed offsets (class doc, "Bounded committed offsets"). */
    public static final int DEFAULT_MAX_COMMITTED_OFFSETS = 100_000;

    /** Default time an offset must go unused before a full store may remove it: 7 days. */
    public static final Duration DEFAULT_OFFSET_RETENTION = Duration.ofDays(7);

    private final int retention;
    private final int maxSubjects;
    private final int maxCommittedOffsets;
    private final long offsetRetentionNanos;
    private final LongSupplier nanoClock;
    /**
     * No offset can have gone unused for the retention before this time ({@code nanoClock}): the oldest
     * last use the previous sweep left, plus the retention (uses only move later). A full store refuses a
     * new pair before it without walking every offset. Written under {@code sweepLock}, read without it.
     */
    private volatile long nextOffsetExpiry;
    private final Object sweepLock = new Object();
    /**
     * Subjects that never held a message nor a commit: the ones a full store may remove. Counted so that
     * a store full of subjects with messages refuses a new one at once, without looking at every subject.
     */
    private final AtomicInteger emptySubjects = new AtomicInteger();
    private final ConcurrentHashMap<String, SubjectLog> subjects = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CommittedOffset> committed = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<AppendListener> listeners = new CopyOnWriteArrayList<>();

    /** Random per instance: offsets restart at 0 with every new store (a process restart). */
    private final String epoch = java.util.UUID.randomUUID().toString();

    private InMemoryMessageStore(Builder b) {
        this.retention = b.retention;
        this.maxSubjects = b.maxSubjects;
        this.maxCommittedOffsets = b.maxCommittedOffsets;
        this.offsetRetentionNanos = b.offsetRetentionNanos;
        this.nanoClock = b.nanoClock;
        // every offset is used at or after this moment, so none can expire before a retention from now
        this.nextOffsetExpiry = nanoClock.getAsLong() + offsetRetentionNanos;
    }

    /**
     * @return a store with the default retention ({@value #DEFAULT_RETENTION} messages per subject), bound
     *     on subjects ({@value #DEFAULT_MAX_SUBJECTS}) and on committed offsets
     *     ({@value #DEFAULT_MAX_COMMITTED_OFFSETS}, unused for 7 days before one may be removed)
     */
    public static InMemoryMessageStore create() {
        return builder().build();
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /** @return how many messages each subject keeps at most */
    public int retention() {
        return retention;
    }

    /** @return how many subjects the store holds at most (class doc, "Bounded subjects") */
    public int maxSubjects() {
        return maxSubjects;
    }

    /** @return how many committed offsets the store holds at most (class doc, "Bounded committed offsets") */
    public int maxCommittedOffsets() {
        return maxCommittedOffsets;
    }

    /** @return how long an offset goes unused before a full store may remove it */
    public Duration offsetRetention() {
        return Duration.ofNanos(offsetRetentionNanos);
    }

    /** @return how many committed offsets the store holds now */
    public int committedOffsets() {
        return committed.size();
    }

    /**
     * A random identifier per instance: everything this store held, messages and committed offsets,
     * is lost with the process, and a new instance starts every subject again at offset 0, so an
     * acknowledgement of an earlier instance's delivery must not settle this one's messages.
     */
    @Override
    public String epoch() {
        return epoch;
    }

    /**
     * {@inheritDoc}
     *
     * @throws SubjectLimitExceededException if {@code subject} is new and the store holds
     *     {@link #maxSubjects()} subjects that all hold messages
     */
    @Override
    public long append(String subject, byte[] payload) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(payload, "payload");
        long offset;
        do {
            offset = log(subject).append(subject, payload, emptySubjects);
        } while (offset < 0); // the subject was removed while empty (a full store's sweep): create it again
        for (AppendListener l : listeners) {
            try {
                l.appended(subject, offset + 1);
            } catch (Throwable t) {
                // the message is stored: the append reports its offset (a caller retrying a "failed" append
                // would store it twice), and the listeners after this one still run (a pull consumer's own
                // listener wakes its long polls), as the Redis store does
                reactor.core.Exceptions.throwIfJvmFatal(t);
                LOG.warn("append listener " + l + " failed", t);
            }
        }
        return offset;
    }

    private static final reactor.util.Logger LOG = reactor.util.Loggers.getLogger(InMemoryMessageStore.class);

    /**
     * {@inheritDoc}
     *
     * @throws SubjectLimitExceededException if {@code subject} is new and the store holds
     *     {@link #maxSubjects()} subjects that all hold messages
     */
    @Override
    public void ensureSubject(String subject) {
        log(Objects.requireNonNull(subject, "subject"));
    }

    @Override
    public Set<String> subjects() {
        return Collections.unmodifiableSet(subjects.keySet());
    }

    @Override
    public List<Message> read(String subject, long fromOffset, int maxMessages) {
        Objects.requireNonNull(subject, "subject");
        if (maxMessages < 1) {
            throw new IllegalArgumentException("maxMessages must be >= 1 but was " + maxMessages);
        }
        SubjectLog log = subjects.get(subject);
        return log == null ? List.of() : log.read(fromOffset, maxMessages);
    }

    @Override
    public long startOffset(String subject) {
        Objects.requireNonNull(subject, "subject");
        SubjectLog log = subjects.get(subject);
        return log == null ? 0 : log.start();
    }

    @Override
    public long endOffset(String subject) {
        Objects.requireNonNull(subject, "subject");
        SubjectLog log = subjects.get(subject);
        return log == null ? 0 : log.end;
    }

    @Override
    public long committedOffset(String subject, String group) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(group, "group");
        CommittedOffset c = committed.get(key(subject, group));
        return c == null ? -1 : c.read(nanoClock.getAsLong());
    }

    /**
     * {@inheritDoc}
     *
     * @throws OffsetLimitExceededException if the (subject, group) pair has no committed offset yet and
     *     the store holds {@link #maxCommittedOffsets()} offsets, all used within the offset retention
     */
    @Override
    public void commit(String subject, String group, long offset) {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(group, "group");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0 but was " + offset);
        }
        String key = key(subject, group);
        for (;;) {
            long now = nanoClock.getAsLong();
            CommittedOffset c = committed.get(key);
            if (c == null) {
                makeRoomForOffset(subject, group, now);
                // creations racing this one may pass the bound, by at most one pair per racing caller; the
                // clock is read again: a sweep we waited for may have noted a later time than ours
                c = committed.computeIfAbsent(key, k -> new CommittedOffset(nanoClock.getAsLong()));
            }
            if (c.commit(offset, now)) {
                break;
            }
            // removed by a full store's sweep between our lookup and our commit: record it in a new entry
            // (the sweep may not have taken it out of the map yet: help it, or we would find it again)
            committed.remove(key, c);
        }
        SubjectLog log = subjects.get(subject);
        if (log != null) {
            log.keep(emptySubjects); // a committed offset is state: the subject is never removed now
        }
    }

    @Override
    public Disposable addAppendListener(AppendListener listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    @Override
    public String toString() {
        return "InMemoryMessageStore[subjects=" + subjects.size() + ", committedOffsets=" + committed.size()
                + ", retention=" + retention + ", maxSubjects=" + maxSubjects
                + ", maxCommittedOffsets=" + maxCommittedOffsets + "]";
    }

    private SubjectLog log(String subject) {
        SubjectLog log = subjects.get(subject);
        if (log != null) {
            return log;
        }
        if (subjects.size() >= maxSubjects) {
            removeEmptySubjects();
            if (subjects.size() >= maxSubjects) {
                throw new SubjectLimitExceededException(subject, maxSubjects);
            }
        }
        // creations racing this one may pass the bound, by at most one subject per racing caller
        return subjects.computeIfAbsent(subject, s -> {
            emptySubjects.incrementAndGet();
            return new SubjectLog(retention);
        });
    }

    /**
     * Removes the subjects that never held a message nor a committed offset (class doc, "Bounded
     * subjects"). A walk over every subject, so only when some may be removed: a store full of subjects
     * with messages refuses a new one without it.
     */
    private void removeEmptySubjects() {
        if (emptySubjects.get() == 0) {
            return;
        }
        for (Map.Entry<String, SubjectLog> e : subjects.entrySet()) {
            SubjectLog log = e.getValue();
            if (log.retireIfEmpty(emptySubjects)) {
                subjects.remove(e.getKey(), log);
            }
        }
    }

    /**
     * Before a commit creates a pair: if the store is full, removes the offsets unused for the retention
     * (class doc, "Bounded committed offsets"), or refuses the commit if none is. The walk over every offset
     * runs only once one may have expired ({@link #nextOffsetExpiry}), and one caller at a time.
     */
    private void makeRoomForOffset(String subject, String group, long now) {
        if (committed.size() < maxCommittedOffsets) {
            return;
        }
        if (now - nextOffsetExpiry >= 0) {
            synchronized (sweepLock) {
                if (committed.size() >= maxCommittedOffsets && now - nextOffsetExpiry >= 0) {
                    removeExpiredOffsets(now);
                }
            }
        }
        if (committed.size() >= maxCommittedOffsets) {
            throw new OffsetLimitExceededException(subject, group, maxCommittedOffsets);
        }
    }

    /**
     * Removes the offsets unused for the retention; notes when the next one can expire (sweepLock). That note
     * is a lower bound but for a pair created while the walk runs, which the walk may not see: its use is
     * at most that racing call's own duration older than the walk's start, so it may expire that much
     * before the note says (a full store then refuses for as much longer than it must).
     */
    private void removeExpiredOffsets(long now) {
        long oldestKept = now;
        for (Map.Entry<String, CommittedOffset> e : committed.entrySet()) {
            CommittedOffset c = e.getValue();
            if (c.removeIfUnusedSince(now - offsetRetentionNanos)) {
                committed.remove(e.getKey(), c);
            } else {
                // read after the check: a use meanwhile only moves it later, still a valid bound
                long lastUsed = c.lastUsed();
                if (lastUsed - oldestKept < 0) {
                    oldestKept = lastUsed;
                }
            }
        }
        nextOffsetExpiry = oldestKept + offsetRetentionNanos;
    }

    private static String key(String subject, String group) {
        // '\u0000' cannot occur in a valid name, so the key is unambiguous
        return subject + '\u0000' + group;
    }

    /**
     * The committed offset of one (subject, group) pair and when it was last used (class doc, "Bounded
     * committed offsets"). Guarded by its own monitor: a commit and a sweep's removal exclude each other,
     * so a commit is never recorded into an entry just removed (it sees {@code removed} and retries).
     */
    private static final class CommittedOffset {
        /** Read without the monitor by {@link #read}: the committed offset only grows. */
        private volatile long offset = -1;
        private long lastUsed;
        private boolean removed;

        CommittedOffset(long now) {
            this.lastUsed = now;
        }

        synchronized long read(long now) {
            used(now);
            return offset;
        }

        /** Uses only move later: a caller whose clock read is older than another's does not move it back. */
        private void used(long now) {
            if (now - lastUsed > 0) {
                lastUsed = now;
            }
        }

        synchronized long lastUsed() {
            return lastUsed;
        }

        /** @return {@code false} if a sweep removed this entry (the caller commits into a new one) */
        synchronized boolean commit(long newOffset, long now) {
            if (removed) {
                return false;
            }
            if (newOffset > offset) {
                offset = newOffset;
            }
            used(now);
            return true;
        }

        /** @return whether it was unused since {@code cutoff}: then marked removed (the caller removes it from the map) */
        synchronized boolean removeIfUnusedSince(long cutoff) {
            if (lastUsed - cutoff <= 0) {
                removed = true;
                return true;
            }
            return false;
        }
    }

    /**
     * One subject: a ring of the newest messages; offsets {@code [start, end)} are readable. It starts
     * empty and counted in the store's {@code emptySubjects}; the first append or commit takes it out
     * of that count for good, and a full store's sweep may retire it before that (then it takes no
     * message: the appender creates the subject again).
     */
    private static final class SubjectLog {
        private final int retention;
        private Message[] ring;
        private long start;
        /** Written inside the monitor, read without it (see the class comment). */
        volatile long end;
        /** Counted in {@code emptySubjects}: no message and no commit yet, not retired (monitor). */
        private boolean removable = true;
        /** Removed by a sweep while empty: takes no message any more (monitor). */
        private boolean retired;

        SubjectLog(int retention) {
            this.retention = retention;
            this.ring = new Message[Math.min(16, retention)];
        }

        /** A message or a commit: the subject holds state now and is never retired. */
        synchronized void keep(AtomicInteger emptySubjects) {
            if (removable) {
                removable = false;
                emptySubjects.decrementAndGet();
            }
        }

        /** @return whether this empty subject was retired now (the caller removes it from the map) */
        synchronized boolean retireIfEmpty(AtomicInteger emptySubjects) {
            if (!removable) {
                return false;
            }
            removable = false;
            retired = true;
            emptySubjects.decrementAndGet();
            return true;
        }

        /** @return the new message's offset, or -1 if this subject was retired (append to a new one) */
        synchronized long append(String subject, byte[] payload, AtomicInteger emptySubjects) {
            if (retired) {
                return -1;
            }
            keep(emptySubjects);
            long offset = end;
            int held = (int) (offset - start);
            if (held == ring.length) {
                if (ring.length < retention) {
                    grow(held);
                } else {
                    start++; // retention reached: the oldest message is overwritten below
                }
            }
            ring[(int) (offset % ring.length)] = new Message(subject, offset, System.currentTimeMillis(), payload);
            end = offset + 1;
            return offset;
        }

        private void grow(int held) {
            Message[] bigger = new Message[(int) Math.min((long) ring.length * 2, retention)];
            for (int i = 0; i < held; i++) {
                long o = start + i;
                bigger[(int) (o % bigger.length)] = ring[(int) (o % ring.length)];
            }
            ring = bigger;
        }

        synchronized long start() {
            return start;
        }

        synchronized List<Message> read(long from, int max) {
            long first = Math.max(from, start);
            long last = Math.min(end, first + max);
            if (first >= last) {
                return List.of();
            }
            List<Message> out = new ArrayList<>((int) (last - first));
            for (long o = first; o < last; o++) {
                out.add(ring[(int) (o % ring.length)]);
            }
            return out;
        }
    }

    /** Builds an {@link InMemoryMessageStore}; parameters are validated when set. */
    public static final class Builder {
        private int retention = DEFAULT_RETENTION;
        private int maxSubjects = DEFAULT_MAX_SUBJECTS;
        private int maxCommittedOffsets = DEFAULT_MAX_COMMITTED_OFFSETS;
        private long offsetRetentionNanos = DEFAULT_OFFSET_RETENTION.toNanos();
        private LongSupplier nanoClock = System::nanoTime;

        private Builder() {
        }

        /**
         * @param maxMessagesPerSubject how many of the newest messages each subject keeps (≥ 1);
         *                              older ones are dropped, and a group that had not consumed
         *                              them skips ahead (counted as {@code evicted})
         * @return this
         */
        public Builder retention(int maxMessagesPerSubject) {
            if (maxMessagesPerSubject < 1) {
                throw new IllegalArgumentException("retention must be >= 1 but was " + maxMessagesPerSubject);
            }
            this.retention = maxMessagesPerSubject;
            return this;
        }

        /**
         * @param maxSubjects how many subjects the store holds at most (≥ 1); past it, subjects that
         *                    never held a message are removed, and a new subject is refused with
         *                    {@link SubjectLimitExceededException} if none can be (class doc, "Bounded
         *                    subjects")
         * @return this
         */
        public Builder maxSubjects(int maxSubjects) {
            if (maxSubjects < 1) {
                throw new IllegalArgumentException("maxSubjects must be >= 1 but was " + maxSubjects);
            }
            this.maxSubjects = maxSubjects;
            return this;
        }

        /**
         * @param maxCommittedOffsets how many committed offsets ((subject, group) pairs) the store holds at
         *                            most (≥ 1); past it, offsets unused for the {@link #offsetRetention}
         *                            are removed, and a commit for a new pair is refused with
         *                            {@link OffsetLimitExceededException} if none can be (class doc,
         *                            "Bounded committed offsets")
         * @return this
         */
        public Builder maxCommittedOffsets(int maxCommittedOffsets) {
            if (maxCommittedOffsets < 1) {
                throw new IllegalArgumentException("maxCommittedOffsets must be >= 1 but was " + maxCommittedOffsets);
            }
            this.maxCommittedOffsets = maxCommittedOffsets;
            return this;
        }

        /**
         * @param offsetRetention how long a committed offset goes unused (neither committed nor read) before
         *                        a full store may remove it; positive, at most 73 years
         * @return this
         */
        public Builder offsetRetention(Duration offsetRetention) {
            if (offsetRetention == null || offsetRetention.isNegative() || offsetRetention.isZero()) {
                throw new IllegalArgumentException("offsetRetention must be positive but was " + offsetRetention);
            }
            long nanos;
            try {
                nanos = offsetRetention.toNanos();
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("offsetRetention is too long: " + offsetRetention, e);
            }
            // the sweep compares clock differences: a quarter of the range keeps them from overflowing
            if (nanos > Long.MAX_VALUE / 4) {
                throw new IllegalArgumentException("offsetRetention is too long: " + offsetRetention);
            }
            this.offsetRetentionNanos = nanos;
            return this;
        }

        /** The clock of the offset retention (tests): {@code System.nanoTime()} by default. */
        Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        /** @return the store */
        public InMemoryMessageStore build() {
            return new InMemoryMessageStore(this);
        }
    }
}
