package io.tidemark.sync;

import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;

import static io.tidemark.sync.testkit.Responses.response;
import static io.tidemark.sync.testkit.Responses.row;
import static org.assertj.core.api.Assertions.assertThat;

/** Several objects and destinations in one engine: each object has its own watermark and its own fate. */
class MultipleObjectsTest {

    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore store = InMemoryWatermarkStore.create();

    @Test
    void a_failing_object_does_not_stop_the_others_and_every_destination_gets_every_object() {
        provider.object("Orders").respondWith(VersionedRows.honouringMaxRows().insert(1, 3));
        VersionedRows items = VersionedRows.honouringMaxRows().insert(10, 11);
        provider.object("Items").respondWith(items);
        provider.object("Broken").thenFail(TidemarkException.forObject(ErrorCode.PROCEDURE_NOT_FOUND, "Broken",
                "function public.does_not_exist(json) does not exist"));
        RecordingDestination audit = new RecordingDestination();
        RecordingDestination search = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(store)
                .track(TrackedObject.of("Orders", "public.orders_changes"))
                .track(TrackedObject.of("Broken", "public.does_not_exist"))
                .track(TrackedObject.of("Items", "public.items_changes").pollInterval(Duration.ofMinutes(5)))
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
            assertThat(provider.calls("Items")).containsExactly(
                    "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                    "{\"fromVersion\":11,\"mode\":\"sync\"}");
            assertThat(provider.calls("Orders")).hasSize(1);
            assertThat(engine.status()).extracting(s -> s.object().name()).containsExactly("Orders", "Broken", "Items");
            assertThat(engine.status("Items").stored().version()).hasValue(12);
        }
    }

    @Test
    void a_driver_error_fails_only_its_object_and_the_next_cycle_retries_from_the_stored_version() {
        provider.object("Orders")
                .thenReturn(response(4, "Diff", 0,
                        row("I", 4, "\"Id\":1")))
                .thenFail(new SQLException("deadlock detected", "40P01"))
                .thenReturn(response(6, "Diff", 0,
                        row("U", 6, "\"Id\":1")));
        provider.object("Items").respondWith(VersionedRows.honouringMaxRows().insert(1, 2));
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(store)
                .track(TrackedObject.of("Orders", "public.orders_changes"))
                .track(TrackedObject.of("Items", "public.items_changes"))
                .destination("out", out)
                .build()) {
            engine.runOnce();

            SyncReport failing = engine.runOnce();

            assertThat(failing.get("Orders").outcome()).isEqualTo(Outcome.FAILED);
            TidemarkException error = failing.get("Orders").error().orElseThrow();
            assertThat(error.code()).isEqualTo(ErrorCode.PROCEDURE_FAILED);
            assertThat(error.getMessage()).contains("Orders").contains("deadlock detected");
            assertThat(error.getCause()).isInstanceOf(SQLException.class);
            assertThat(failing.get("Items").outcome()).isEqualTo(Outcome.NO_CHANGES);
            assertThat(store.load("Orders").orElseThrow().version()).hasValue(4);

            assertThat(engine.runOnce("Orders").outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(provider.calls("Orders")).containsExactly(
                    "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                    "{\"fromVersion\":4,\"mode\":\"sync\"}",
                    "{\"fromVersion\":4,\"mode\":\"sync\"}");
            assertThat(store.load("Orders").orElseThrow().version()).hasValue(6);
        }
    }
}
