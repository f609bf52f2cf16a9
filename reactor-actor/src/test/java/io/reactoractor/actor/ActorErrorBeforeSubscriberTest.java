package io.reactoractor.actor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.reactoractor.ActorScheduler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * An error that reaches the actor before it has a downstream subscriber waits for one (a terminal
 * signal is delivered on the actor's turn, to a subscriber), without holding a carrier meanwhile.
 */
class ActorErrorBeforeSubscriberTest {

    private final ActorScheduler scheduler = ActorScheduler.builder().name("actor-error-early").threads(1).build();

    @AfterEach
    void tearDown() {
        assertTrue(ActorTestSupport.disposeBounded(scheduler));
    }

    @Test
    void anUpstreamErrorWithoutSubscriberNeitherSpinsNorIsLost() throws Exception {
        RuntimeException boom = new RuntimeException("boom");
        Actor<Integer, Integer> failed = Actor.identity(scheduler, 4);
        Flux.<Integer>error(boom).subscribe(failed);

        // the single carrier must stay free for other actors
        Actor<Integer, Integer> other = Actor.identity(scheduler, 4);
        CompletableFuture<Integer> got = Flux.from(other).next().toFuture();
        assertTrue(other.tell(42));
        assertEquals(42, got.get(5, TimeUnit.SECONDS));

        // and the error waits for a subscriber
        ActorTestSupport.TerminalRecorder<Integer> late = new ActorTestSupport.TerminalRecorder<>(s -> s.request(1));
        failed.subscribe(late);
        assertSame(boom, late.error.get(5, TimeUnit.SECONDS));
    }
}
