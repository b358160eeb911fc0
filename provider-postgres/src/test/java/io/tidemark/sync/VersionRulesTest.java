package io.tidemark.sync;

import io.tidemark.postgres.PostgresProvider;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

import static io.tidemark.sync.ScriptedFunction.response;
import static io.tidemark.sync.ScriptedFunction.row;
import static org.assertj.core.api.Assertions.assertThat;

/** The version rules of docs/contract.md#the-version-rules, rule by rule, through the real driver and a real change function. */
@EmbeddedPostgresTest
class VersionRulesTest {

    private static final AtomicInteger FUNCTIONS = new AtomicInteger();

    private final TestDatabase database;
    private final JdbcWatermarkStore store;
    private final List<SyncEngine> engines = new ArrayList<>();

    VersionRulesTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
    }

    @AfterEach
    void closeEngines() {
        engines.forEach(SyncEngine::close);
    }

    private ScriptedFunction function() {
        return ScriptedFunction.create(database, "rules_fn_" + FUNCTIONS.incrementAndGet());
    }

    private SyncEngine engine(TrackedObject object, RecordingDestination... destinations) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .provider(PostgresProvider.create(database.dataSource()))
                .watermarks(store)
                .track(object)
                .pageSize(1000);
        for (int i = 0; i < destinations.length; i++) {
            builder.destination("d" + i, destinations[i]);
        }
        SyncEngine engine = builder.build();
        engines.add(engine);
        return engine;
    }

    private OptionalLong stored(String object) {
        return store.load(object).map(s -> s.version()).orElse(OptionalLong.empty());
    }

    @Test
    void rule1_a_stored_zero_is_a_real_watermark_and_the_object_is_not_seeded_again() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(0, "Diff", 0))
          .thenReturn(response(0, "Diff", 0))
          .thenReturn(response(1, "Diff", 0, row("I", 1, "\"Id\":1")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()).initialSync(InitialSync.INCREMENTAL), out);

        assertThat(engine.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.SEEDED);
        assertThat(stored(fn.name())).hasValue(0);
        assertThat(engine.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(engine.runOnce().get(fn.name()).outcome()).isEqualTo(Outcome.DELIVERED);

        assertThat(fn.calls()).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"seed\"}",
                "{\"fromVersion\":0,\"mode\":\"sync\"}",
                "{\"fromVersion\":0,\"mode\":\"sync\"}");
        assertThat(out.changes()).hasSize(1);
        assertThat(stored(fn.name())).hasValue(1);
    }

    @Test
    void rule1_after_a_full_first_cycle_a_stored_zero_is_asked_for_as_a_watermark_not_as_a_first_export() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(0, "Full", 0, "{\"Id\":1}")).thenReturn(response(0, "Diff", 0));
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), new RecordingDestination());

        engine.runOnce();
        ObjectReport second = engine.runOnce().get(fn.name());

        assertThat(second.outcome()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(fn.calls()).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                "{\"fromVersion\":0,\"mode\":\"sync\"}");
    }

    @Test
    void rule2_a_full_first_cycle_asks_from_zero_and_delivers_everything() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(3, "Full", 0, row("I", 2, "\"Id\":1"), row("I", 3, "\"Id\":2")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()).initialSync(InitialSync.FULL), out);

        ObjectReport report = engine.runOnce().get(fn.name());

        assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(report.fromVersion()).isEmpty();
        assertThat(report.toVersion()).hasValue(3);
        assertThat(fn.calls()).containsExactly("{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}");
        assertThat(out.changes()).extracting(c -> c.field("Id").orElseThrow().asInt()).containsExactly(1, 2);
    }

    @Test
    void rule2_an_incremental_first_cycle_seeds_stores_the_version_and_discards_rows_with_a_warning() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(41, "Diff", 0, row("I", 40, "\"Id\":1"), row("U", 41, "\"Id\":1")))
          .thenReturn(response(41, "Diff", 0));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()).initialSync(InitialSync.INCREMENTAL), out);

        ObjectReport seed = engine.runOnce().get(fn.name());

        assertThat(seed.outcome()).isEqualTo(Outcome.SEEDED);
        assertThat(seed.toVersion()).hasValue(41);
        assertThat(seed.warnings()).containsExactly("returned 2 rows during an incremental seed; discarding them");
        assertThat(out.offered()).isZero();
        assertThat(stored(fn.name())).hasValue(41);

        engine.runOnce();
        assertThat(fn.calls()).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"seed\"}",
                "{\"fromVersion\":41,\"mode\":\"sync\"}");
    }

    @Test
    void rule3_stores_the_highest_row_version_never_the_higher_metadata_version() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(100, "Diff", 0, row("I", 5, "\"Id\":1"), row("U", 9, "\"Id\":1"), row("D", 7, "\"Id\":2")));
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), new RecordingDestination());

        ObjectReport report = engine.runOnce().get(fn.name());

        assertThat(report.toVersion()).hasValue(9);
        assertThat(stored(fn.name())).hasValue(9);
    }

    @Test
    void rule3_stores_the_metadata_version_when_no_row_carries_one() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(12, "Full", 0, "{\"Id\":1}", "{\"Id\":2,\"$version\":null}"))
          .thenReturn(response(15, "Diff", 0));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), out);

        assertThat(engine.runOnce().get(fn.name()).toVersion()).hasValue(12);
        assertThat(out.changes()).allSatisfy(c -> assertThat(c.version()).isEmpty());

        ObjectReport empty = engine.runOnce().get(fn.name());
        assertThat(empty.outcome()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(stored(fn.name())).hasValue(15);
    }

    @Test
    void rule4_a_refusing_destination_keeps_the_watermark_and_gets_the_same_changes_again() {
        ScriptedFunction fn = function();
        String rows = response(8, "Diff", 0, row("I", 7, "\"Id\":1"), row("U", 8, "\"Id\":1"));
        fn.thenReturn(response(5, "Diff", 0, row("I", 5, "\"Id\":0"))).thenReturn(rows).thenReturn(rows);
        RecordingDestination accepting = new RecordingDestination();
        RecordingDestination refusing = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), accepting, refusing);
        engine.runOnce();
        refusing.refuseAll();

        ObjectReport blocked = engine.runOnce().get(fn.name());

        assertThat(blocked.outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(blocked.error()).get().extracting(TidemarkException::code).isEqualTo(ErrorCode.DESTINATION_FAILED);
        assertThat(blocked.error().get().getMessage()).contains(fn.name()).contains("'d1'").contains("stays at 5");
        assertThat(blocked.toVersion()).hasValue(5);
        assertThat(stored(fn.name())).hasValue(5);
        assertThat(store.load(fn.name()).orElseThrow().lastError()).get().asString().contains("DESTINATION_FAILED");
        assertThat(engine.status(fn.name()).lastReport()).get().extracting(ObjectReport::outcome).isEqualTo(Outcome.BLOCKED);

        refusing.acceptAll();
        ObjectReport retried = engine.runOnce().get(fn.name());

        assertThat(retried.outcome()).isEqualTo(Outcome.DELIVERED);
        assertThat(fn.calls()).containsExactly(
                "{\"fromVersion\":0,\"mode\":\"sync\",\"initial\":true}",
                "{\"fromVersion\":5,\"mode\":\"sync\"}",
                "{\"fromVersion\":5,\"mode\":\"sync\"}");
        assertThat(refusing.changes()).extracting(Change::rawJson).containsExactly(
                "{\"$operation\":\"I\",\"$version\":5,\"Id\":0}",
                "{\"$operation\":\"I\",\"$version\":7,\"Id\":1}",
                "{\"$operation\":\"U\",\"$version\":8,\"Id\":1}");
        assertThat(stored(fn.name())).hasValue(8);
        assertThat(store.load(fn.name()).orElseThrow().lastError()).isEmpty();
    }

    @Test
    void rule4_nothing_is_stored_until_every_page_is_accepted() {
        ScriptedFunction fn = function();
        String[] rows = new String[2500];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = row("I", i + 1, "\"Id\":" + i);
        }
        fn.thenReturn(response(2500, "Diff", 0, rows));
        RecordingDestination out = new RecordingDestination().refuseWhen(batch -> batch.pageNumber() == 3);
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), out);

        ObjectReport report = engine.runOnce().get(fn.name());

        assertThat(report.outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(out.batches()).extracting(ChangeBatch::pageNumber).containsExactly(1, 2);
        assertThat(stored(fn.name())).isEmpty();
    }

    @Test
    void rule5_a_lower_version_is_refused_and_nothing_is_delivered() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(10, "Diff", 0, row("I", 10, "\"Id\":1")))
          .thenReturn(response(5, "Diff", 0))
          .thenReturn(response(20, "Diff", 0, row("U", 8, "\"Id\":1"), row("U", 9, "\"Id\":1")));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), out);
        engine.runOnce();
        out.clear();

        ObjectReport lowerMetadata = engine.runOnce().get(fn.name());
        ObjectReport lowerRows = engine.runOnce().get(fn.name());

        for (ObjectReport report : List.of(lowerMetadata, lowerRows)) {
            assertThat(report.outcome()).isEqualTo(Outcome.FAILED);
            assertThat(report.error()).get().extracting(TidemarkException::code).isEqualTo(ErrorCode.WATERMARK_REGRESSION);
            assertThat(report.error().get().getMessage()).contains(fn.name()).contains("back from 10");
        }
        assertThat(out.offered()).isZero();
        assertThat(stored(fn.name())).hasValue(10);
    }

    @Test
    void rule7_type_and_reason_code_reach_every_destination() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(30, "Full", 1, "{\"Id\":1}", "{\"Id\":2}"));
        RecordingDestination first = new RecordingDestination();
        RecordingDestination second = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), first, second);

        engine.runOnce();

        for (RecordingDestination d : List.of(first, second)) {
            assertThat(d.batches()).singleElement().satisfies(b -> {
                assertThat(b.syncType()).isEqualTo(SyncType.FULL);
                assertThat(b.reasonCode()).isEqualTo(1);
                assertThat(b.toVersion()).isEqualTo(30);
            });
        }
    }

    @Test
    void rule8_a_large_response_is_delivered_in_bounded_pages() {
        ScriptedFunction fn = function();
        String[] rows = new String[2500];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = row("I", 1000 + i, "\"Id\":" + i + ",\"Price\":12.50");
        }
        fn.thenReturn(response(3499, "Diff", 0, rows));
        RecordingDestination out = new RecordingDestination();
        SyncEngine engine = engine(TrackedObject.of(fn.name(), fn.name()), out);

        ObjectReport report = engine.runOnce().get(fn.name());

        assertThat(report.pageCount()).isEqualTo(3);
        assertThat(out.batches()).extracting(b -> b.changes().size()).containsExactly(1000, 1000, 500);
        assertThat(out.batches()).extracting(ChangeBatch::pageNumber).containsExactly(1, 2, 3);
        assertThat(out.batches()).allSatisfy(b -> {
            assertThat(b.pageCount()).isEqualTo(3);
            assertThat(b.totalChanges()).isEqualTo(2500);
            assertThat(b.batchId()).isEqualTo(fn.name() + ":0-3499");
        });
        assertThat(out.batches().get(2).isLastPage()).isTrue();
        Change last = out.changes().get(2499);
        assertThat(last.version()).hasValue(3499);
        assertThat(last.field("Price").orElseThrow().decimalValue()).isEqualByComparingTo("12.50");
        assertThat(last.field("Price").orElseThrow().decimalValue().scale()).isEqualTo(2);
    }
}
