package io.reactoractor.samples.pull;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;

import io.reactoractor.pull.GroupStats;
import io.reactoractor.samples.pull.HttpViews.MessageView;
import io.reactoractor.samples.pull.HttpViews.Pulled;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;

/**
 * The server-sent event stream: order and acknowledgement in both ack modes, and flow control: a
 * client that stops reading stops the pulls of its stream (the response's demand drives them), after
 * a bounded number of events (the buffers between the consumer and the client).
 */
class PullStreamTest extends PullServerTestSupport {

    private static final ParameterizedTypeReference<ServerSentEvent<MessageView>> EVENT =
            new ParameterizedTypeReference<>() {
            };

    private WebClient web;

    @BeforeEach
    void client() {
        web = WebClient.builder().baseUrl(baseUrl()).build();
    }

    @Test
    @Timeout(60)
    void autoAckStreamDeliversInOrderAndAcknowledgesWhatItHandedToTheResponse() {
        String subject = unique("sse-auto");
        String group = "g";
        int messages = 60;
        for (int i = 0; i < messages - 1; i++) {
            consumer.append(subject, ("m" + i).getBytes(StandardCharsets.UTF_8));
        }
        Flux<ServerSentEvent<MessageView>> stream = web.get().uri("/subjects/{s}/groups/{g}/stream", subject, group)
                .accept(MediaType.TEXT_EVENT_STREAM).retrieve().bodyToFlux(EVENT)
                .doOnNext(e -> {
                    // the last one arrives while the stream waits for more: the stream long-polls too
                    if (e.data().offset() == messages - 2) {
                        consumer.append(subject, ("m" + (messages - 1)).getBytes(StandardCharsets.UTF_8));
                    }
                });
        List<ServerSentEvent<MessageView>> events = stream.take(messages).collectList().block(Duration.ofSeconds(45));

        assertEquals(messages, events.size());
        for (int i = 0; i < messages; i++) {
            ServerSentEvent<MessageView> e = events.get(i);
            assertEquals(Integer.toString(i), e.id());
            assertEquals("message", e.event());
            assertEquals(i, e.data().offset());
            assertEquals("m" + i, e.data().payload());
        }
        // each was acknowledged when handed to the response, before the client saw it
        await(() -> "all acknowledged: " + consumer.stats(subject, group), Duration.ofSeconds(20),
                () -> consumer.stats(subject, group).committedOffset() == messages);
        GroupStats s = consumer.stats(subject, group);
        assertEquals(0, s.inFlight(), s::toString);
        assertEquals(0, s.redelivered(), s::toString);
    }

    @Test
    @Timeout(60)
    void explicitAckStreamRedeliversWhatWasNotAcknowledgedOnceTheStreamCloses() {
        String subject = unique("sse-explicit");
        String group = "g";
        int messages = 10;
        for (int i = 0; i < messages; i++) {
            consumer.append(subject, ("m" + i).getBytes(StandardCharsets.UTF_8));
        }
        List<ServerSentEvent<MessageView>> events = web.get()
                .uri("/subjects/{s}/groups/{g}/stream?ack=explicit", subject, group).retrieve().bodyToFlux(EVENT)
                .take(messages).collectList().block(Duration.ofSeconds(30));
        assertEquals(messages, events.size());
        assertEquals(0, consumer.stats(subject, group).committedOffset(), "nothing acknowledged by the stream");

        // take() cancelled the stream: the server releases its messages, and a long poll gets them again
        Pulled again = web.get().uri("/subjects/{s}/groups/{g}/messages?timeoutMs=20000", subject, group).retrieve()
                .bodyToMono(Pulled.class).block(Duration.ofSeconds(30));
        assertEquals(LongStream.range(0, messages).boxed().toList(),
                again.messages().stream().map(MessageView::offset).toList());
        Long committed = web.post().uri("/subjects/{s}/groups/{g}/ack", subject, group)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"epoch\":\"" + again.epoch() + "\",\"offsets\":"
                        + LongStream.range(0, messages).boxed().toList() + "}").retrieve()
                .bodyToMono(HttpViews.Acked.class).map(HttpViews.Acked::committedOffset).block(Duration.ofSeconds(30));
        assertEquals(messages, committed);
        assertEquals(messages, consumer.stats(subject, group).redelivered());
    }

    @Test
    @Timeout(90)
    void aClientThatStopsReadingStopsItsStreamsPullsAndTheNextClientGetsTheRest() throws Exception {
        String subject = unique("sse-slow");
        String group = "g";
        int messages = 4_000;
        byte[] payload = new byte[8 * 1024];
        Arrays.fill(payload, (byte) 'x');
        for (int i = 0; i < messages; i++) {
            consumer.append(subject, payload);
        }
        long delivered;
        try (Socket socket = new Socket()) {
            // a small receive window, and we never read: the server's socket buffer and Netty's outbound
            // buffer fill up, the channel becomes unwritable, the response stops asking for events
            socket.setReceiveBufferSize(8 * 1024);
            socket.connect(new InetSocketAddress("localhost", port), 10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET /subjects/" + subject + "/groups/" + group + "/stream HTTP/1.1\r\nHost: localhost\r\n"
                    + "Accept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            delivered = awaitStable(subject, group);
            System.out.printf("stream stalled after %d of %d events of 8 KB to a client that reads nothing%n",
                    delivered, messages);
            // bounded by the buffers on the way (a few MB of socket buffers = a few hundred 8 KB events,
            // plus the prefetches of the write pipeline), far below the backlog
            long stalled = delivered;
            assertTrue(stalled > 0 && stalled < messages / 2,
                    () -> stalled + " of " + messages + " delivered to a client that reads nothing");
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        // the connection is closed: once the server has settled it (acks of what was handed to the dead
        // response, release of anything taken but not handed), a new client of the group gets the rest,
        // in order, nothing lost in the group's books (what sat in the dead connection's buffers was
        // acknowledged when handed over: at most once for those)
        GroupStats settled = awaitQuiet(subject, group);
        long from = settled.committedOffset();
        assertTrue(from > 0 && from <= settled.delivered(), settled::toString);
        List<Long> rest = web.get().uri("/subjects/{s}/groups/{g}/stream", subject, group).retrieve()
                .bodyToFlux(EVENT).map(e -> e.data().offset()).take(messages - from)
                .collectList().block(Duration.ofSeconds(60));
        assertEquals(LongStream.range(from, messages).boxed().toList(), rest);
    }

    /** Waits until the group's figures stop changing for half a second. */
    private GroupStats awaitQuiet(String subject, String group) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        GroupStats last = null;
        while (System.nanoTime() < deadline) {
            GroupStats now = consumer.stats(subject, group);
            if (last != null && now.delivered() == last.delivered() && now.committedOffset() == last.committedOffset()
                    && now.inFlight() == last.inFlight() && now.acknowledged() == last.acknowledged()) {
                return now;
            }
            last = now;
            Thread.sleep(500);
        }
        throw new AssertionError("the group never settled: " + consumer.stats(subject, group));
    }

    /** Waits until the group's delivered count stops moving for a second (the pipeline is full). */
    private long awaitStable(String subject, String group) throws InterruptedException {
        long last = -1;
        long since = System.nanoTime();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            long now = consumer.stats(subject, group).delivered();
            if (now != last || now == 0) {
                last = now;
                since = System.nanoTime();
            } else if (System.nanoTime() - since > Duration.ofSeconds(1).toNanos()) {
                return now;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("deliveries never settled: " + consumer.stats(subject, group));
    }
}
