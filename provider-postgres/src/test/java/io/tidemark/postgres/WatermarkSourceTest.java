package io.tidemark.postgres;

import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ErrorCode;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;

import static io.tidemark.postgres.ScriptedFunction.response;
import static io.tidemark.postgres.ScriptedFunction.row;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stored watermark belongs to the function that produced it: an object re-pointed at another function (or a
 * second object under the same name) must not silently continue from someone else's position.
 */
@EmbeddedPostgresTest
class WatermarkSourceTest {

    private static final AtomicInteger FUNCTIONS = new AtomicInteger();

    private final TestDatabase database;
    private final JdbcWatermarkStore store;
    private final List<SyncEngine> engines = new ArrayList<>();

    WatermarkSourceTest(TestDatabase database) {
        this.database = database;
        this.store = JdbcWatermarkStore.create(database.dataSource());
    }

    @AfterEach
    void closeEngines() {
        engines.forEach(SyncEngine::close);
    }

    private ScriptedFunction function() {
        return ScriptedFunction.create(database, "source_fn_" + FUNCTIONS.incrementAndGet());
    }

    private SyncEngine engine(JdbcWatermarkStore watermarks, TrackedObject object, RecordingDestination out) {
        SyncEngine engine = SyncEngine.builder()
                .provider(PostgresProvider.builder(database.dataSource()).listen(false).build())
                .watermarks(watermarks)
                .track(object)
                .destination("out", out)
                .build();
        engines.add(engine);
        return engine;
    }

    private OptionalLong stored(String object) {
        return store.load(object).map(s -> s.version()).orElse(OptionalLong.empty());
    }

    /**
     * The reported bug: "Items" ran against one function up to 736, then was pointed at another. The new
     * function was asked for changes after 736 (and answered "NO_CHANGES, 736 -> 741, FULL reason 1") instead of
     * a first cycle. Now the cycle fails closed: the new function is not called, nothing is delivered, the
     * watermark stays.
     */
    @Test
    void an_object_pointed_at_another_function_does_not_continue_from_its_watermark() {
        ScriptedFunction first = function();
        ScriptedFunction second = function();
        first.thenReturn(response(736, "Full", 1, row("I", 736, "\"Id\":1")));
        second.thenReturn(response(741, "Full", 1));
        RecordingDestination out = new RecordingDestination();
        assertThat(engine(store, TrackedObject.of("Items", first.name()), out).runOnce("Items").outcome())
                .isEqualTo(Outcome.DELIVERED);
        assertThat(stored("Items")).hasValue(736);

        RecordingDestination later = new RecordingDestination();
        ObjectReport report = engine(store, TrackedObject.of("Items", second.name()), later).runOnce("Items");

        assertThat(report.outcome()).as(report.toString()).isEqualTo(Outcome.FAILED);
        assertThat(report.error().orElseThrow().code()).isEqualTo(ErrorCode.WATERMARK_SOURCE_CHANGED);
        assertThat(second.calls()).as("the re-pointed function is not called").isEmpty();
        assertThat(later.batches()).isEmpty();
        assertThat(stored("Items")).hasValue(736);
    }

    @Test
    void the_refusal_names_both_procedures_and_the_two_ways_out() {
        ScriptedFunction first = function();
        ScriptedFunction second = function();
        first.thenReturn(response(5, "Diff", 0));
        engine(store, TrackedObject.of("Named", first.name()), new RecordingDestination()).runOnce("Named");

        SyncEngine repointed = engine(store, TrackedObject.of("Named", second.name()), new RecordingDestination());
        TidemarkException error = repointed.runOnce("Named").error().orElseThrow();

        assertThat(error.objectName()).hasValue("Named");
        assertThat(error.getMessage())
                .startsWith("[Named] the stored watermark 5 was produced by postgres:\"public\".\"" + first.name().substring(7))
                .contains("now calls postgres:\"public\".\"" + second.name().substring(7) + "\"")
                .contains("SyncEngine.adoptWatermark(\"Named\")")
                .contains("SyncEngine.reset(\"Named\")");
        assertThat(repointed.status("Named").stored().lastError()).hasValueSatisfying(
                e -> assertThat(e).startsWith("WATERMARK_SOURCE_CHANGED"));
    }

    @Test
    void adopting_the_watermark_lets_the_new_function_continue_from_it() {
        ScriptedFunction first = function();
        ScriptedFunction second = function();
        first.thenReturn(response(736, "Diff", 0));
        second.thenReturn(response(741, "Diff", 0, row("U", 741, "\"Id\":2")));
        engine(store, TrackedObject.of("Adopted", first.name()), new RecordingDestination()).runOnce("Adopted");
        RecordingDestination out = new RecordingDestination();
        SyncEngine repointed = engine(store, TrackedObject.of("Adopted", second.name()), out);
        assertThat(repointed.runOnce("Adopted").outcome()).isEqualTo(Outcome.FAILED);

        repointed.adoptWatermark("Adopted");
        ObjectReport report = repointed.runOnce("Adopted");

        assertThat(report.outcome()).as(report.toString()).isEqualTo(Outcome.DELIVERED);
        assertThat(second.calls()).singleElement().asString().contains("\"fromVersion\":736");
        assertThat(out.changes()).hasSize(1);
        assertThat(stored("Adopted")).hasValue(741);
        assertThat(store.load("Adopted").orElseThrow().source()).hasValue("postgres:\"public\".\""
                + second.name().substring(7) + "\"");
    }

