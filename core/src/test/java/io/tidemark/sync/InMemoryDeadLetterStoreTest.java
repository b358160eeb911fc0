package io.tidemark.sync;

import io.tidemark.sync.spi.DeadLetter;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/** The public in-memory dead-letter store a Quick start user hands to {@code SyncEngine.Builder#deadLetters}. */
class InMemoryDeadLetterStoreTest {

    private static DeadLetter letter(String object) {
        return new DeadLetter(0, object, "audit", object + ":1-2", 1, 1, 2, SyncType.DIFF, 0, 1, "[]", "refused",
                Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Test
    void letters_get_increasing_ids_are_listed_per_object_and_can_be_deleted() {
        InMemoryDeadLetterStore store = InMemoryDeadLetterStore.create();
        DeadLetter first = store.add(letter("Items"));
        DeadLetter other = store.add(letter("Orders"));
        DeadLetter second = store.add(letter("Items"));

        assertThat(second.id()).isGreaterThan(first.id());
        assertThat(store.list("Items")).extracting(DeadLetter::id).containsExactly(first.id(), second.id());
        assertThat(store.list("Orders")).extracting(DeadLetter::id).containsExactly(other.id());
        assertThat(store.delete(first.id())).isTrue();
        assertThat(store.delete(first.id())).isFalse();
        assertThat(store.list("Items")).extracting(DeadLetter::id).containsExactly(second.id());
        assertThat(InMemoryDeadLetterStore.create().list("Items")).isEmpty();
    }
}
