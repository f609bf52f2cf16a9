package io.reactoractor.internal.mailbox;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Test support: a producer of an {@link MpscChunkedArrayQueue} stopped between claiming its place
 * ({@code getAndAdd} of the producer index) and writing its element there, as a thread the operating
 * system descheduled at that instruction would be. Until {@link #write} the queue's {@code isEmpty()} may
 * answer "empty" and {@code poll()} returns {@code null}, though elements offered behind the place wait;
 * {@code size()} counts the place. The owner's signal after the write is the caller's (as an actor's
 * producer signals the actor after its offer).
 */
public final class StalledProducer {

    private static final VarHandle P_INDEX;
    private static final VarHandle C_CHUNK;
    private static final VarHandle NEXT;
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Object[].class);

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            P_INDEX = l.findVarHandle(MpscChunkedArrayQueueProducerFields.class, "producerIndex", long.class);
            C_CHUNK = l.findVarHandle(MpscChunkedArrayQueueConsumerFields.class, "consumerChunk",
                    MpscChunkedArrayQueue.Chunk.class);
            NEXT = l.findVarHandle(MpscChunkedArrayQueue.Chunk.class, "next", MpscChunkedArrayQueue.Chunk.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MpscChunkedArrayQueue<?> queue;
    private final long position;

    private StalledProducer(MpscChunkedArrayQueue<?> queue, long position) {
        this.queue = queue;
        this.position = position;
    }

    /** Claims the next place of {@code queue} and stops there. */
    public static StalledProducer claim(MpscChunkedArrayQueue<?> queue) {
        return new StalledProducer(queue, (long) P_INDEX.getAndAdd(queue, 1L));
    }

    /**
     * Writes {@code element} at the claimed place, as {@code offer} would have (a volatile store). The place
     * must be in the consumer's chunk or a chunk already linked after it (tests claim early places).
     */
    public void write(Object element) {
        long want = position >>> queue.shift;
        MpscChunkedArrayQueue.Chunk c = (MpscChunkedArrayQueue.Chunk) C_CHUNK.getVolatile(queue);
        while (c != null && c.index < want) {
            c = (MpscChunkedArrayQueue.Chunk) NEXT.getVolatile(c);
        }
        if (c == null || c.index != want) {
            throw new IllegalStateException("chunk of place " + position + " not linked");
        }
        SLOT.setVolatile(c.slots, (int) position & queue.mask, element);
    }
}