    @Test
    void resetting_the_object_makes_the_next_cycle_a_first_cycle_of_the_new_function() {
        ScriptedFunction first = function();
        ScriptedFunction second = function();
        first.thenReturn(response(736, "Diff", 0));
        second.thenReturn(response(12, "Full", 1, row("I", 12, "\"Id\":1")));
        engine(store, TrackedObject.of("Reset", first.name()), new RecordingDestination()).runOnce("Reset");
        RecordingDestination out = new RecordingDestination();
        SyncEngine repointed = engine(store, TrackedObject.of("Reset", second.name()), out);

        repointed.reset("Reset");
        ObjectReport report = repointed.runOnce("Reset");

        assertThat(report.outcome()).as(report.toString()).isEqualTo(Outcome.DELIVERED);
        assertThat(second.calls()).singleElement().asString().contains("\"initial\":true");
        assertThat(stored("Reset")).as("a lower version is fine after a reset").hasValue(12);
    }

    @Test
    void two_spellings_of_the_same_function_are_the_same_source() {
        ScriptedFunction fn = function();
        fn.thenReturn(response(3, "Diff", 0)).thenReturn(response(3, "Diff", 0));
        String bare = fn.name().substring("public.".length());
        engine(store, TrackedObject.of("Spelled", "PUBLIC." + bare.toUpperCase()), new RecordingDestination())
                .runOnce("Spelled");

        ObjectReport report = engine(store, TrackedObject.of("Spelled", "\"public\".\"" + bare + "\""),
                new RecordingDestination()).runOnce("Spelled");

        assertThat(report.outcome()).as(report.toString()).isEqualTo(Outcome.NO_CHANGES);
    }

    /**
     * A store table from before sources were recorded: built by hand in the old shape, with a watermark. The
     * store adds the column on first use, and the row adopts the object's function at its next successful
     * cycle, even one that does not move the version; from then on another function is refused.
     */
    @Test
    void an_old_store_table_is_migrated_and_its_rows_adopt_the_current_function() {
        database.execute("""
                CREATE SCHEMA old_store;
                CREATE TABLE old_store.sync_state (
                    object_name    text        PRIMARY KEY,
                    version        bigint,
                    paused         boolean     NOT NULL DEFAULT false,
                    last_moved_at  timestamptz,
                    last_polled_at timestamptz,
                    last_error     text,
                    updated_at     timestamptz NOT NULL DEFAULT now()
                );
                INSERT INTO old_store.sync_state (object_name, version, last_moved_at, last_polled_at)
                VALUES ('Legacy', 736, now(), now());
                """);
        JdbcWatermarkStore old = JdbcWatermarkStore.builder(database.dataSource()).schema("old_store").build();
        JdbcWatermarkStore.builder(database.dataSource()).schema("old_store").build(); // the upgrade runs once
        assertThat(old.load("Legacy").orElseThrow().source()).isEmpty();
        assertThat(old.load("Legacy").orElseThrow().version()).hasValue(736);

        ScriptedFunction fn = function();
        ScriptedFunction other = function();
        fn.thenReturn(response(736, "Diff", 0));
        ObjectReport report = engine(old, TrackedObject.of("Legacy", fn.name()), new RecordingDestination())
                .runOnce("Legacy");

        assertThat(report.outcome()).as(report.toString()).isEqualTo(Outcome.NO_CHANGES);
        assertThat(fn.calls()).singleElement().asString().contains("\"fromVersion\":736");
        assertThat(old.load("Legacy").orElseThrow().source()).hasValue(
                "postgres:\"public\".\"" + fn.name().substring(7) + "\"");
        ObjectReport repointed = engine(old, TrackedObject.of("Legacy", other.name()), new RecordingDestination())
                .runOnce("Legacy");
        assertThat(repointed.error().orElseThrow().code()).isEqualTo(ErrorCode.WATERMARK_SOURCE_CHANGED);
        assertThat(other.calls()).isEmpty();
    }

    @Test
    void the_script_upgrades_an_old_table_for_a_store_that_does_not_create_tables() {
        database.execute("""
                CREATE SCHEMA scripted_old;
                CREATE TABLE scripted_old.sync_state (
                    object_name text PRIMARY KEY, version bigint, paused boolean NOT NULL DEFAULT false,
                    last_moved_at timestamptz, last_polled_at timestamptz, last_error text,
                    updated_at timestamptz NOT NULL DEFAULT now());
                """);
        JdbcWatermarkStore noDdl = JdbcWatermarkStore.builder(database.dataSource()).schema("scripted_old")
                .createTables(false).build();

        database.execute(noDdl.script());

        noDdl.advance("S", "test:fn", OptionalLong.empty(), 1, java.time.Instant.parse("2026-01-01T00:00:00Z"));
        assertThat(noDdl.load("S").orElseThrow().source()).hasValue("test:fn");
    }
}
