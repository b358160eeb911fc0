package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link TemporalTable#migrate}: a history installed with {@link HistoryStorage#HISTORY_TABLE} converted to
 * {@link HistoryStorage#CURRENT_IN_TABLE} keeps every version row for row, and every refusal changes nothing.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class StorageMigrationTest {

    /** The history as the reference's columns present it, in one order; the open versions' history_id left out. */
    private static final String HISTORY = "SELECT CASE WHEN valid_to = 'infinity' THEN NULL ELSE history_id END AS history_id,"
            + " id, v, n, doc::text AS doc, valid_from, valid_to, operation, chain_no, changed_by, changed_by_name,"
            + " correlation_id, reason, extra::text AS extra FROM %s ORDER BY id, valid_from, valid_to, operation";

    private final DataSource ds;

    StorageMigrationTest(DataSource ds) {
        this.ds = ds;
    }

    private static TemporalTable.Builder table(String name, TriggerMode mode) {
        return TemporalTable.forTable(name).triggerMode(mode).exclude("note");
    }

    private void inTransaction(String... statements) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            for (String statement : statements) {
                s.execute(statement);
            }
            c.commit();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest(name = "{0} mode, by script: {1}")
    @CsvSource({"ROW, false", "STATEMENT, false", "ROW, true"})
    void every_version_keeps_its_row_and_the_table_goes_on_in_the_new_shape(TriggerMode mode, boolean byScript) {
        String name = "mig_" + mode.name().toLowerCase() + (byScript ? "_script" : "");
        Db.exec(ds, "CREATE TABLE " + name + " (id int PRIMARY KEY, v text, n int, doc json, note text)");
        table(name, mode).build().install(ds);
        inTransaction("SELECT set_config('tidemark.changed_by', 'ann', true), set_config('tidemark.extra', '{\"ticket\": 7}', true)",
                "INSERT INTO " + name + " VALUES (1, 'a', 1, '{\"x\": 1}', 'n'), (2, 'b', 2, null, 'n'), (3, 'c', 3, null, 'n')");
        inTransaction("SELECT set_config('tidemark.reason', 'fix', true)",
                "UPDATE " + name + " SET v = 'a2' WHERE id = 1", "UPDATE " + name + " SET doc = '{\"x\": 2}' WHERE id = 1");
        inTransaction("UPDATE " + name + " SET note = 'excluded only' WHERE id = 1");
        inTransaction("DELETE FROM " + name + " WHERE id = 2");
        inTransaction("SELECT set_config('tidemark.changed_by', 'bob', true)", "INSERT INTO " + name + " VALUES (2, 'b2', 2, null, 'n')");
        inTransaction("UPDATE " + name + " SET id = 4 WHERE id = 3");
        List<Map<String, Object>> before = Db.rows(ds, HISTORY.formatted(name + "_history"));
        long closed = Db.count(ds, "SELECT count(*) FROM " + name + "_history WHERE valid_to <> 'infinity'");
        assertThat(closed).as("versions, tombstones, a second chain and a key update").isEqualTo(6);

        TemporalTable current = table(name, mode).storage(HistoryStorage.CURRENT_IN_TABLE).build();
        if (byScript) {
            String script = current.migrationScript(ds);
            assertThat(script).as("reviewable: commented, locked first, checks before any change")
                    .startsWith("-- Tidemark: migrate the history of public." + name)
                    .containsSubsequence("LOCK TABLE", "DO $tidemark$", "DROP TRIGGER IF EXISTS",
                            "OVERRIDING SYSTEM VALUE", "UPDATE \"public\".\"" + name + "\" AS t", "DROP TABLE",
                            "CREATE VIEW", "INSERT INTO \"tidemark\".\"temporal_tables\"");
            assertThat(current.migrationScript(ds)).as("generating it changes nothing").isEqualTo(script);
            assertThatThrownBy(() -> inTransaction("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", script))
                    .hasMessageContaining("at READ COMMITTED, not repeatable read");
            inTransaction(script);
        } else {
            MigrationReport report = current.migrate(ds);
            assertThat(report.migrated()).isTrue();
            assertThat(report.closedVersions()).isEqualTo(closed);
            assertThat(report.currentVersions()).isEqualTo(3);
            assertThat(report.splitVersions()).isZero();
        }
        assertThat(Db.rows(ds, HISTORY.formatted(name + "_history"))).as("the view presents the same rows")
                .isEqualTo(before);
        assertThat(Db.scalar(ds, "SELECT relkind::text FROM pg_class WHERE relname = ?", name + "_history"))
                .isEqualTo("v");
        assertThat(current.verify(ds).drifts()).as("installed exactly as install() would").isEmpty();
        assertThat(current.install(ds)).isEqualTo(new InstallReport(false, 0, List.of()));
        assertThat(current.migrate(ds).migrated()).as("a second run does nothing").isFalse();

        Db.exec(ds, "UPDATE " + name + " SET v = 'a3' WHERE id = 1");
        Db.exec(ds, "DELETE FROM " + name + " WHERE id = 4");
        assertThat(Versions.of(ds, name + "_history", "id = 1").ops()).containsExactly(1, 2, 2, 2);
        assertThat(Versions.of(ds, name + "_history", "id = 4").ops()).containsExactly(1, 3);
        assertThat(Db.scalar(ds, "SELECT max(history_id) > ? FROM " + name + "_history_closed",
                before.stream().map(r -> r.get("history_id")).filter(java.util.Objects::nonNull)
                        .mapToLong(h -> ((Number) h).longValue()).max().orElseThrow()))
                .as("new closed versions are numbered after the copied ones").isEqualTo(true);
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_trigger WHERE tgrelid = ?::regclass AND NOT tgisinternal",
                name)).as("the new shape's four triggers, none of the old").isEqualTo(4);
    }

    @Test
    void a_composite_key_history_migrates_row_for_row() {
        Db.exec(ds, "CREATE TABLE composite_mig (region text, id int, v text, PRIMARY KEY (region, id))");
        TemporalTable.forTable("composite_mig").build().install(ds);
        Db.exec(ds, "INSERT INTO composite_mig VALUES ('eu', 1, 'a'), ('us', 1, 'b'), ('eu', 2, 'c')");
        Db.exec(ds, "UPDATE composite_mig SET v = 'a2' WHERE region = 'eu' AND id = 1");
        Db.exec(ds, "DELETE FROM composite_mig WHERE region = 'us'");
        Db.exec(ds, "UPDATE composite_mig SET region = 'apac' WHERE id = 2");
        String history = "SELECT CASE WHEN valid_to = 'infinity' THEN NULL ELSE history_id END AS h, region, id, v,"
                + " valid_from, valid_to, operation, chain_no FROM composite_mig_history"
                + " ORDER BY region, id, valid_from, valid_to, operation";
        List<Map<String, Object>> before = Db.rows(ds, history);

        TemporalTable current = TemporalTable.forTable("composite_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build();
        assertThat(current.migrate(ds).currentVersions()).isEqualTo(2);

        assertThat(Db.rows(ds, history)).isEqualTo(before);
        Db.exec(ds, "UPDATE composite_mig SET v = 'a3' WHERE region = 'eu' AND id = 1");
        assertThat(Versions.of(ds, "composite_mig_history", "region = 'eu' AND id = 1").ops()).containsExactly(1, 2, 2);
    }

    @ParameterizedTest(name = "{0} mode, by script: {1}")
    @CsvSource({"ROW, false", "STATEMENT, false", "ROW, true"})
    void the_way_back_gives_the_history_table_the_original_had(TriggerMode mode, boolean byScript) {
        String name = "back_" + mode.name().toLowerCase() + (byScript ? "_script" : "");
        Db.exec(ds, "CREATE TABLE " + name + " (id int PRIMARY KEY, v text, n int, doc json, note text)");
        table(name, mode).build().install(ds);
        inTransaction("SELECT set_config('tidemark.changed_by', 'ann', true), set_config('tidemark.extra', '{\"ticket\": 7}', true)",
                "INSERT INTO " + name + " VALUES (1, 'a', 1, '{\"x\": 1}', 'n'), (2, 'b', 2, null, 'n'), (3, 'c', 3, null, 'n')");
        inTransaction("UPDATE " + name + " SET v = 'a2' WHERE id = 1", "UPDATE " + name + " SET doc = '{\"x\": 2}' WHERE id = 1");
        inTransaction("DELETE FROM " + name + " WHERE id = 2");
        inTransaction("INSERT INTO " + name + " VALUES (2, 'b2', 2, null, 'n')");
        inTransaction("UPDATE " + name + " SET id = 4 WHERE id = 3");
        List<Map<String, Object>> original = Db.rows(ds, HISTORY.formatted(name + "_history"));
        Db.exec(ds, "GRANT SELECT ON " + name + "_history TO PUBLIC");
        table(name, mode).storage(HistoryStorage.CURRENT_IN_TABLE).build().migrate(ds);
        Db.exec(ds, "INSERT INTO " + name + " VALUES (5, 'e', 5, null, 'n'); UPDATE " + name + " SET v = 'a3' WHERE id = 1");
        List<Map<String, Object>> current = Db.rows(ds, HISTORY.formatted(name + "_history"));

        TemporalTable back = table(name, mode).build();
        if (byScript) {
            String script = back.migrationScript(ds);
            assertThat(script).startsWith("-- Tidemark: migrate the history of public." + name
                    + " from storage CURRENT_IN_TABLE to HISTORY_TABLE").containsSubsequence("DROP VIEW",
                    "CREATE TABLE", "OVERRIDING SYSTEM VALUE", "DROP TABLE", "DROP COLUMN", "temporal_tables");
            inTransaction(script);
        } else {
            MigrationReport report = back.migrate(ds);
            assertThat(report.migrated()).isTrue();
            assertThat(report.currentVersions()).isEqualTo(4);
            assertThat(report.closedVersions()).isEqualTo(Db.count(ds, "SELECT count(*) FROM " + name + "_history"
                    + " WHERE valid_to <> 'infinity'"));
        }

        assertThat(Db.scalar(ds, "SELECT relkind::text FROM pg_class WHERE relname = ?", name + "_history"))
                .isEqualTo("r");
        assertThat(Db.count(ds, "SELECT count(*) FROM information_schema.columns WHERE table_name = ?"
                + " AND column_name LIKE 'tidemark%'", name)).as("the table's own columns only").isZero();
        assertThat(back.verify(ds).drifts()).as("installed exactly as install() would").isEmpty();
        assertThat(Db.rows(ds, HISTORY.formatted(name + "_history"))).as("the same versions, closed ones with their"
                + " ids").isEqualTo(current);
        assertThat(Db.rows(ds, HISTORY.formatted(name + "_history")).stream()
                .filter(r -> r.get("id").equals(2)).toList())
                .as("a key untouched since the first migration: as the original history table had it")
                .isEqualTo(original.stream().filter(r -> r.get("id").equals(2)).toList());
        assertThat(Db.scalar(ds, "SELECT has_table_privilege('public', ?, 'SELECT')", name + "_history"))
                .as("readers keep their grant").isEqualTo(true);
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_class WHERE relname = ?", name + "_history_closed")).isZero();
        Db.exec(ds, "UPDATE " + name + " SET v = 'a4' WHERE id = 1");
        Db.exec(ds, "DELETE FROM " + name + " WHERE id = 5");
        assertThat(Versions.of(ds, name + "_history", "id = 1").ops()).containsExactly(1, 2, 2, 2, 2);
        assertThat(Versions.of(ds, name + "_history", "id = 5").ops()).containsExactly(1, 3);
        assertThat(Db.count(ds, "SELECT count(*) FROM (SELECT history_id FROM " + name + "_history"
                + " GROUP BY history_id HAVING count(*) > 1) d")).as("no id given twice").isZero();
    }

    @Test
    void the_way_back_keeps_opt_in_values_and_orphans_and_refuses_a_view_of_the_application() {
        Db.exec(ds, "CREATE TABLE round_mig (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("round_mig").sessionUserColumn(true).build().install(ds);
        Db.exec(ds, "INSERT INTO round_mig VALUES (1, 'a'); UPDATE round_mig SET v = 'b'");
        List<Map<String, Object>> users = Db.rows(ds, "SELECT v, db_session_user FROM round_mig_history ORDER BY valid_from");
        TemporalTable.forTable("round_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build().migrate(ds);
        Db.exec(ds, "CREATE VIEW round_view AS SELECT * FROM round_mig_history");
        TemporalTable back = TemporalTable.forTable("round_mig").sessionUserColumn(true).build();
        assertThatThrownBy(() -> back.migrate(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CHANGE_REFUSED);
            assertThat(e.getMessage()).contains("public.round_view", "Nothing was changed");
        });
        assertThat(Db.scalar(ds, "SELECT relkind::text FROM pg_class WHERE relname = 'round_mig_history'")).isEqualTo("v");
        Db.exec(ds, "DROP VIEW round_view");

        back.migrate(ds);

        assertThat(Db.rows(ds, "SELECT v, db_session_user FROM round_mig_history WHERE valid_to <> 'infinity'"
                + " ORDER BY valid_from")).as("the values the split kept, back in their own column")
                .isEqualTo(users);
        assertThat(Db.scalar(ds, "SELECT db_session_user FROM round_mig_history WHERE valid_to = 'infinity'"))
                .as("not the migrating session's: the current-in-table shape did not record it").isNull();
        Db.exec(ds, "UPDATE round_mig SET v = 'c'");
        assertThat(Db.scalar(ds, "SELECT db_session_user IS NOT NULL FROM round_mig_history WHERE valid_to = 'infinity'"))
                .as("new versions record it again").isEqualTo(true);
    }

    private TemporalTable currentInTable(String table) {
        return TemporalTable.forTable(table).storage(HistoryStorage.CURRENT_IN_TABLE).build();
    }

    @Test
    void on_the_way_back_a_reader_of_the_view_waits_and_then_reads_the_history_table() throws Exception {
        Db.exec(ds, "CREATE TABLE readb (id int PRIMARY KEY, v text)");
        currentInTable("readb").install(ds);
        Db.exec(ds, "INSERT INTO readb VALUES (1, 'a'); UPDATE readb SET v = 'b'");
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (Connection r = ds.getConnection(); Statement s = r.createStatement()) {
            r.setAutoCommit(false);
            s.execute("SELECT count(*) FROM readb_history"); // a report in progress holds the view and both tables
            var migration = pool.submit(() -> TemporalTable.forTable("readb").build().migrate(ds).migrated());
            Waits.untilWaitingOn(ds, "readb_history", 1);
            var reader = pool.submit(() -> Db.count(ds, "SELECT count(*) FROM readb_history"));
            Waits.untilWaitingOn(ds, "readb_history", 2);
            r.commit();
            assertThat(migration.get(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(reader.get(30, java.util.concurrent.TimeUnit.SECONDS))
                    .as("no deadlock: the reader waited at the view, then read the table of that name").isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void two_migrations_back_at_once_one_migrates_and_the_other_finds_it_done() throws Exception {
        Db.exec(ds, "CREATE TABLE twiceb (id int PRIMARY KEY, v text)");
        currentInTable("twiceb").install(ds);
        Db.exec(ds, "INSERT INTO twiceb VALUES (1, 'a')");
        TemporalTable back = TemporalTable.forTable("twiceb").build();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        List<Boolean> migrated = new ArrayList<>();
        try (Connection w = ds.getConnection(); Statement s = w.createStatement()) {
            w.setAutoCommit(false);
            s.execute("UPDATE twiceb SET v = 'b'");
            var first = pool.submit(() -> back.migrate(ds));
            Waits.untilWaitingOn(ds, "twiceb", 1);
            var second = pool.submit(() -> back.migrate(ds));
            Waits.untilWaitingOn(ds, "twiceb_history", 1);
            w.commit();
            migrated.add(first.get(30, java.util.concurrent.TimeUnit.SECONDS).migrated());
            migrated.add(second.get(30, java.util.concurrent.TimeUnit.SECONDS).migrated());
        } finally {
            pool.shutdownNow();
        }
        assertThat(migrated).containsExactly(true, false);
        assertThat(Versions.of(ds, "twiceb_history", "id = 1").ops()).containsExactly(1, 2);
    }

    @Test
    void ids_stay_unique_across_a_round_trip_with_a_prune_between() {
        Db.exec(ds, "CREATE TABLE idsp (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("idsp").build().install(ds);
        Db.exec(ds, "INSERT INTO idsp VALUES (1, 'a'), (2, 'b')");
        Db.exec(ds, "UPDATE idsp SET v = 'a2' WHERE id = 1");
        Db.exec(ds, "UPDATE idsp SET v = 'a3' WHERE id = 1");
        long highest = Db.count(ds, "SELECT max(history_id) FROM idsp_history");
        currentInTable("idsp").migrate(ds);
        currentInTable("idsp").prune(ds, ((Timestamp) Db.scalar(ds, "SELECT clock_timestamp()")).toInstant());
        TemporalTable.forTable("idsp").build().migrate(ds);
        assertThat(Db.count(ds, "SELECT min(history_id) FROM idsp_history WHERE valid_to = 'infinity'"))
                .as("the open versions get ids after every id given out, in either shape").isGreaterThan(highest);
    }

    @Test
    void on_the_way_back_what_hangs_on_the_closed_versions_is_refused_before_anything_changes() {
        Db.exec(ds, "CREATE TABLE hangb (id int PRIMARY KEY, v text)");
        currentInTable("hangb").install(ds);
        Db.exec(ds, "INSERT INTO hangb VALUES (1, 'a'); UPDATE hangb SET v = 'b'");
        TemporalTable back = TemporalTable.forTable("hangb").build();
        List<String[]> cases = List.of(
                new String[] {"CREATE FUNCTION hangb_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;"
                        + " CREATE TRIGGER hangb_audit AFTER INSERT ON hangb_history_closed FOR EACH ROW EXECUTE FUNCTION hangb_audit()",
                        "trigger hangb_audit", "DROP TRIGGER hangb_audit ON hangb_history_closed"},
                new String[] {"CREATE TABLE hangb_notes (h bigint REFERENCES hangb_history_closed (history_id))",
                        "foreign key", "DROP TABLE hangb_notes"},
                new String[] {"GRANT SELECT ON hangb_history_closed TO PUBLIC", "GRANT SELECT ON public.hangb_history_closed TO PUBLIC",
                        "REVOKE SELECT ON hangb_history_closed FROM PUBLIC"},
                new String[] {"CREATE VIEW hangb_view AS SELECT * FROM hangb_history", "public.hangb_view",
                        "DROP VIEW hangb_view"});
        for (String[] c : cases) {
            Db.exec(ds, c[0]);
            assertThatThrownBy(() -> back.migrate(ds)).as(c[1]).isInstanceOfSatisfying(TidemarkException.class,
                    e -> assertThat(e.getMessage()).contains(c[1], "Nothing was changed"));
            Db.exec(ds, c[2]);
            assertThat(Db.scalar(ds, "SELECT relkind::text FROM pg_class WHERE relname = 'hangb_history'")).isEqualTo("v");
        }
        assertThat(back.migrate(ds).migrated()).isTrue();
    }

    @Test
    void install_or_evolve_with_the_other_storage_names_migrate() {
        Db.exec(ds, "CREATE TABLE named_mig (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("named_mig").build().install(ds);
        TemporalTable current = TemporalTable.forTable("named_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build();
        for (Runnable call : List.<Runnable>of(() -> current.install(ds), () -> current.evolve(ds))) {
            assertThatThrownBy(call::run).isInstanceOfSatisfying(TidemarkException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
                assertThat(e.getMessage()).contains("run migrate()", "HISTORY_TABLE", "CURRENT_IN_TABLE");
            });
        }
        assertThat(TemporalTable.forTable("named_mig").build().migrate(ds).migrated())
                .as("the configured storage is the target, and it is installed so").isFalse();
        assertThatThrownBy(() -> TemporalTable.forTable("named_mig").build().migrationScript(ds))
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION));
        Db.exec(ds, "CREATE TABLE never_installed (id int PRIMARY KEY)");
        assertThatThrownBy(() -> TemporalTable.forTable("never_installed").storage(HistoryStorage.CURRENT_IN_TABLE)
                .build().migrate(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
                    assertThat(e.getMessage()).contains("not registered");
                });
    }

    @Test
    void an_open_version_whose_earlier_versions_were_pruned_keeps_its_operation_and_chain_by_a_split() {
        Db.exec(ds, "CREATE TABLE pruned_mig (id int PRIMARY KEY, v text)");
        TemporalTable installed = TemporalTable.forTable("pruned_mig").build();
        installed.install(ds);
        Db.exec(ds, "INSERT INTO pruned_mig VALUES (1, 'a'), (2, 'b'), (3, 'c')");
        Db.exec(ds, "UPDATE pruned_mig SET v = 'a2' WHERE id = 1");
        Db.exec(ds, "DELETE FROM pruned_mig WHERE id = 2");
        Db.exec(ds, "INSERT INTO pruned_mig VALUES (2, 'b2')");
        Instant cutoff = ((Timestamp) Db.scalar(ds, "SELECT clock_timestamp()")).toInstant();
        installed.prune(ds, cutoff);
        assertThat(Db.rows(ds, "SELECT id, operation, chain_no FROM pruned_mig_history ORDER BY id"))
                .as("only the open versions are left: an update, a second chain's insert and a first insert")
                .extracting(r -> r.get("id") + ":" + r.get("operation") + ":" + r.get("chain_no"))
                .containsExactly("1:2:1", "2:1:2", "3:1:1");
        Map<Object, Object> startsBefore = new HashMap<>();
        Db.rows(ds, "SELECT id, valid_from FROM pruned_mig_history").forEach(r -> startsBefore.put(r.get("id"),
                r.get("valid_from")));

        MigrationReport report = TemporalTable.forTable("pruned_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build()
                .migrate(ds);

        assertThat(report.splitVersions()).isEqualTo(2);
        assertThat(report.actions()).anySatisfy(a -> assertThat(a).contains("2 open versions", "pruned"));
        List<String> rows = new ArrayList<>();
        for (Map<String, Object> r : Db.rows(ds, "SELECT id, v, operation, chain_no, valid_from, valid_to"
                + " FROM pruned_mig_history ORDER BY id, valid_from")) {
            rows.add(r.get("id") + ":" + r.get("v") + ":" + r.get("operation") + ":" + r.get("chain_no")
                    + (r.get("valid_from").equals(startsBefore.get(r.get("id"))) ? ":same start" : ":split"));
        }
        assertThat(rows).as("the split's two rows hold the same values; the current version's operation and chain"
                        + " follow from the closed part")
                .containsExactly("1:a2:2:1:same start", "1:a2:2:1:split", "2:b2:1:2:same start", "2:b2:2:2:split",
                        "3:c:1:1:same start");
        assertThat(Db.count(ds, "SELECT count(*) FROM pruned_mig_as_of(?::timestamptz)",
                Timestamp.from(cutoff))).as("the table as it was after the prune horizon").isEqualTo(3);
        assertThat(Db.scalar(ds, "SELECT pruned_before IS NOT NULL FROM tidemark.temporal_tables"
                + " WHERE source_table = 'pruned_mig'")).as("the retention horizon is kept").isEqualTo(true);
    }

    @Test
    void a_history_whose_open_versions_and_rows_do_not_pair_up_is_refused_and_nothing_changes() {
        Db.exec(ds, "CREATE TABLE unpaired (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("unpaired").build().install(ds);
        Db.exec(ds, "INSERT INTO unpaired VALUES (1, 'a')");
        Db.exec(ds, "ALTER TABLE unpaired DISABLE TRIGGER unpaired_history_trg; INSERT INTO unpaired VALUES (5, 'x');"
                + " ALTER TABLE unpaired ENABLE TRIGGER unpaired_history_trg");
        TemporalTable current = TemporalTable.forTable("unpaired").storage(HistoryStorage.CURRENT_IN_TABLE).build();

        assertThatThrownBy(() -> current.migrate(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
            assertThat(e.getMessage()).contains("rows of the table without an open version", "1 (key (5))",
                    "checkInvariants()", "Nothing was changed");
        });
        assertNothingChanged("unpaired");
        String script = current.migrationScript(ds);
        assertThatThrownBy(() -> inTransaction(script)).as("the script's checks refuse it too")
                .hasMessageContaining("rows of the table without an open version in the history: 1 (key (5))");
        assertNothingChanged("unpaired");
        Db.exec(ds, "ALTER TABLE unpaired DISABLE TRIGGER unpaired_history_trg; DELETE FROM unpaired WHERE id = 5;"
                + " ALTER TABLE unpaired ENABLE TRIGGER unpaired_history_trg");
        Db.exec(ds, "DELETE FROM unpaired_history WHERE id = 1 AND valid_to = 'infinity'"); // an open version left alone
        assertThatThrownBy(() -> current.migrate(ds)).isInstanceOfSatisfying(TidemarkException.class,
                e -> assertThat(e.getMessage()).contains("rows of the table without an open version", "(key (1))"));
        Db.exec(ds, "INSERT INTO unpaired_history (id, v, valid_from, operation, chain_no) VALUES (1, 'a', now(), 1, 1),"
                + " (9, 'z', now(), 1, 1)");
        assertThatThrownBy(() -> current.migrate(ds)).isInstanceOfSatisfying(TidemarkException.class,
                e -> assertThat(e.getMessage()).contains("open versions in the history of keys that have no row in"
                        + " the table", "1 (key (9))"));
        assertNothingChanged("unpaired");
        Db.exec(ds, "DELETE FROM unpaired_history WHERE id = 9");
        assertThat(current.migrate(ds).migrated()).as("once repaired it migrates").isTrue();
    }

    @Test
    void a_view_of_the_application_on_the_history_table_is_refused_naming_it() {
        Db.exec(ds, "CREATE TABLE viewed_mig (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("viewed_mig").build().install(ds);
        Db.exec(ds, "INSERT INTO viewed_mig VALUES (1, 'a'); CREATE VIEW audit_view AS SELECT * FROM viewed_mig_history");
        TemporalTable current = TemporalTable.forTable("viewed_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build();
        assertThatThrownBy(() -> current.migrate(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CHANGE_REFUSED);
            assertThat(e.getMessage()).contains("public.audit_view", "Nothing was changed");
        });
        assertNothingChanged("viewed_mig");
        Db.exec(ds, "DROP VIEW audit_view");
        current.migrate(ds);
        Db.exec(ds, "CREATE VIEW audit_view AS SELECT * FROM viewed_mig_history");
        assertThat(Db.count(ds, "SELECT count(*) FROM audit_view")).isEqualTo(1);
    }

    @Test
    void the_applications_update_triggers_do_not_see_the_migration_and_keep_their_state() {
        Db.exec(ds, "CREATE TABLE touched_mig (id int PRIMARY KEY, v text, touches int NOT NULL DEFAULT 0);"
                + " CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN NEW.touches := NEW.touches + 1; RETURN NEW; END $$;"
                + " CREATE TRIGGER a_touch BEFORE UPDATE ON touched_mig FOR EACH ROW EXECUTE FUNCTION touch();"
                + " CREATE TRIGGER b_touch_always BEFORE UPDATE ON touched_mig FOR EACH ROW EXECUTE FUNCTION touch();"
                + " ALTER TABLE touched_mig ENABLE ALWAYS TRIGGER b_touch_always;"
                + " CREATE TRIGGER c_touch_off BEFORE UPDATE ON touched_mig FOR EACH ROW EXECUTE FUNCTION touch();"
                + " ALTER TABLE touched_mig DISABLE TRIGGER c_touch_off");
        TemporalTable.forTable("touched_mig").exclude("touches").build().install(ds);
        Db.exec(ds, "INSERT INTO touched_mig (id, v) VALUES (1, 'a'), (2, 'b')");
        String states = "SELECT string_agg(tgname || '=' || tgenabled::text, ',' ORDER BY tgname) FROM pg_trigger"
                + " WHERE tgrelid = 'touched_mig'::regclass AND tgname LIKE '%touch%' AND tgname NOT LIKE 'touched_mig_history%'";
        Object before = Db.scalar(ds, states);

        TemporalTable current = TemporalTable.forTable("touched_mig").exclude("touches")
                .storage(HistoryStorage.CURRENT_IN_TABLE).build();
        assertThat(current.migrationScript(ds)).as("the script names what it pauses and how it restores it")
                .contains("DISABLE TRIGGER \"a_touch\"", "ENABLE TRIGGER \"a_touch\"",
                        "DISABLE TRIGGER \"b_touch_always\"", "ENABLE ALWAYS TRIGGER \"b_touch_always\"")
                .doesNotContain("c_touch_off");
        MigrationReport report = current.migrate(ds);

        assertThat(report.actions()).anySatisfy(a -> assertThat(a).contains("a_touch", "b_touch_always")
                .doesNotContain("c_touch_off"));
        assertThat(Db.count(ds, "SELECT sum(touches) FROM touched_mig")).as("no trigger of the application fired")
                .isZero();
        assertThat(Db.scalar(ds, states)).isEqualTo(before);
        Db.exec(ds, "UPDATE touched_mig SET v = 'a2' WHERE id = 1");
        assertThat(Db.count(ds, "SELECT touches FROM touched_mig WHERE id = 1")).as("both enabled triggers fire again")
                .isEqualTo(2);
    }

    @Test
    void readers_keep_their_grant_and_the_opt_in_columns_keep_every_value(TestDatabase db) {
        DataSource reader = db.createRole("mig_reader");
        Db.exec(ds, "CREATE TABLE granted_mig (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("granted_mig").sessionUserColumn(true).transactionIdColumn(true).build().install(ds);
        Db.exec(ds, "INSERT INTO granted_mig VALUES (1, 'a'); UPDATE granted_mig SET v = 'b'");
        Db.exec(ds, "GRANT SELECT ON granted_mig, granted_mig_history TO mig_reader");
        String versions = "SELECT v, db_session_user, transaction_id::text AS xid, valid_from FROM granted_mig_history"
                + " %s ORDER BY valid_from, valid_to";
        List<Map<String, Object>> before = Db.rows(ds, versions.formatted(""));
        assertThat(before).hasSize(2).allSatisfy(r -> assertThat(r.get("db_session_user")).isNotNull());

        MigrationReport report = TemporalTable.forTable("granted_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build()
                .migrate(ds);

        assertThat(report.splitVersions()).as("the open version held values the current version has no place for")
                .isEqualTo(1);
        assertThat(Db.rows(reader, versions.formatted("WHERE valid_to <> 'infinity'")))
                .as("the reader reads the view; both versions keep who and which transaction").isEqualTo(before);
        assertThat(Db.rows(reader, "SELECT v, db_session_user FROM granted_mig_history WHERE valid_to = 'infinity'"))
                .as("the identical current version, which the shape does not stamp with them")
                .singleElement().satisfies(r -> {
                    assertThat(r.get("v")).isEqualTo("b");
                    assertThat(r.get("db_session_user")).isNull();
                });
    }

    @Test
    void a_value_of_a_column_excluded_only_now_is_kept_by_a_split() {
        Db.exec(ds, "CREATE TABLE excluded_mig (id int PRIMARY KEY, v text, n int)");
        TemporalTable.forTable("excluded_mig").build().install(ds);
        Db.exec(ds, "INSERT INTO excluded_mig VALUES (1, 'a', 7), (2, 'b', NULL)");
        MigrationReport report = TemporalTable.forTable("excluded_mig").exclude("n")
                .storage(HistoryStorage.CURRENT_IN_TABLE).build().migrate(ds);
        assertThat(report.splitVersions()).as("key 1 only: key 2 has no value to keep").isEqualTo(1);
        assertThat(Db.rows(ds, "SELECT id, n, valid_to = 'infinity' AS open FROM excluded_mig_history"
                + " ORDER BY id, valid_from")).extracting(r -> r.get("id") + ":" + r.get("n") + ":" + r.get("open"))
                .containsExactly("1:7:false", "1:null:true", "2:null:true");
    }

    @Test
    void a_writer_that_commits_while_a_repeatable_read_migration_waits_is_migrated() throws Exception {
        Db.exec(ds, "CREATE TABLE rr_mig (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("rr_mig").build().install(ds);
        Db.exec(ds, "INSERT INTO rr_mig VALUES (1, 'a')");
        DataSource repeatableRead = new IsolationDataSource(ds, Connection.TRANSACTION_REPEATABLE_READ);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(1);
        try (Connection w = ds.getConnection(); Statement s = w.createStatement()) {
            w.setAutoCommit(false);
            s.execute("SELECT set_config('tidemark.changed_by', 'writer', true)");
            s.execute("INSERT INTO rr_mig VALUES (9, 'x')");
            s.execute("UPDATE rr_mig SET v = 'y' WHERE id = 9");
            java.util.concurrent.Future<MigrationReport> migration = pool.submit(() -> TemporalTable.forTable("rr_mig")
                    .storage(HistoryStorage.CURRENT_IN_TABLE).build().migrate(repeatableRead));
            Waits.untilWaitingOn(ds, "rr_mig", 1);
            w.commit();
            assertThat(migration.get(30, java.util.concurrent.TimeUnit.SECONDS).currentVersions()).isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
        assertThat(Db.rows(ds, "SELECT v, operation, changed_by FROM rr_mig_history WHERE id = 9 ORDER BY valid_from"))
                .as("the writer's insert and update, with its context, though the pool's default is REPEATABLE READ")
                .extracting(r -> r.get("v") + ":" + r.get("operation") + ":" + r.get("changed_by"))
                .containsExactly("x:1:writer", "y:2:writer");
    }

    @Test
    void two_migrations_at_once_one_migrates_and_the_other_finds_it_done() throws Exception {
        Db.exec(ds, "CREATE TABLE twice_mig (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("twice_mig").build().install(ds);
        Db.exec(ds, "INSERT INTO twice_mig VALUES (1, 'a')");
        TemporalTable current = TemporalTable.forTable("twice_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        List<Boolean> migrated = new ArrayList<>();
        try (Connection w = ds.getConnection(); Statement s = w.createStatement()) {
            w.setAutoCommit(false);
            s.execute("UPDATE twice_mig SET v = 'b'");
            var first = pool.submit(() -> current.migrate(ds));
            var second = pool.submit(() -> current.migrate(ds));
            Waits.untilWaitingOn(ds, "twice_mig", 2);
            w.commit();
            migrated.add(first.get(30, java.util.concurrent.TimeUnit.SECONDS).migrated());
            migrated.add(second.get(30, java.util.concurrent.TimeUnit.SECONDS).migrated());
        } finally {
            pool.shutdownNow();
        }
        assertThat(migrated).containsExactlyInAnyOrder(true, false);
        assertThat(Versions.of(ds, "twice_mig_history", "id = 1").ops()).containsExactly(1, 2);
    }

    @Test
    void history_ids_are_never_given_twice() {
        Db.exec(ds, "CREATE TABLE ids_mig (id int PRIMARY KEY, v text)");
        TemporalTable.forTable("ids_mig").build().install(ds);
        Db.exec(ds, "INSERT INTO ids_mig VALUES (1, 'a'), (2, 'b'), (3, 'c')");
        Db.exec(ds, "UPDATE ids_mig SET v = 'a2' WHERE id = 1");
        long highest = Db.count(ds, "SELECT max(history_id) FROM ids_mig_history");
        TemporalTable.forTable("ids_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build().migrate(ds);
        Db.exec(ds, "UPDATE ids_mig SET v = 'c2' WHERE id = 3");
        assertThat(Db.count(ds, "SELECT min(history_id) FROM ids_mig_history_closed WHERE id = 3"))
                .as("after every id the history table gave out, the open versions' included").isGreaterThan(highest);
    }

    @Test
    void what_the_migration_cannot_carry_over_is_refused_before_anything_changes() {
        Db.exec(ds, "CREATE TABLE refused_mig (id int PRIMARY KEY, v text, n int)");
        TemporalTable.forTable("refused_mig").build().install(ds);
        Db.exec(ds, "INSERT INTO refused_mig VALUES (1, 'a', 1); UPDATE refused_mig SET v = 'b'");
        TemporalTable current = TemporalTable.forTable("refused_mig").storage(HistoryStorage.CURRENT_IN_TABLE).build();
        List<String[]> cases = List.of(
                new String[] {"CREATE TABLE notes_mig (h bigint REFERENCES refused_mig_history (history_id))",
                        "foreign key", "DROP TABLE notes_mig"},
                new String[] {"CREATE FUNCTION audit_mig() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;"
                        + " CREATE TRIGGER audit_mig AFTER INSERT ON refused_mig_history FOR EACH ROW EXECUTE FUNCTION audit_mig()",
                        "trigger audit_mig", "DROP TRIGGER audit_mig ON refused_mig_history"},
                new String[] {"CREATE TABLE old_mig (id int); CREATE INDEX refused_mig_history_closed_key_idx ON old_mig (id)",
                        "refused_mig_history_closed_key_idx already exists", "DROP TABLE old_mig"},
                new String[] {"CREATE TABLE refused_mig_history_closed (id int)", "refused_mig_history_closed already exists",
                        "DROP TABLE refused_mig_history_closed"},
                new String[] {"ALTER TABLE refused_mig ADD COLUMN tidemark_context text", "already has a column tidemark_context",
                        "ALTER TABLE refused_mig DROP COLUMN tidemark_context"},
                new String[] {"ALTER TABLE refused_mig ALTER COLUMN n TYPE bigint", "column n is bigint in the table but integer",
                        "ALTER TABLE refused_mig ALTER COLUMN n TYPE integer"},
                new String[] {"CREATE FUNCTION late_mig() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;"
                        + " CREATE TRIGGER zz_late BEFORE UPDATE ON refused_mig FOR EACH ROW EXECUTE FUNCTION late_mig()",
                        "zz_late", "DROP TRIGGER zz_late ON refused_mig"},
                new String[] {"UPDATE refused_mig_history SET valid_from = valid_from - interval '1 hour'"
                        + " WHERE valid_to = 'infinity'", "open versions that start before the end of their key's last"
                        + " closed version: 1 (key (1))",
                        "UPDATE refused_mig_history SET valid_from = valid_from + interval '1 hour' WHERE valid_to = 'infinity'"});
        List<Map<String, Object>> history = Db.rows(ds, "SELECT * FROM refused_mig_history ORDER BY history_id");
        for (String[] c : cases) {
            Db.exec(ds, c[0]);
            assertThatThrownBy(() -> current.migrate(ds)).as(c[1]).isInstanceOfSatisfying(TidemarkException.class,
                    e -> assertThat(e.getMessage()).contains(c[1]).contains("Nothing was changed")
                            .doesNotContain("DATABASE_ERROR"));
            Db.exec(ds, c[2]);
            assertNothingChanged("refused_mig");
        }
        assertThat(Db.rows(ds, "SELECT * FROM refused_mig_history ORDER BY history_id")).isEqualTo(history);
        assertThat(current.migrate(ds).migrated()).isTrue();
    }

    /** Still the history table shape, with its trigger and its rows. */
    private void assertNothingChanged(String table) {
        assertThat(Db.scalar(ds, "SELECT relkind::text FROM pg_class WHERE relname = ?", table + "_history"))
                .isEqualTo("r");
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_class WHERE relname = ?", table + "_history_closed")).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_trigger WHERE tgrelid = ?::regclass AND tgname = ?", table,
                table + "_history_trg")).isEqualTo(1);
        assertThat(Db.count(ds, "SELECT count(*) FROM information_schema.columns WHERE table_name = ?"
                + " AND column_name LIKE 'tidemark%'", table)).isZero();
    }
}
