package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.TrimResult;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Trimming deletes only what every reader has stored, in batches, and a reader it did not know about notices. */
@EmbeddedPostgresTest
class TrimTest {

    private final TestDatabase database;

    TrimTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    private OutboxTables table(String prefix, long margin, int batch) {
        return OutboxTables.create(shape(), database, prefix, "id int PRIMARY KEY, name text",
                b -> b.trimMargin(margin).trimBatchSize(batch));
    }

    private SyncEngine engine(String name, WatermarkStore store, RecordingDestination out, TrackedObject... objects) {
        SyncEngine.Builder b = OutboxTables.engine(database, name, store, out);
        for (TrackedObject o : objects) {
            b.track(o);
        }
        return b.build();
    }

    /** Ten transactions of three changes each. */
    private static void write(OutboxTables t, int from) {
        for (int i = from; i < from + 10; i++) {
            t.execute("INSERT INTO $T VALUES (" + (i * 3) + ", 'a'), (" + (i * 3 + 1) + ", 'b'), (" + (i * 3 + 2) + ", 'c')");
        }
    }

    private long minVersion(OutboxTables t) {
        return t.scalar("SELECT COALESCE(min(version), 0) FROM " + t.outbox.outboxTable());
    }

    @Test
    void trims_below_the_slowest_reader_in_batches_and_that_reader_still_gets_every_change() {
        OutboxTables t = table("trim", 0, 2);
        WatermarkStore store = JdbcWatermarkStore.create(database.dataSource());
        RecordingDestination fastOut = new RecordingDestination();
        RecordingDestination slowOut = new RecordingDestination();
        TrackedObject fast = t.outbox.track("Fast").initialSync(InitialSync.INCREMENTAL);
        TrackedObject slow = t.outbox.track("Slow").initialSync(InitialSync.INCREMENTAL).maxRows(6);
        try (SyncEngine fastEngine = engine("fast", store, fastOut, fast);
             SyncEngine slowEngine = engine("slow", store, slowOut, slow)) {
            fastEngine.runOnce();
            slowEngine.runOnce();
            write(t, 0);
            fastEngine.runOnce();                // everything
            slowEngine.runOnce();                // two transactions (maxRows 6)
            long slowWatermark = slowEngine.status("Slow").stored().version().getAsLong();
            long outboxBefore = t.scalar("SELECT count(*) FROM " + t.outbox.outboxTable());

            TrimResult result = t.outbox.trim(database.dataSource(), store, List.of(fast, slow));

            assertThat(result.readers()).containsExactly("Fast", "Slow");
            assertThat(result.lowestWatermark()).hasValue(slowWatermark);
            assertThat(result.trimmedThrough()).hasValue(slowWatermark);
            assertThat(result.deletedChanges()).isEqualTo(6);
            assertThat(result.batches()).isEqualTo(3);   // one 3-change transaction per batch of ~2, then an empty one
            assertThat(t.scalar("SELECT count(*) FROM " + t.outbox.outboxTable())).isEqualTo(outboxBefore - 6);
            assertThat(minVersion(t)).isGreaterThan(slowWatermark);

            while (slowEngine.runOnce().get("Slow").changeCount() > 0) {
                // drain the rest, six at a time
            }
            assertThat(slowOut.changes()).hasSize(30);
            assertThat(slowOut.batches()).allSatisfy(b -> assertThat(b.syncType()).isEqualTo(SyncType.DIFF));
        }
    }

    @Test
    void the_margin_keeps_versions_below_the_lowest_watermark() {
        OutboxTables t = table("margin", 5, 1000);
        WatermarkStore store = InMemoryWatermarkStore.create();
        TrackedObject reader = t.outbox.track("Reader").initialSync(InitialSync.INCREMENTAL);
        try (SyncEngine engine = engine("margin", store, new RecordingDestination(), reader)) {
            engine.runOnce();
            write(t, 0);
            engine.runOnce();
            long watermark = engine.status("Reader").stored().version().getAsLong();

            TrimResult result = t.outbox.trim(database.dataSource(), engine);

            assertThat(result.trimmedThrough()).hasValue(watermark - 5);
            assertThat(t.scalar("SELECT count(*) FROM " + t.outbox.outboxTable() + " WHERE version <= " + (watermark - 5)))
                    .isZero();
            assertThat(t.scalar("SELECT count(*) FROM " + t.outbox.outboxTable() + " WHERE version > " + (watermark - 5)))
                    .isPositive();
        }
    }

