package io.tidemark.sync.internal.deadletter;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InMemoryDeadLetterStore;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.sync.spi.DeadLetterStore;
import io.tidemark.sync.spi.SyncListener;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Every letter recorded through the engine's store is announced, and a failing listener changes nothing. */
class ObservedDeadLetterStoreTest {

    @Test
    void each_record_is_announced_with_the_stored_letter_even_after_a_listener_throws() {
        List<DeadLetter> seen = new ArrayList<>();
        SyncListener throwing = new SyncListener() {
            @Override
            public void onDeadLetter(DeadLetter letter) {
                throw new IllegalStateException("listener bug");
            }
        };
        SyncListener recording = new SyncListener() {
            @Override
            public void onDeadLetter(DeadLetter letter) {
                seen.add(letter);
            }
        };
        DeadLetterStore store = ObservedDeadLetterStore.of(InMemoryDeadLetterStore.create(),
                List.of(throwing, recording));
        ChangeBatch page = new ChangeBatch("Items", 1, 2, SyncType.DIFF, 0, List.of(), 1, 1, 0);
        Instant at = Instant.parse("2026-01-01T00:00:00Z");

        DeadLetter first = store.record(DeadLetter.of(page, "audit", new IllegalStateException("a"), at));
        DeadLetter again = store.record(DeadLetter.of(page, "audit", new IllegalStateException("b"), at));

        assertThat(seen).containsExactly(first, again);
        assertThat(seen).extracting(DeadLetter::attempts).containsExactly(1, 2);
        assertThat(first.id()).isPositive();
        assertThat(ObservedDeadLetterStore.of(null, List.of(recording))).isNull();
    }
}
