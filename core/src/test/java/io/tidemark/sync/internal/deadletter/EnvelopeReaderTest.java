package io.tidemark.sync.internal.deadletter;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.DeadLetter;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A letter's envelope read back into the page it was, byte for byte, or a clear error naming the letter. */
class EnvelopeReaderTest {

    private static final Instant T1 = Instant.parse("2026-01-01T00:00:00Z");

    private static Change change(String json, Operation operation, Long version, List<String> changed) {
        return Change.fromRaw(operation, version, changed, json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void the_page_comes_back_with_the_same_key_changes_and_contract_keys() {
        List<Change> changes = List.of(
                change("{\"$operation\":\"U\",\"$version\":12,\"$changed\":[\"Name\",\"Price\"],\"Name\":\"ü ✓\","
                        + "\"Price\":12.50}", Operation.UPDATE, 12L, List.of("Name", "Price")),
                change("{\"Id\":7,\"Nested\":{\"$version\":99}}", null, null, null),
                change("{\"$operation\":\"D\",\"$version\":null,\"Id\":8}", Operation.DELETE, null, null));
        ChangeBatch original = new ChangeBatch("Items", 10, 20, SyncType.FULL, 1, changes, 2, 3, 2500);
        DeadLetter letter = DeadLetter.of(original, "audit", new IllegalStateException("x"), T1).withId(4);

        ChangeBatch page = EnvelopeReader.page(letter);

        assertThat(page.idempotencyKey()).isEqualTo(original.idempotencyKey());
        assertThat(page.toString()).isEqualTo(original.toString());
        assertThat(page.totalChanges()).isEqualTo(2500);
        assertThat(page.changes()).extracting(Change::rawJson)
                .containsExactlyElementsOf(changes.stream().map(Change::rawJson).toList());
        assertThat(page.changes()).extracting(Change::operation).containsExactly(
                java.util.Optional.of(Operation.UPDATE), java.util.Optional.empty(),
                java.util.Optional.of(Operation.DELETE));
        assertThat(page.changes().get(0).version()).hasValue(12);
        assertThat(page.changes().get(0).changedColumns()).hasValue(List.of("Name", "Price"));
        assertThat(page.changes().get(1).version()).as("a nested $version is not the row's").isEmpty();
        assertThat(page.changes().get(0).fields().get("Price").decimalValue()).isEqualByComparingTo("12.50");
    }

    @Test
    void an_envelope_that_does_not_match_its_letter_is_refused_naming_the_letter() {
        ChangeBatch original = new ChangeBatch("Items", 1, 2, SyncType.DIFF, 0,
                List.of(change("{\"Id\":1}", null, null, null)), 1, 1, 1);
        DeadLetter letter = DeadLetter.of(original, "audit", new IllegalStateException("x"), T1).withId(9);
        DeadLetter truncated = new DeadLetter(9, "Items", "audit", letter.idempotencyKey(), letter.batchId(), 1, 1, 1,
                2, SyncType.DIFF, 0, 1, "{\"object\":\"Items\",\"changes\":[", 1, letter.failures(), T1, T1);
        DeadLetter miscounted = new DeadLetter(9, "Items", "audit", letter.idempotencyKey(), letter.batchId(), 1, 1,
                1, 2, SyncType.DIFF, 0, 2, letter.envelope(), 1, letter.failures(), T1, T1);

        for (DeadLetter bad : List.of(truncated, miscounted)) {
            assertThatThrownBy(() -> EnvelopeReader.page(bad))
                    .isInstanceOfSatisfying(TidemarkException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILED))
                    .hasMessageContaining("dead letter 9 cannot be replayed: its stored envelope");
        }
    }
}
