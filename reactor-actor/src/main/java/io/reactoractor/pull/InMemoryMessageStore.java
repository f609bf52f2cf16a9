package io.reactoractor.pull;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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
 * <pre>{@code
 * MessageStore store = InMemoryMessageStore.builder().retention(1_000_000).build();
 * }</pre>
 */
public final class InMemoryMessageStore implements MessageStore {

    /** Default number of messages kept per subject. */
    public static final int DEFAULT_RETENTION = 100_000;

    /** Default bound on the number of subjects (class doc, "Bounded subjects"). */
    public static final int DEFAULT_MAX_SUBJECTS = 100_000;

    private final int retention;
    private final int maxSubjects;
    /**
     * Subjects that never held a message nor a commit: the ones a full store may remove. Counted so that
     * a store full of subjects with messages refuses a new one at once, without looking at every subject.
     */
    private final AtomicInteger emptySubjects = new AtomicInteger();
    private final ConcurrentHashMap<String, SubjectLog> subjects = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AtomicLong> committed = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<AppendListener> listeners = new CopyOnWriteArrayList<>();

    /** Random per instance: offsets restart at 0 with every new store (a process restart). */
    private final String epoch = java.util.UUID.randomUUID().toString();

    private InMemoryMessageStore(int retention, int maxSubjects) {
        this.retention = retention;
        this.maxSubjects = maxSubjects;
    }

    /**
     * @return a store with the default retention ({@value #DEFAULT_RETENTION} messages per subject) and
     *     bound on subjects ({@value #DEFAULT_MAX_SUBJECTS})
     */
    public static InMemoryMessageStore create() {
        return new InMemoryMessageStore(DEFAULT_RETENTION, DEFAULT_MAX_SUBJECTS);
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
            l.appended(subject, offset + 1);
        }
        return offset;
    }

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
        if (maxMessages < 1) {
            throw new IllegalArgumentException("maxMessages must be >= 1 but was " + maxMessages);
        }
        SubjectLog log = subjects.get(subject);
        return log == null ? List.of() : log.read(fromOffset, maxMessages);
    }

    @Override
    public long startOffset(String subject) {
        SubjectLog log = subjects.get(subject);
        return log == null ? 0 : log.start();
    }

    @Override
    public long endOffset(String subject) {
        SubjectLog log = subjects.get(subject);
        return log == null ? 0 : log.end;
    }

    @Override
    public long committedOffset(String subject, String group) {
        AtomicLong c = committed.get(key(subject, group));
        return c == null ? -1 : c.get();
    }

    @Override
    public void commit(String subject, String group, long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0 but was " + offset);
        }
        committed.computeIfAbsent(key(subject, group), k -> new AtomicLong(-1))
                .accumulateAndGet(offset, Math::max);
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
        return "InMemoryMessageStore[subjects=" + subjects.size() + ", retention=" + retention
                + ", maxSubjects=" + maxSubjects + "]";
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

    private static String key(String subject, String group) {
        // '\u0000' cannot occur in a valid name, so the key is unambiguous
        return subject + '\u0000' + group;
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

        /** @return the store */
        public InMemoryMessageStore build() {
            return new InMemoryMessageStore(retention, maxSubjects);
        }
    }
}
