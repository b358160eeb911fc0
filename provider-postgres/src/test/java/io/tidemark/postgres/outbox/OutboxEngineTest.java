package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Operation;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The outbox read by the real engine: what destinations receive, and what is stored. */
@EmbeddedPostgresTest
class OutboxEngineTest {

    private final TestDatabase database;

    OutboxEngineTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    private SyncEngine engine(String name, TrackedObject object, RecordingDestination out) {
        return OutboxTables.engine(database, name, JdbcWatermarkStore.create(database.dataSource()), out)
                .track(object)
                .build();
    }

    @Test
    void an_incremental_object_delivers_changes_after_its_seed_with_column_level_detail() {
        OutboxTables t = OutboxTables.create(shape(), database, "eng_items", "id int PRIMARY KEY, name text, qty int");
        t.execute("INSERT INTO $T VALUES (1, 'before', 1)");
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("incremental", t.outbox.track("Items").initialSync(InitialSync.INCREMENTAL), out)) {
            assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.SEEDED);

            // An outbox of keys delivers one net change per key and read: read after each write to see each.
            boolean keys = shape() == CaptureShape.KEYS;
            t.execute("UPDATE $T SET name = NULL WHERE id = 1");
            if (keys) {
                assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.DELIVERED);
            }
            t.execute("UPDATE $T SET qty = 2 WHERE id = 1");
            if (keys) {
                assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.DELIVERED);
            }
            t.execute("DELETE FROM $T WHERE id = 1");
            ObjectReport report = engine.runOnce().get("Items");

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            List<Change> changes = out.changes();
            assertThat(changes).extracting(c -> c.operation().orElseThrow())
                    .containsExactly(Operation.UPDATE, Operation.UPDATE, Operation.DELETE);
            assertThat(changes.get(0).columnState("name")).isEqualTo(Change.ColumnState.CLEARED);
            assertThat(changes.get(0).columnState("qty")).isEqualTo(Change.ColumnState.UNCHANGED);
            assertThat(changes.get(1).columnState("name")).isEqualTo(Change.ColumnState.UNCHANGED);
            assertThat(changes.get(1).columnState("qty")).isEqualTo(Change.ColumnState.SET);
            assertThat(changes.get(2).fields().toString()).isEqualTo("{\"id\":1}");
            assertThat(engine.status("Items").stored().version()).hasValue(changes.get(2).version().getAsLong());
            assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.NO_CHANGES);
        }
    }

    @Test
    void a_full_object_starts_with_a_snapshot_of_the_table_then_follows_the_outbox() {
        OutboxTables t = OutboxTables.create(shape(), database, "eng_full", "id int PRIMARY KEY, name text");
        t.execute("INSERT INTO $T VALUES (1, 'a'), (2, 'b')");
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("full", t.outbox.track("Full"), out)) {
            engine.runOnce();
            t.execute("INSERT INTO $T VALUES (3, 'c')");
            engine.runOnce();

            List<ChangeBatch> batches = out.batches();
            assertThat(batches).hasSize(2);
            assertThat(batches.get(0).syncType()).isEqualTo(SyncType.FULL);
            assertThat(batches.get(0).reasonCode()).isZero();
            assertThat(batches.get(0).changes()).extracting(c -> c.fields().get("id").asInt()).containsExactly(1, 2);
            assertThat(batches.get(0).changes()).allSatisfy(c -> assertThat(c.version()).isEmpty());
            assertThat(batches.get(1).syncType()).isEqualTo(SyncType.DIFF);
            assertThat(batches.get(1).changes()).extracting(c -> c.fields().get("id").asInt()).containsExactly(3);
        }
    }

    @Test
    void the_engine_delivers_every_change_of_the_design_md_interleaving() {
        OutboxTables t = OutboxTables.create(shape(), database, "eng_gap", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination();
        try (SyncEngine engine = engine("gap", t.outbox.track("Gap").initialSync(InitialSync.INCREMENTAL), out);
             OpenTransaction u = OpenTransaction.begin(t.dataSource());
             OpenTransaction tx = OpenTransaction.begin(t.dataSource())) {
            engine.runOnce();
            u.takeXid();
            tx.execute("INSERT INTO public." + t.table + " VALUES (1, 'T')");
            u.execute("INSERT INTO public." + t.table + " VALUES (2, 'U')");
            u.commit();
            engine.runOnce();
            tx.commit();
            engine.runOnce();

            // T, captured first but committed last, is delivered and nothing is delivered twice. Usually U comes
            // first, in the cycle before T commits; a commit elsewhere in the cluster between the two captures gives
            // U the higher version, and then both arrive after T's commit, T first. Either order loses nothing.
            assertThat(out.changes()).extracting(c -> c.fields().get("name").asText())
                    .containsExactlyInAnyOrder("U", "T");
        }
    }

    @Test
    void a_backlog_drains_in_max_rows_pages_in_the_background() throws InterruptedException {
        OutboxTables t = OutboxTables.create(shape(), database, "eng_drain", "id int PRIMARY KEY, name text");
        RecordingDestination out = new RecordingDestination();
        TrackedObject object = t.outbox.track("Drain").initialSync(InitialSync.INCREMENTAL).maxRows(100)
                .pollInterval(Duration.ofHours(1));
        try (SyncEngine engine = engine("drain", object, out)) {
            engine.runOnce();
            for (int i = 0; i < 10; i++) {
                t.execute("INSERT INTO $T SELECT g, 'x' FROM generate_series(" + (i * 100 + 1) + ", " + (i * 100 + 100) + ") g");
            }
            engine.start();

            List<Change> changes = out.awaitChanges(1000, Duration.ofSeconds(60));

            assertThat(changes.stream().map(c -> c.fields().get("id").asInt()).distinct()).hasSize(1000);
            assertThat(out.batches()).allSatisfy(b -> assertThat(b.changes()).hasSizeLessThanOrEqualTo(100));
        }
    }
}
