package io.tidemark.sync;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.spi.DeadLetter;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Retries within a cycle, and the explicit "dead-letter and move on" opt-out, with the JDBC dead-letter store. */
@EmbeddedPostgresTest
class DeliveryPolicyTest {

    private static final AtomicInteger FUNCTIONS = new AtomicInteger();

    private final TestDatabase database;
    private final JdbcWatermarkStore watermarks;
    private final JdbcDeadLetterStore deadLetters;

    DeliveryPolicyTest(TestDatabase database) {
        this.database = database;
        this.watermarks = JdbcWatermarkStore.create(database.dataSource());
        this.deadLetters = JdbcDeadLetterStore.create(database.dataSource());
    }

    private RowsFunction rows() {
        return RowsFunction.create(database, "policy_fn_" + FUNCTIONS.incrementAndGet(), true);
    }

    @Test
    void retries_within_the_cycle_before_blocking() {
        RowsFunction fn = rows().insert(1, 3);
        AtomicInteger attempts = new AtomicInteger();
        RecordingDestination recorder = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(watermarks)
                .track(TrackedObject.of(fn.name(), fn.name()))
                .destination("flaky", batch -> {
                    if (attempts.incrementAndGet() < 3) {
                        throw new IllegalStateException("temporarily down");
                    }
                    recorder.deliver(batch);
                }, DeliveryPolicy.retryThenBlock(3, Duration.ofMillis(5)))
                .build()) {

            ObjectReport report = engine.runOnce().get(fn.name());

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(attempts.get()).isEqualTo(3);
            assertThat(recorder.changes()).hasSize(3);
        }
    }

    @Test
    void exhausted_retries_block_by_default() {
        RowsFunction fn = rows().insert(1, 3);
        AtomicInteger attempts = new AtomicInteger();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(watermarks)
                .track(TrackedObject.of(fn.name(), fn.name()))
                .destination("down", batch -> {
                    attempts.incrementAndGet();
                    throw new IllegalStateException("down");
                }, DeliveryPolicy.retryThenBlock(2, Duration.ZERO))
                .build()) {

            ObjectReport report = engine.runOnce().get(fn.name());

            assertThat(report.outcome()).isEqualTo(Outcome.BLOCKED);
            assertThat(report.error().orElseThrow().getMessage()).contains("after 2 attempts").contains("down");
            assertThat(attempts.get()).isEqualTo(2);
            assertThat(watermarks.load(fn.name()).orElseThrow().version()).isEmpty();
        }
    }

    @Test
    void a_dead_letter_destination_sets_refused_pages_aside_and_the_watermark_moves_on() {
        RowsFunction fn = rows().insert(1, 5);
        RecordingDestination healthy = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(watermarks)
                .deadLetters(deadLetters)
                .track(TrackedObject.of(fn.name(), fn.name()).pageSize(2))
                .destination("healthy", healthy)
                .destination("broken", batch -> {
                    if (batch.pageNumber() == 2) {
                        throw new IllegalArgumentException("cannot map row");
                    }
                }, DeliveryPolicy.deadLetterAfter(2, Duration.ZERO))
                .build()) {

            ObjectReport report = engine.runOnce().get(fn.name());

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.deadLetteredPages()).isEqualTo(1);
            assertThat(report.toVersion()).hasValue(5);
            assertThat(healthy.changes()).hasSize(5);
            List<DeadLetter> letters = deadLetters.list(fn.name());
            assertThat(letters).singleElement().satisfies(letter -> {
                assertThat(letter.destination()).isEqualTo("broken");
                assertThat(letter.pageNumber()).isEqualTo(2);
                assertThat(letter.changeCount()).isEqualTo(2);
                assertThat(letter.batchId()).isEqualTo(fn.name() + ":0-5");
                assertThat(letter.error()).contains("cannot map row");
                assertThat(letter.changesJson()).isEqualTo(
                        "[{\"$operation\" : \"I\", \"$version\" : 3, \"Body\" : \"row 3\"},"
                                + "{\"$operation\" : \"I\", \"$version\" : 4, \"Body\" : \"row 4\"}]");
            });
            assertThat(deadLetters.delete(letters.get(0).id())).isTrue();
            assertThat(deadLetters.list(fn.name())).isEmpty();
        }
    }

    @Test
    void a_dead_letter_policy_without_a_store_is_refused_at_build() {
        assertThatThrownBy(() -> SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(watermarks)
                .track(TrackedObject.of("x", "public.x"))
                .destination("d", batch -> { }, DeliveryPolicy.deadLetterAfter(1, Duration.ZERO))
                .build())
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("no dead-letter store");
    }
}
