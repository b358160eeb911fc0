package io.tidemark.sync;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Several objects and destinations in one engine: each object has its own watermark and its own fate. */
@EmbeddedPostgresTest
class MultipleObjectsTest {

    private final TestDatabase database;

    MultipleObjectsTest(TestDatabase database) {
        this.database = database;
    }

    @Test
    void a_failing_object_does_not_stop_the_others_and_every_destination_gets_every_object() throws Exception {
        RowsFunction orders = RowsFunction.create(database, "multi_orders", true).insert(1, 3);
        RowsFunction items = RowsFunction.create(database, "multi_items", true).insert(10, 11);
        RecordingDestination audit = new RecordingDestination();
        RecordingDestination search = new RecordingDestination();
        JdbcWatermarkStore store = JdbcWatermarkStore.create(database.dataSource());
        try (SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(store)
                .track(TrackedObject.of("Orders", orders.name()))
                .track(TrackedObject.of("Broken", "public.does_not_exist"))
                .track(TrackedObject.of("Items", items.name()).pollInterval(Duration.ofMinutes(5)))
                .destination("audit", audit)
                .destination("search", search)
                .build()) {

            SyncReport report = engine.runOnce();

            assertThat(report.objects()).extracting(ObjectReport::objectName).containsExactly("Orders", "Broken", "Items");
            assertThat(report.get("Orders").outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.get("Items").outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.get("Broken").outcome()).isEqualTo(Outcome.FAILED);
            assertThat(report.get("Broken").error().orElseThrow().code()).isEqualTo(ErrorCode.PROCEDURE_NOT_FOUND);
            assertThat(report.isSuccess()).isFalse();
            for (RecordingDestination d : List.of(audit, search)) {
                assertThat(d.batches()).extracting(ChangeBatch::objectName).containsExactly("Orders", "Items");
            }
            assertThat(store.load("Orders").orElseThrow().version()).hasValue(3);
            assertThat(store.load("Items").orElseThrow().version()).hasValue(11);
            assertThat(store.load("Broken").orElseThrow().version()).isEmpty();
            assertThat(store.load("Broken").orElseThrow().lastError()).get().asString().startsWith("PROCEDURE_NOT_FOUND");

            items.insert(12, 12);
            ObjectReport single = engine.runOnce("Items");
            assertThat(single.changeCount()).isEqualTo(1);
            assertThat(engine.status()).extracting(s -> s.object().name()).containsExactly("Orders", "Broken", "Items");
            assertThat(engine.status("Items").stored().version()).hasValue(12);
        }
    }
}