    @Test
    void a_reader_the_trim_did_not_know_gets_a_full_snapshot_with_reason_one_instead_of_a_hole() {
        OutboxTables t = table("unknown", 0, 1000);
        WatermarkStore store = InMemoryWatermarkStore.create();
        TrackedObject known = t.outbox.track("Known").initialSync(InitialSync.INCREMENTAL);
        TrackedObject forgotten = t.outbox.track("Forgotten").initialSync(InitialSync.INCREMENTAL);
        RecordingDestination forgottenOut = new RecordingDestination();
        try (SyncEngine knownEngine = engine("known", store, new RecordingDestination(), known);
             SyncEngine forgottenEngine = engine("forgotten", InMemoryWatermarkStore.create(), forgottenOut, forgotten)) {
            knownEngine.runOnce();
            forgottenEngine.runOnce();
            write(t, 0);
            knownEngine.runOnce();

            TrimResult result = t.outbox.trim(database.dataSource(), knownEngine);
            assertThat(result.deletedChanges()).isEqualTo(30);
            forgottenEngine.runOnce();

            ChangeBatch batch = forgottenOut.batches().get(0);
            assertThat(batch.syncType()).isEqualTo(SyncType.FULL);
            assertThat(batch.reasonCode()).isEqualTo(1);
            assertThat(batch.changes()).hasSize(30);
        }
    }

    @Test
    void nothing_is_trimmed_without_a_reader_or_a_stored_watermark() {
        OutboxTables t = table("idle", 0, 1000);
        write(t, 0);
        TrackedObject other = TrackedObject.of("Other", "public.some_other_changes");
        TrackedObject fresh = t.outbox.track("Fresh");

        TrimResult noReader = t.outbox.trim(database.dataSource(), InMemoryWatermarkStore.create(), List.of(other));
        TrimResult noWatermark = t.outbox.trim(database.dataSource(), InMemoryWatermarkStore.create(), List.of(other, fresh));

        assertThat(noReader.skippedBecause()).hasValue("no tracked object reads public." + t.table + "_changes");
        assertThat(noWatermark.skippedBecause()).hasValueSatisfying(s -> assertThat(s).contains("has stored a watermark"));
        assertThat(noWatermark.readers()).containsExactly("Fresh");
        assertThat(t.scalar("SELECT count(*) FROM " + t.outbox.outboxTable())).isEqualTo(30);
    }

    @Test
    void an_unqualified_procedure_name_counts_as_a_reader() {
        OutboxTables t = table("unqualified", 0, 1000);
        WatermarkStore store = InMemoryWatermarkStore.create();
        store.advance("Short", "postgres:\"" + t.table + "_changes\"", OptionalLong.empty(), 3,
                java.time.Instant.now());

        TrimResult result = t.outbox.trim(database.dataSource(), store,
                List.of(TrackedObject.of("Short", t.table + "_changes")));

        assertThat(result.readers()).containsExactly("Short");
        assertThat(result.lowestWatermark()).hasValue(3);
    }

    @Test
    void the_trim_function_never_deletes_what_the_horizon_still_holds_back() {
        OutboxTables t = table("horizon", 0, 1000);
        write(t, 0);
        try (OpenTransaction open = OpenTransaction.begin(t.dataSource())) {
            long openXid = open.takeXid();
            write(t, 10);

            long deleted = t.scalar("SELECT public." + t.table + "_outbox_trim(9223372036854775807, 1000)");

            assertThat(deleted).isEqualTo(30);
            assertThat(minVersion(t)).isGreaterThanOrEqualTo(openXid);
            assertThat(t.scalar("SELECT trimmed_through FROM public." + t.table + "_outbox_state")).isLessThan(openXid);
        }
        assertThat(t.scalar("SELECT count(*) FROM " + t.outbox.outboxTable())).isEqualTo(30);
    }

    @Test
    void trimming_records_how_far_it_went_so_the_change_function_can_tell() {
        OutboxTables t = table("marker", 0, 7);
        write(t, 0);
        long before = t.scalar("SELECT trimmed_through FROM public." + t.table + "_outbox_state");
        long third = t.scalar("SELECT DISTINCT version FROM " + t.outbox.outboxTable() + " ORDER BY 1 OFFSET 2 LIMIT 1");

        t.scalar("SELECT public." + t.table + "_outbox_trim(" + third + ", 7)");

        assertThat(t.scalar("SELECT trimmed_through FROM public." + t.table + "_outbox_state")).isEqualTo(third)
                .isGreaterThan(before);
        assertThat(t.sync(third).at("/Metadata/Sync/Type").asText()).isEqualTo("Diff");
        assertThat(t.sync(third - 1).at("/Metadata/Sync/ReasonCode").asInt()).isEqualTo(1);
    }
}
