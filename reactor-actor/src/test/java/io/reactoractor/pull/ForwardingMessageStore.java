package io.reactoractor.pull;

import java.util.List;
import java.util.Set;
import reactor.core.Disposable;

/**
 * A {@link MessageStore} that forwards every call to {@link #inner}: the tests' faulty stores override only the
 * calls they make fail or change. Public for the tests of other packages (the metrics' slow store).
 */
public abstract class ForwardingMessageStore implements MessageStore {

    protected final MessageStore inner;

    protected ForwardingMessageStore(MessageStore inner) {
        this.inner = inner;
    }

    protected ForwardingMessageStore() {
        this(InMemoryMessageStore.create());
    }

    @Override
    public long append(String subject, byte[] payload) {
        return inner.append(subject, payload);
    }

    @Override
    public String epoch() {
        return inner.epoch();
    }

    @Override
    public void ensureSubject(String subject) {
        inner.ensureSubject(subject);
    }

    @Override
    public Set<String> subjects() {
        return inner.subjects();
    }

    @Override
    public List<Message> read(String subject, long fromOffset, int maxMessages) {
        return inner.read(subject, fromOffset, maxMessages);
    }

    @Override
    public long startOffset(String subject) {
        return inner.startOffset(subject);
    }

    @Override
    public long endOffset(String subject) {
        return inner.endOffset(subject);
    }

    @Override
    public long committedOffset(String subject, String group) {
        return inner.committedOffset(subject, group);
    }

    @Override
    public void commit(String subject, String group, long offset) {
        inner.commit(subject, group, offset);
    }

    @Override
    public Disposable addAppendListener(AppendListener listener) {
        return inner.addAppendListener(listener);
    }
}
