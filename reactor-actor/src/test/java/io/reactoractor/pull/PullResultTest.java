package io.reactoractor.pull;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/** {@link PullResult}'s validation, its defaults and its defensive copies. */
class PullResultTest {

    private static Message m(long offset) {
        return new Message("s", offset, 0, "p".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theShorterConstructorsMeanFirstDeliveries() {
        PullResult r = new PullResult("s", "g", PullResult.Status.MESSAGES, List.of(m(0), m(1)), "e", 3);
        assertThat(r.attempts()).containsExactly(1, 1);
        assertThat(r.attempt(1)).isEqualTo(1);
        PullResult durable = new PullResult("s", "g", PullResult.Status.MESSAGES, List.of(m(0)));
        assertThat(durable.attempts()).containsExactly(1);
        assertThat(durable.epoch()).isEqualTo("durable");
        assertThat(durable.skipped()).isZero();
    }

    @Test
    void attemptsAreOnePerMessageAndAtLeastOne() {
        List<Message> two = List.of(m(0), m(1));
        assertThatThrownBy(() -> new PullResult("s", "g", PullResult.Status.MESSAGES, two, "e", 0, List.of(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("attempts");
        assertThatThrownBy(() -> new PullResult("s", "g", PullResult.Status.MESSAGES, two, "e", 0, List.of(1, 0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("attempts");
        assertThatThrownBy(() -> new PullResult("s", "g", PullResult.Status.MESSAGES, two, "e", 0,
                Arrays.asList(1, null))).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new PullResult("s", "g", PullResult.Status.MESSAGES, two, "e", 0, null))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new PullResult("s", "g", PullResult.Status.MESSAGES, null, "e", 0))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new PullResult("s", "g", PullResult.Status.MESSAGES, two, "e", -1, List.of(1, 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("skipped");
        PullResult r = new PullResult("s", "g", PullResult.Status.MESSAGES, two, "e", 0, List.of(2, 1));
        assertThatThrownBy(() -> r.attempt(2)).isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void messagesAndAttemptsAreCopied() {
        List<Message> messages = new ArrayList<>(List.of(m(0)));
        List<Integer> attempts = new ArrayList<>(List.of(4));
        PullResult r = new PullResult("s", "g", PullResult.Status.MESSAGES, messages, "e", 0, attempts);
        messages.add(m(1));
        attempts.set(0, 5);
        assertThat(r.messages()).hasSize(1);
        assertThat(r.attempts()).containsExactly(4);
        assertThatThrownBy(() -> r.attempts().add(1)).isInstanceOf(UnsupportedOperationException.class);
        assertThat(r).isEqualTo(new PullResult("s", "g", PullResult.Status.MESSAGES, List.of(m(0)), "e", 0, List.of(4)))
                .isNotEqualTo(new PullResult("s", "g", PullResult.Status.MESSAGES, List.of(m(0)), "e", 0, List.of(1)));
    }
}
