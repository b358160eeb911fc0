package io.tidemark.sqlserver;

import io.tidemark.sqlserver.ChangeProcedureGenerator.Level;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.JdbcWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Operation;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.SqlServerContainerServer;
import io.tidemark.testing.SqlServerContainerTest;
import io.tidemark.testing.SqlServerDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static io.tidemark.sync.Change.ColumnState.CLEARED;
import static io.tidemark.sync.Change.ColumnState.SET;
import static io.tidemark.sync.Change.ColumnState.UNCHANGED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The whole loop on a real SQL Server 2022, for both generated procedure variants: the setup script, the
 * generated procedure and role, the SQL Server provider and the real {@link SyncEngine}. Skipped where there is no
 * Docker; written to run on every machine that has it.
 */
@SqlServerContainerTest
class SqlServerEndToEndContainerTest {

    private static final AtomicInteger LOGINS = new AtomicInteger();

    private final SqlServerDatabase database;

    SqlServerEndToEndContainerTest(SqlServerDatabase database) {
        this.database = database;
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void inserts_updates_and_deletes_arrive_and_a_cleared_column_shows_in_changed(Level level) {
        ItemsTable items = ItemsTable.create(database, level, 3);
        RecordingDestination recorder = new RecordingDestination();
        String name = items.table();
        try (SyncEngine engine = engine(SqlServerProvider.create(database.dataSource()), items.tracked(name),
                InMemoryWatermarkStore.create(), recorder, null)) {
            // First cycle, InitialSync.FULL: the rows that existed before tracking was enabled come as a snapshot.
            ObjectReport first = engine.runOnce(name);
            assertThat(first.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(first.syncType()).contains(SyncType.FULL);
            assertThat(first.reasonCode()).isZero();
            assertThat(first.toVersion()).hasValue(items.currentVersion());
            assertThat(recorder.changes()).extracting(ChangeKeys::key).containsExactly("I1", "I2", "I3");
            assertThat(recorder.changes()).allSatisfy(c -> {
                assertThat(c.operation()).contains(Operation.INSERT);
                assertThat(c.changedColumns()).isEmpty();
                assertThat(c.fields().get("Assortment").asText()).isEqualTo("A");
                assertThat(c.fields().get("Description").asText()).startsWith("Item ");
            });
            recorder.clear();

            items.set("I1", "Description", null);
            items.set("I2", "Assortment", "Z");
            items.insert("N1", "New", "B", new BigDecimal("9.99"));
            items.delete("I3");
            long version = items.currentVersion();

            ObjectReport second = engine.runOnce(name);
            assertThat(second.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(second.syncType()).contains(SyncType.DIFF);
            assertThat(second.changeCount()).isEqualTo(4);
            assertThat(second.toVersion()).hasValue(version);
            List<Change> changes = recorder.changes();
            assertThat(changes).extracting(c -> c.version().getAsLong()).isSorted().last().isEqualTo(version);
            Map<String, Change> byKey = ChangeKeys.byKey(changes);

            Change cleared = byKey.get("I1");
            assertThat(cleared.operation()).contains(Operation.UPDATE);
            assertThat(cleared.changedColumns()).contains(List.of("Description"));
            assertThat(cleared.fields().has("Description")).as("FOR JSON leaves the NULL out").isFalse();
            assertThat(cleared.columnState("Description")).isEqualTo(CLEARED);
            assertThat(cleared.columnState("Assortment")).isEqualTo(UNCHANGED);
            assertThat(cleared.fields().has("Assortment")).isEqualTo(level == Level.TABLE);

            Change oneColumn = byKey.get("I2");
            assertThat(oneColumn.operation()).contains(Operation.UPDATE);
            assertThat(oneColumn.changedColumns()).contains(List.of("Assortment"));
            assertThat(oneColumn.fields().get("Assortment").asText()).isEqualTo("Z");
            assertThat(oneColumn.columnState("Assortment")).isEqualTo(SET);
            assertThat(oneColumn.columnState("Description")).isEqualTo(UNCHANGED);
            assertThat(oneColumn.fields().has("Description")).isEqualTo(level == Level.TABLE);
            assertThat(oneColumn.fields().has("Price")).isEqualTo(level == Level.TABLE);

            Change inserted = byKey.get("N1");
            assertThat(inserted.operation()).contains(Operation.INSERT);
            assertThat(inserted.changedColumns()).isEmpty();
            assertThat(inserted.fields().get("Description").asText()).isEqualTo("New");
            assertThat(inserted.fields().get("Assortment").asText()).isEqualTo("B");
            assertThat(inserted.fields().get("Price").decimalValue()).isEqualByComparingTo("9.99");

            Change deleted = byKey.get("I3");
            assertThat(deleted.operation()).contains(Operation.DELETE);
            assertThat(deleted.fields().fieldNames()).toIterable().containsExactly("ItemCode");

            ObjectReport quiet = engine.runOnce(name);
            assertThat(quiet.outcome()).isEqualTo(Outcome.NO_CHANGES);
            assertThat(quiet.toVersion()).hasValue(items.currentVersion());
            assertThat(recorder.changes()).hasSize(4);
        }
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void incremental_seeds_from_the_change_tracking_version_and_delivers_only_what_follows(Level level) {
        ItemsTable items = ItemsTable.create(database, level, 3);
        items.set("I1", "Assortment", "before seeding"); // a change older than the seed: never delivered
        long seededAt = items.currentVersion();
        RecordingDestination recorder = new RecordingDestination();
        String name = items.table();
        SqlServerProvider provider = SqlServerProvider.create(database.dataSource());
        TrackedObject object = items.tracked(name).initialSync(InitialSync.INCREMENTAL);
        assertThat(provider.currentVersion(object)).hasValue(seededAt);
        try (SyncEngine engine = engine(provider, object, InMemoryWatermarkStore.create(), recorder, null)) {
            ObjectReport seed = engine.runOnce(name);
            assertThat(seed.outcome()).isEqualTo(Outcome.SEEDED);
            assertThat(seed.toVersion()).hasValue(seededAt);
            assertThat(recorder.offered()).isZero();

            items.insert("N1", "after seeding", "B", BigDecimal.ONE);
            ObjectReport next = engine.runOnce(name);
            assertThat(next.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(next.syncType()).contains(SyncType.DIFF);
            assertThat(recorder.changes()).singleElement().satisfies(c -> {
                assertThat(ChangeKeys.key(c)).isEqualTo("N1");
                assertThat(c.operation()).contains(Operation.INSERT);
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void a_watermark_of_0_is_a_real_watermark_incremental_seeds_there_and_diffs_from_it(Level level) {
        try (SqlServerDatabase fresh = SqlServerContainerServer.shared().createDatabase()) {
            ItemsTable items = ItemsTable.createUntouched(fresh, level, 2);
            assertThat(items.currentVersion()).as("nothing tracked yet").isZero();
            RecordingDestination recorder = new RecordingDestination();
            String name = items.table();
            TrackedObject object = items.tracked(name).initialSync(InitialSync.INCREMENTAL);
            try (SyncEngine engine = engine(SqlServerProvider.create(fresh.dataSource()), object,
                    InMemoryWatermarkStore.create(), recorder, null)) {
                ObjectReport seed = engine.runOnce(name);
                assertThat(seed.outcome()).isEqualTo(Outcome.SEEDED);
                assertThat(seed.toVersion()).hasValue(0);

                ObjectReport quiet = engine.runOnce(name);
                assertThat(quiet.outcome()).as("fromVersion 0 is diffed from, not exported whole")
                        .isEqualTo(Outcome.NO_CHANGES);
                assertThat(recorder.offered()).isZero();

                items.insert("N1", "first change", "A", BigDecimal.TEN);
                ObjectReport first = engine.runOnce(name);
                assertThat(first.outcome()).isEqualTo(Outcome.DELIVERED);
                assertThat(first.syncType()).contains(SyncType.DIFF);
                assertThat(recorder.changes()).singleElement()
                        .satisfies(c -> assertThat(ChangeKeys.key(c)).isEqualTo("N1"));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void a_full_first_cycle_at_version_0_exports_once_and_is_not_repeated(Level level) {
        try (SqlServerDatabase fresh = SqlServerContainerServer.shared().createDatabase()) {
            ItemsTable items = ItemsTable.createUntouched(fresh, level, 2);
            RecordingDestination recorder = new RecordingDestination();
            String name = items.table();
            try (SyncEngine engine = engine(SqlServerProvider.create(fresh.dataSource()), items.tracked(name),
                    InMemoryWatermarkStore.create(), recorder, null)) {
                ObjectReport full = engine.runOnce(name);
                assertThat(full.outcome()).isEqualTo(Outcome.DELIVERED);
                assertThat(full.syncType()).contains(SyncType.FULL);
                assertThat(full.reasonCode()).isZero();
                assertThat(full.toVersion()).hasValue(0);
                assertThat(recorder.changes()).hasSize(2);

                ObjectReport next = engine.runOnce(name);
                assertThat(next.outcome()).isEqualTo(Outcome.NO_CHANGES);
                assertThat(recorder.changes()).hasSize(2);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void an_aged_out_watermark_leads_to_a_full_batch_with_reason_code_1_and_a_diagnostic(Level level) {
        ItemsTable items = ItemsTable.create(database, level, 3);
        RecordingDestination recorder = new RecordingDestination();
        List<Diagnostic> heard = new CopyOnWriteArrayList<>();
        SyncListener listener = new SyncListener() {
            @Override
            public void onDiagnostic(String objectName, Diagnostic diagnostic) {
                heard.add(diagnostic);
            }
        };
        String name = items.table();
        try (SyncEngine engine = engine(SqlServerProvider.create(database.dataSource()), items.tracked(name),
                InMemoryWatermarkStore.create(), recorder, listener)) {
            long stored = engine.runOnce(name).toVersion().orElseThrow();
            assertThat(heard).isEmpty();

            // Changes after the watermark, then their history is lost: switching tracking off and on restarts the
            // table's history at the current version, as a retention cleanup or TRUNCATE TABLE would.
            items.set("I1", "Description", "changed after the watermark");
            items.update("ALTER TABLE " + items.table() + " DISABLE CHANGE_TRACKING");
            items.update("ALTER TABLE " + items.table() + " ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON)");
            long minValid = items.minValidVersion();
            assertThat(minValid).isGreaterThan(stored);
            recorder.clear();

            ObjectReport report = engine.runOnce(name);
            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(report.syncType()).contains(SyncType.FULL);
            assertThat(report.reasonCode()).isEqualTo(1);
            assertThat(recorder.batches()).isNotEmpty().allSatisfy(batch -> {
                assertThat(batch.syncType()).isEqualTo(SyncType.FULL);
                assertThat(batch.reasonCode()).isEqualTo(1);
                assertThat(batch.fromVersion()).isEqualTo(stored);
            });
            assertThat(recorder.changes()).extracting(ChangeKeys::key).containsExactly("I1", "I2", "I3");
            assertThat(ChangeKeys.byKey(recorder.changes()).get("I1").fields().get("Description").asText())
                    .isEqualTo("changed after the watermark");
            assertThat(report.toVersion().orElseThrow()).isGreaterThanOrEqualTo(minValid);

            Diagnostic agedOut = report.diagnostics().stream().filter(d -> d.code().equals("WATERMARK_AGED_OUT"))
                    .findFirst().orElseThrow(() -> new AssertionError("no WATERMARK_AGED_OUT in " + report));
            assertThat(agedOut.severity()).isEqualTo(Diagnostic.Severity.WARNING);
            assertThat(agedOut.details()).containsEntry("watermark", Long.toString(stored))
                    .containsEntry("minValidVersion", Long.toString(minValid))
                    .containsEntry("table", "[" + items.table().replace(".", "].[") + "]");
            assertThat(heard).contains(agedOut);
            assertThat(engine.status(name).diagnostics()).contains(agedOut);

            ObjectReport inside = engine.runOnce(name);
            assertThat(inside.diagnostics()).extracting(Diagnostic::code).doesNotContain("WATERMARK_AGED_OUT");
            assertThat(inside.syncType()).contains(SyncType.DIFF);
        }
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void the_least_privilege_role_is_enough(Level level) throws SQLException {
        ItemsTable items = ItemsTable.create(database, level, 2);
        // The store's tables are created by an administrator, as a DBA would from JdbcWatermarkStore.script().
        JdbcWatermarkStore.create(database.dataSource());
        String user = "tidemark_app_" + LOGINS.incrementAndGet();
        DataSource app = database.createLogin(user);
        LeastPrivilegeRole.named("tidemark_reader")
                .grantsFor(items.procedure())
                .storeSchema("tidemark")
                .member(user)
                .build()
                .install(database.dataSource());

        SqlServerProvider provider = SqlServerProvider.create(app);
        TrackedObject object = items.tracked(items.table());
        PreflightReport preflight = provider.preflight(object, object.initialSync(InitialSync.INCREMENTAL));
        assertThat(preflight.failures()).as(preflight.toString()).isEmpty();

        RecordingDestination recorder = new RecordingDestination();
        WatermarkStore store = JdbcWatermarkStore.builder(app).createTables(false).build();
        try (SyncEngine engine = engine(provider, object, store, recorder, null)) {
            ObjectReport full = engine.runOnce(object.name());
            assertThat(full.outcome()).as(full.toString()).isEqualTo(Outcome.DELIVERED);
            assertThat(recorder.changes()).hasSize(2);

            items.set("I2", "Price", new BigDecimal("7.25"));
            ObjectReport diff = engine.runOnce(object.name());
            assertThat(diff.outcome()).as(diff.toString()).isEqualTo(Outcome.DELIVERED);
            assertThat(diff.diagnostics()).as("the aged-out check runs as the login too").isEmpty();
            assertThat(recorder.changes()).last().satisfies(c -> {
                assertThat(c.operation()).contains(Operation.UPDATE);
                assertThat(c.changedColumns()).contains(List.of("Price"));
            });
            assertThat(store.load(object.name()).orElseThrow().version()).hasValue(items.currentVersion());
        }
        assertThat(provider.currentVersion(object.initialSync(InitialSync.INCREMENTAL))).isPresent();
        // And no more than that: the login cannot read the table itself.
        assertThatThrownBy(() -> ItemsTable.scalar(app, "SELECT COUNT(*) FROM " + items.table()))
                .hasRootCauseInstanceOf(SQLException.class)
                .hasStackTraceContaining("SELECT permission was denied");
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void a_long_running_writer_transaction_does_not_cause_a_skipped_change(Level level) throws SQLException {
        ItemsTable items = ItemsTable.create(database, level, 2);
        RecordingDestination recorder = new RecordingDestination();
        String name = items.table();
        // A short timeout: if the snapshot read ever waited for the writer's locks, the cycle would fail, not hang.
        SqlServerProvider provider = SqlServerProvider.builder(database.dataSource())
                .commandTimeout(Duration.ofSeconds(30)).build();
        try (SyncEngine engine = engine(provider, items.tracked(name), InMemoryWatermarkStore.create(), recorder, null)) {
            engine.runOnce(name);
            recorder.clear();
            long during;
            try (Connection writer = database.dataSource().getConnection()) {
                writer.setAutoCommit(false);
                try (PreparedStatement ps = writer.prepareStatement("UPDATE " + items.table()
                        + " SET Description = N'written by the long transaction' WHERE ItemCode = N'I1'")) {
                    assertThat(ps.executeUpdate()).isEqualTo(1);
                }
                // Another transaction starts later and commits first.
                items.insert("N1", "committed while the writer is open", "B", BigDecimal.ONE);

                ObjectReport whileOpen = engine.runOnce(name);
                assertThat(whileOpen.outcome()).as(whileOpen.toString()).isEqualTo(Outcome.DELIVERED);
                assertThat(recorder.changes()).extracting(ChangeKeys::key).containsExactly("N1");
                during = whileOpen.toVersion().orElseThrow();

                writer.commit();
            }
            ObjectReport afterCommit = engine.runOnce(name);
            assertThat(afterCommit.outcome()).as(afterCommit.toString()).isEqualTo(Outcome.DELIVERED);
            assertThat(recorder.changes()).extracting(ChangeKeys::key).containsExactly("N1", "I1");
            Change late = recorder.changes().get(1);
            assertThat(late.operation()).contains(Operation.UPDATE);
            assertThat(late.fields().get("Description").asText()).isEqualTo("written by the long transaction");
            assertThat(late.version().getAsLong()).as("the writer's version comes from its commit").isGreaterThan(during);
        }
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void max_rows_ends_at_a_whole_version_and_never_hides_an_earlier_change(Level level) {
        ItemsTable items = ItemsTable.create(database, level, 1);
        RecordingDestination recorder = new RecordingDestination();
        String name = items.table();
        TrackedObject object = items.tracked(name).maxRows(4);
        try (SyncEngine engine = engine(SqlServerProvider.create(database.dataSource()), object,
                InMemoryWatermarkStore.create(), recorder, null)) {
            engine.runOnce(name);
            recorder.clear();

            items.inOneTransaction(insert("A1"), insert("A2"), insert("A3"));
            long a = items.currentVersion();
            items.inOneTransaction(insert("B1"), insert("B2"));
            items.insert("C1", "c", "C", BigDecimal.ONE);
            long c = items.currentVersion();

            // 3 rows fit; with the next version's 2 they would not: the call ends after version a.
            ObjectReport first = engine.runOnce(name);
            assertThat(first.changeCount()).isEqualTo(3);
            assertThat(first.toVersion()).hasValue(a);
            assertThat(first.fullBatch()).isFalse();
            ObjectReport second = engine.runOnce(name);
            assertThat(second.changeCount()).isEqualTo(3);
            assertThat(second.toVersion()).hasValue(c);
            assertThat(recorder.changes()).extracting(ChangeKeys::key)
                    .containsExactly("A1", "A2", "A3", "B1", "B2", "C1");
            recorder.clear();

            // One version larger than maxRows comes whole: a version is never split.
            items.inOneTransaction(insert("D1"), insert("D2"), insert("D3"), insert("D4"), insert("D5"));
            long d = items.currentVersion();
            items.insert("E1", "e", "E", BigDecimal.ONE);
            ObjectReport whole = engine.runOnce(name);
            assertThat(whole.changeCount()).isEqualTo(5);
            assertThat(whole.toVersion()).hasValue(d);
            assertThat(whole.fullBatch()).isTrue();
            assertThat(engine.runOnce(name).changeCount()).isEqualTo(1);
            recorder.clear();

            // S1 is inserted before the version the call could end at, and changed after it. Left for the next
            // call, it would come back as an update of one column, and its insert (with the other columns) would
            // be lost to a column-level consumer. So the call does not end there.
            items.insert("S1", "first text", "S", new BigDecimal("3.00"));
            items.inOneTransaction(insert("X1"), insert("X2"), insert("X3"), insert("X4"));
            items.set("S1", "Description", "changed later");
            ObjectReport straddled = engine.runOnce(name);
            assertThat(straddled.changeCount()).isEqualTo(5);
            assertThat(straddled.toVersion()).hasValue(items.currentVersion());
            Change s1 = ChangeKeys.byKey(recorder.changes()).get("S1");
            assertThat(s1.operation()).contains(Operation.INSERT);
            assertThat(s1.fields().get("Description").asText()).isEqualTo("changed later");
            assertThat(s1.fields().get("Assortment").asText()).isEqualTo("S");
            assertThat(s1.fields().get("Price").decimalValue()).isEqualByComparingTo("3.00");
        }
    }

    private static String insert(String code) {
        return "INSERT INTO {table} (ItemCode, Description, Assortment, Price) VALUES (N'" + code + "', N'text of "
                + code + "', N'M', 1.00)";
    }

    static SyncEngine engine(SqlServerProvider provider, TrackedObject object, WatermarkStore store,
                             RecordingDestination recorder, SyncListener listener) {
        SyncEngine.Builder builder = SyncEngine.builder()
                .provider(provider)
                .watermarks(store)
                .track(object)
                .destination("recorder", recorder)
                .pageSize(50);
        if (listener != null) {
            builder.listener(listener);
        }
        return builder.build();
    }

    /** Reading changes of the items tables by their key. */
    static final class ChangeKeys {
        private ChangeKeys() {
        }

        static String key(Change change) {
            return change.fields().get("ItemCode").asText();
        }

        static Map<String, Change> byKey(List<Change> changes) {
            Map<String, Change> map = new LinkedHashMap<>();
            for (Change change : changes) {
                map.put(key(change), change);
            }
            return map;
        }

        static List<String> keys(List<ChangeBatch> batches) {
            return batches.stream().flatMap(b -> b.changes().stream()).map(ChangeKeys::key).toList();
        }
    }
}
