package io.tidemark.sync.spi;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The letter's own rules: what {@code of} takes from the page, how repeated failures merge, and the bounds. */
class DeadLetterTest {

    private static final Instant T1 = Instant.parse("2026-01-01T00:00:00Z");

    private static ChangeBatch page() {
        Change change = Change.fromRaw(Operation.UPDATE, 12L, List.of("Name"),
                "{\"$operation\":\"U\",\"$version\":12,\"$changed\":[\"Name\"],\"Name\":\"x\"}"
                        .getBytes(StandardCharsets.UTF_8));
        return new ChangeBatch("Items", 10, 20, SyncType.DIFF, 0, List.of(change), 2, 3, 5);
    }

    @Test
    void a_new_letter_carries_the_page_its_envelope_and_one_failure() {
        DeadLetter letter = DeadLetter.of(page(), "audit", new IllegalStateException("down"), T1);

        assertThat(letter.id()).isZero();
        assertThat(letter.idempotencyKey()).isEqualTo(page().idempotencyKey());
        assertThat(letter.batchId()).isEqualTo("Items:10-20");
        assertThat(letter.pageNumber()).isEqualTo(2);
        assertThat(letter.pageCount()).isEqualTo(3);
        assertThat(letter.changeCount()).isEqualTo(1);
        assertThat(letter.envelope()).isEqualTo("{\"object\":\"Items\",\"idempotencyKey\":\""
                + page().idempotencyKey() + "\",\"batchId\":\"Items:10-20\",\"fromVersion\":10,\"toVersion\":20,"
                + "\"syncType\":\"DIFF\",\"reasonCode\":0,\"page\":2,\"pageCount\":3,\"totalChanges\":5,\"changes\":["
                + "{\"$operation\":\"U\",\"$version\":12,\"$changed\":[\"Name\"],\"Name\":\"x\"}]}");
        assertThat(letter.attempts()).isEqualTo(1);
        assertThat(letter.failures()).containsExactly(
                new DeadLetter.Failure(T1, "java.lang.IllegalStateException: down"));
        assertThat(letter.firstFailedAt()).isEqualTo(T1);
        assertThat(letter.lastFailedAt()).isEqualTo(T1);
        assertThat(letter.toString()).contains("Items -> audit").contains("1 attempt,");
    }

    @Test
    void merging_adds_attempts_keeps_failures_in_time_order_and_the_earliest_first_failure() {
        DeadLetter stored = DeadLetter.of(page(), "audit", new IllegalStateException("b"), T1.plusSeconds(10))
                .withId(5);
        DeadLetter earlier = DeadLetter.of(page(), "audit", new IllegalStateException("a"), T1);

        DeadLetter merged = stored.mergedWith(earlier);

        assertThat(merged.id()).isEqualTo(5);
        assertThat(merged.attempts()).isEqualTo(2);
        assertThat(merged.failures()).extracting(DeadLetter.Failure::at).containsExactly(T1, T1.plusSeconds(10));
        assertThat(merged.firstFailedAt()).isEqualTo(T1);
        assertThat(merged.lastFailedAt()).isEqualTo(T1.plusSeconds(10));
        assertThat(merged.lastError()).endsWith("b");
    }

    @Test
    void failures_and_errors_are_bounded() {
        DeadLetter letter = DeadLetter.of(page(), "audit", new IllegalStateException("0"), T1);
        for (int i = 1; i < 30; i++) {
            letter = letter.withFailure(new DeadLetter.Failure(T1.plusSeconds(i), String.valueOf(i)));
        }
        assertThat(letter.attempts()).isEqualTo(30);
        assertThat(letter.failures()).hasSize(DeadLetter.MAX_FAILURES);
        assertThat(letter.failures().get(0).error()).isEqualTo("10");

        String huge = "x".repeat(DeadLetter.MAX_ERROR_LENGTH * 3);
        assertThat(new DeadLetter.Failure(T1, huge).error()).hasSize(DeadLetter.MAX_ERROR_LENGTH).endsWith("…");
    }

    @Test
    void a_letter_records_at_least_one_attempt() {
        DeadLetter letter = DeadLetter.of(page(), "audit", new IllegalStateException("x"), T1);
        assertThatThrownBy(() -> new DeadLetter(0, "Items", "audit", letter.idempotencyKey(), letter.batchId(), 1, 1,
                0, 1, SyncType.DIFF, 0, 0, "{}", 0, List.of(), T1, T1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one attempt");
    }
}
