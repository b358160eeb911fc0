package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What is particular to {@link HistoryStorage#CURRENT_IN_TABLE}: its columns, its cost model and its maintenance. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class CurrentInTableTest {

    private final DataSource ds;

    CurrentInTableTest(DataSource ds) {
        this.ds = ds;
    }

    private TemporalTable install(String table) {
        return install(table, TriggerMode.ROW);
    }

    /** {@code table} (id int PRIMARY KEY, v text), installed in {@code mode}. */
    private TemporalTable install(String table, TriggerMode mode) {
        Db.exec(ds, "CREATE TABLE " + table + " (id int PRIMARY KEY, v text)");
        TemporalTable t = TemporalTable.forTable(table).storage(HistoryStorage.CURRENT_IN_TABLE).triggerMode(mode)
                .build();
        t.install(ds);
        return t;
    }

    @Test
    void an_insert_calls_no_function_and_update_and_delete_call_one_per_row() throws SQLException {
        install("calls");
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SET LOCAL track_functions = 'all'");
            s.execute("SELECT set_config('tidemark.changed_by', 'ann', true)");
            s.execute("INSERT INTO calls VALUES (1, 'a'), (2, 'b'); INSERT INTO calls (id, v) VALUES (3, 'c')");
            assertThat(calls(s)).as("INSERT").isZero();
            s.execute("UPDATE calls SET v = v WHERE id = 1");
            assertThat(calls(s)).as("an UPDATE that changes nothing").isZero();
            s.execute("UPDATE calls SET v = 'x' WHERE id IN (1, 2)");
            assertThat(calls(s)).as("UPDATE of two rows").isEqualTo(2);
            s.execute("DELETE FROM calls WHERE id = 3");
            assertThat(calls(s)).as("and a DELETE").isEqualTo(3);
            c.commit();
        }
        assertThat(Versions.of(ds, "calls_history", "id = 1").ops()).containsExactly(1, 2);
        assertThat(Versions.of(ds, "calls_history", "id = 3").ops()).containsExactly(1, 3);
        assertThat(Db.scalar(ds, "SELECT changed_by FROM calls_history WHERE id = 2 AND operation = 1"))
                .as("the context default").isEqualTo("ann");
        assertThat(Db.count(ds, "SELECT count(*) FROM calls_history_closed")).as("three archived versions and a"
                + " tombstone").isEqualTo(4);
    }

    private static long calls(Statement s) throws SQLException {
        return calls(s, "calls");
    }

    private static long calls(Statement s, String table) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT coalesce(pg_stat_get_xact_function_calls("
                + "'public." + table + "_history_write'::regproc), 0)")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void a_client_cannot_date_a_version_or_rewrite_the_current_one() {
        install("forged");
        Instant inserted = Tx.run(ds, "INSERT INTO forged (id, v, tidemark_valid_from) VALUES (1, 'a', '2000-01-01')");
        assertThat(Versions.of(ds, "forged_history", "id = 1").get(0).from()).as("reset to the transaction's now()")
                .isEqualTo(inserted);
        Db.exec(ds, "UPDATE forged SET tidemark_valid_from = '2000-01-01', tidemark_context = '{forger}'");
        Versions v = Versions.of(ds, "forged_history", "id = 1");
        assertThat(v.ops()).containsExactly(1);
        assertThat(v.get(0).from()).isEqualTo(inserted);
        assertThat(v.get(0).get("changed_by")).isNull();
        Instant updated = Tx.run(ds, "UPDATE forged SET v = 'b', tidemark_valid_from = '2000-01-01'");
        assertThat(Versions.of(ds, "forged_history", "id = 1").last().from()).isEqualTo(updated);
    }

    @Test
    void the_table_shows_its_two_columns_and_a_positional_insert_still_works() {
        install("visible");
        Db.exec(ds, "INSERT INTO visible VALUES (1, 'a')");
        Map<String, Object> row = Db.rows(ds, "SELECT * FROM visible").get(0);
        assertThat(row).containsOnlyKeys("id", "v", "tidemark_valid_from", "tidemark_context");
        assertThat(Db.rows(ds, "SELECT * FROM visible_history").get(0)).containsKeys("history_id", "valid_from",
                "valid_to", "operation", "chain_no", "changed_by", "changed_by_name", "correlation_id", "reason", "extra");
    }

    @Test
    void installing_the_other_storage_over_it_is_refused_with_the_way_to_switch() {
        install("switched");
        TemporalTable other = TemporalTable.forTable("switched").build();
        assertThatThrownBy(() -> other.install(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
            assertThat(e.getMessage()).contains("installed with storage CURRENT_IN_TABLE but configured with"
                    + " HISTORY_TABLE", "run migrate()");
        });
        assertThatThrownBy(() -> other.verify(ds)).hasMessageContaining("storage");
    }

    @Test
    void a_table_with_a_column_of_the_same_name_is_refused() {
        Db.exec(ds, "CREATE TABLE clash (id int PRIMARY KEY, tidemark_valid_from date)");
        assertThatThrownBy(() -> TemporalTable.forTable("clash").storage(HistoryStorage.CURRENT_IN_TABLE).build()
                .install(ds)).hasMessageContaining("tidemark_valid_from");
    }

    @Test
    void the_opt_in_columns_are_refused_at_build() {
        assertThatThrownBy(() -> TemporalTable.forTable("x").storage(HistoryStorage.CURRENT_IN_TABLE)
                .sessionUserColumn(true).build()).hasMessageContaining("sessionUserColumn");
        assertThatThrownBy(() -> TemporalTable.forTable("x").storage(HistoryStorage.CURRENT_IN_TABLE)
                .transactionIdColumn(true).build()).hasMessageContaining("transactionIdColumn");
    }

    @Test
    void statement_mode_archives_a_delete_once_per_statement_and_writes_what_row_mode_writes() throws SQLException {
        Map<TriggerMode, List<List<Object>>> histories = new java.util.EnumMap<>(TriggerMode.class);
        for (TriggerMode mode : TriggerMode.values()) {
            String table = "per_" + mode.name().toLowerCase(java.util.Locale.ROOT);
            install(table, mode);
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("SET LOCAL track_functions = 'all'");
                s.execute("SELECT set_config('tidemark.changed_by', 'ann', true)");
                s.execute("INSERT INTO " + table + " SELECT g, 'a' FROM generate_series(1, 5) g");
                s.execute("UPDATE " + table + " SET v = 'b' WHERE id IN (1, 2)");
                s.execute("SELECT set_config('tidemark.changed_by', 'bob', true)");
                s.execute("DELETE FROM " + table + " WHERE id <= 3");
                s.execute("INSERT INTO " + table + " VALUES (1, 'again')");
                s.execute("DELETE FROM " + table + " WHERE id IN (1, 4)");
                assertThat(calls(s, table)).as(mode + ": two for the UPDATE, then per DELETE")
                        .isEqualTo(mode == TriggerMode.ROW ? 2 + 3 + 2 : 2 + 2);
                c.commit();
            }
            // Instants differ between the two tables; how each version's period meets the next one's must not.
            histories.put(mode, Db.rows(ds, "SELECT id, v, operation, chain_no, changed_by, valid_from = valid_to,"
                            + " valid_to = 'infinity', valid_from = lag(valid_to) OVER w, valid_to = lead(valid_from)"
                            + " OVER w FROM " + table + "_history WINDOW w AS (PARTITION BY id ORDER BY valid_from,"
                            + " valid_to, operation) ORDER BY id, valid_from, valid_to, operation")
                    .stream().map(r -> java.util.Arrays.asList(r.values().toArray())).toList());
            assertThat(Versions.of(ds, table + "_history", "id = 1").ops()).containsExactly(1, 2, 3, 1, 3);
            assertThat(Db.scalar(ds, "SELECT changed_by FROM " + table + "_history WHERE id = 3 AND operation = 3"))
                    .as("the tombstone has the deleting transaction's context").isEqualTo("bob");
        }
        assertThat(histories.get(TriggerMode.STATEMENT)).isEqualTo(histories.get(TriggerMode.ROW));
    }

    @Test
    void statement_mode_is_refused_for_a_table_in_an_inheritance_hierarchy_in_both_shapes_and_row_mode_is_not() {
        Db.exec(ds, "CREATE TABLE inh_parent (id int PRIMARY KEY, v text);"
                + " CREATE TABLE inh_child (id int PRIMARY KEY, v text) INHERITS (inh_parent)");
        for (HistoryStorage storage : HistoryStorage.values()) {
            for (String table : List.of("inh_parent", "inh_child")) {
                // A DELETE of inh_parent removes inh_child's rows, firing only inh_parent's statement triggers.
                assertThatThrownBy(() -> TemporalTable.forTable(table).storage(storage)
                        .triggerMode(TriggerMode.STATEMENT).build().install(ds))
                        .isInstanceOfSatisfying(TidemarkException.class, e -> {
                            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
                            assertThat(e.getMessage()).contains("public." + table, table.equals("inh_parent")
                                    ? "is inherited by public.inh_child" : "inherits from public.inh_parent", "TriggerMode.ROW");
                        });
            }
        }
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_catalog.pg_trigger WHERE tgrelid IN"
                + " ('inh_parent'::regclass, 'inh_child'::regclass)")).as("nothing installed").isZero();
        TemporalTable.forTable("inh_child").storage(HistoryStorage.CURRENT_IN_TABLE).build().install(ds);
        Db.exec(ds, "INSERT INTO inh_child VALUES (1, 'a'); DELETE FROM inh_parent WHERE id = 1");
        assertThat(Versions.of(ds, "inh_child_history", "id = 1").ops()).as("the row trigger fires on the child")
                .containsExactly(1, 3);
    }

    @Test
    void both_modes_write_the_same_history_for_a_composite_key_a_generated_column_and_an_excluded_one()
            throws SQLException {
        Map<TriggerMode, List<List<Object>>> histories = new java.util.EnumMap<>(TriggerMode.class);
        for (TriggerMode mode : TriggerMode.values()) {
            String table = "wide_" + mode.name().toLowerCase(java.util.Locale.ROOT);
            Db.exec(ds, "CREATE TABLE " + table + " (region text, n int, qty int, total int GENERATED ALWAYS AS"
                    + " (qty * 10) STORED, scratch text, PRIMARY KEY (region, n))");
            TemporalTable.forTable(table).storage(HistoryStorage.CURRENT_IN_TABLE).triggerMode(mode)
                    .exclude("scratch").build().install(ds);
            Db.exec(ds, "INSERT INTO " + table + " (region, n, qty, scratch) SELECT r, g, g, 's' FROM"
                    + " unnest(ARRAY['eu', 'us']) AS r, generate_series(1, 3) AS g;"
                    + " UPDATE " + table + " SET qty = qty + 1 WHERE n = 1;"
                    + " UPDATE " + table + " SET scratch = 'only excluded' WHERE n = 2;"
                    + " DELETE FROM " + table + " WHERE n <= 2;"
                    + " INSERT INTO " + table + " (region, n, qty) VALUES ('eu', 1, 7);"
                    + " DELETE FROM " + table + " WHERE region = 'eu'");
            histories.put(mode, Db.rows(ds, "SELECT region, n, qty, total, operation, chain_no,"
                            + " valid_from = lag(valid_to) OVER w, valid_to = 'infinity' FROM " + table + "_history"
                            + " WINDOW w AS (PARTITION BY region, n ORDER BY valid_from, valid_to, operation)"
                            + " ORDER BY region, n, valid_from, valid_to, operation")
                    .stream().map(r -> java.util.Arrays.asList(r.values().toArray())).toList());
            assertThat(Versions.of(ds, table + "_history", "region = 'eu' AND n = 1").ops()).as(mode.name())
                    .containsExactly(1, 2, 3, 1, 3);
            assertThat(Db.scalar(ds, "SELECT total FROM " + table + "_history WHERE region = 'eu' AND n = 1"
                    + " AND operation = 2")).as("the generated column's value, archived").isEqualTo(20);
        }
        assertThat(histories.get(TriggerMode.STATEMENT)).isEqualTo(histories.get(TriggerMode.ROW));
        Db.exec(ds, "CREATE TABLE wide_rr (region text, n int, v text, PRIMARY KEY (region, n))");
        TemporalTable.forTable("wide_rr").storage(HistoryStorage.CURRENT_IN_TABLE).triggerMode(TriggerMode.STATEMENT)
                .build().install(ds);
        Db.exec(ds, "INSERT INTO wide_rr VALUES ('eu', 1, 'a'); UPDATE wide_rr SET v = 'b'");
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            s.execute("SELECT count(*) FROM wide_rr");
            Db.exec(ds, "DELETE FROM wide_rr");
            s.execute("INSERT INTO wide_rr VALUES ('eu', 1, 'c')");
            assertThatThrownBy(() -> s.execute("DELETE FROM wide_rr WHERE v = 'c'"))
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getSQLState()).isEqualTo("40001");
                        assertThat(e.getMessage()).contains("for key (eu,1) unseen by this snapshot");
                    });
            c.rollback();
        }
    }

    @Test
    void a_statement_delete_that_cannot_see_a_change_of_a_key_fails_naming_it_and_writes_nothing()
            throws SQLException {
        for (TriggerMode mode : TriggerMode.values()) {
            String table = "unseen_" + mode.name().toLowerCase(java.util.Locale.ROOT);
            install(table, mode);
            Db.exec(ds, "INSERT INTO " + table + " VALUES (1, 'a'), (2, 'a'); UPDATE " + table + " SET v = 'b'");
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                s.execute("SELECT count(*) FROM " + table); // the snapshot: both keys updated once
                Db.exec(ds, "DELETE FROM " + table + " WHERE id = 1");
                s.execute("INSERT INTO " + table + " VALUES (1, 'c')");
                // Its snapshot places the re-inserted row after the version the other transaction archived unseen.
                // (v = 'c' or key 2: the stale tuple of key 1 would make PostgreSQL itself refuse the delete.)
                assertThatThrownBy(() -> s.execute("DELETE FROM " + table + " WHERE v = 'c' OR id = 2"))
                        .isInstanceOfSatisfying(SQLException.class, e -> {
                            assertThat(e.getSQLState()).isEqualTo("40001");
                            assertThat(e.getMessage()).contains(table, "for key 1 unseen by this snapshot");
                        });
                c.rollback();
            }
            assertThat(Versions.of(ds, table + "_history", "id = 1").ops()).as(mode.name()).containsExactly(1, 2, 3);
            assertThat(Versions.of(ds, table + "_history", "id = 2").ops()).as(mode.name()).containsExactly(1, 2);
        }
    }

    @Test
    void verify_is_clean_evolve_adds_a_column_and_prune_deletes_closed_versions() {
        TemporalTable t = install("evolving");
        assertThat(t.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "INSERT INTO evolving VALUES (1, 'a'); UPDATE evolving SET v = 'b'");
        Db.exec(ds, "ALTER TABLE evolving ADD COLUMN extra_note text");
        assertThat(t.verify(ds).drifts()).extracting(Drift::kind).contains(Drift.Kind.COLUMN_ADDED);
        t.evolve(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "UPDATE evolving SET extra_note = 'n'");
        Db.exec(ds, "UPDATE evolving SET v = 'c'");
        List<Object> notes = Db.rows(ds, "SELECT extra_note FROM evolving_history ORDER BY valid_from, valid_to")
                .stream().map(r -> r.get("extra_note")).toList();
        assertThat(notes).containsExactly(null, null, "n", "n");
        Db.exec(ds, "DROP FUNCTION evolving_history_write() CASCADE");
        assertThat(t.verify(ds).drifts()).extracting(Drift::kind).contains(Drift.Kind.FUNCTION_MISSING,
                Drift.Kind.TRIGGER_MISSING);
        t.evolve(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
        Map<String, Object> before = current("evolving");
        assertThat(before.get("operation")).isEqualTo(2);
        PruneReport pruned = t.prune(ds, Instant.now().plusSeconds(60));
        assertThat(pruned.deletedRows()).as("all closed versions but the newest").isEqualTo(2);
        assertThat(current("evolving")).as("the current version's operation, chain and start survive")
                .isEqualTo(before);
        assertThat(Versions.of(ds, "evolving_history", "id = 1").ops()).containsExactly(2, 2);
    }

    @Test
    void prune_keeps_a_deleted_keys_tombstone_so_a_reinsert_starts_a_new_chain() {
        TemporalTable t = install("pruned");
        Db.exec(ds, "INSERT INTO pruned VALUES (1, 'a'); UPDATE pruned SET v = 'b'; DELETE FROM pruned");
        Db.exec(ds, "INSERT INTO pruned VALUES (1, 'c')");
        t.prune(ds, Instant.now().plusSeconds(60));
        assertThat(Versions.of(ds, "pruned_history", "id = 1").ops()).containsExactly(3, 1);
        assertThat(current("pruned").get("chain_no")).isEqualTo(2);
    }

    private Map<String, Object> current(String table) {
        return Db.rows(ds, "SELECT operation, chain_no, valid_from FROM " + table + "_history WHERE history_id IS NULL")
                .get(0);
    }

    @Test
    void a_repeatable_read_delete_of_a_reinsert_that_cannot_see_the_chain_before_it_fails_and_writes_nothing()
            throws SQLException {
        for (TriggerMode mode : TriggerMode.values()) {
            String table = "rrdelete_" + mode.name().toLowerCase(java.util.Locale.ROOT);
            install(table, mode);
            Db.exec(ds, "INSERT INTO " + table + " VALUES (1, 'a'), (2, 'a')");
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                s.execute("SELECT count(*) FROM " + table); // takes the snapshot
                Db.exec(ds, "DELETE FROM " + table + " WHERE id = 1");
                s.execute("INSERT INTO " + table + " VALUES (1, 'b')");
                // The version and the tombstone are one statement: the version would start chain 1, which the other
                // transaction's history holds (PostgreSQL's own check of ON CONFLICT under REPEATABLE READ refuses a
                // conflict with a row the snapshot cannot see), so neither is written, nor (one statement) key 2's.
                assertThatThrownBy(() -> s.execute("DELETE FROM " + table + " WHERE v = 'b' OR id = 2"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
                c.rollback();
            }
            assertThat(Versions.of(ds, table + "_history", "id = 1").ops()).as(mode.name()).containsExactly(1, 3);
            assertThat(Versions.of(ds, table + "_history", "id = 2").ops()).as(mode.name()).containsExactly(1);
        }
    }

    @Test
    void truncate_outside_read_committed_is_refused_with_a_serialization_error() throws SQLException {
        install("truncated");
        Db.exec(ds, "INSERT INTO truncated VALUES (1, 'a')");
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            s.execute("SELECT count(*) FROM truncated"); // the snapshot an archive would read
            Db.exec(ds, "INSERT INTO truncated VALUES (2, 'b')");
            assertThatThrownBy(() -> s.execute("TRUNCATE truncated"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
            c.rollback();
        }
        Db.exec(ds, "TRUNCATE truncated");
        assertThat(Versions.of(ds, "truncated_history", "id = 2").ops()).containsExactly(1, 3);
    }

    @Test
    void a_context_whose_extra_is_not_json_is_refused_naming_the_table_and_the_view_stays_readable() {
        install("contexts");
        assertThatThrownBy(() -> Db.exec(ds, "INSERT INTO contexts (id, v, tidemark_context)"
                + " VALUES (1, 'a', '{x,y,z,w,\"{\"}')")).cause().isInstanceOfSatisfying(SQLException.class, e -> {
                    assertThat(e.getSQLState()).isEqualTo("23514");
                    assertThat(e.getMessage()).contains("public.contexts", "extra", "not JSON");
                });
        assertThat(Db.scalar(ds, "SELECT count(*) FROM contexts")).isEqualTo(0L);
        // Refused with a start supplied as well (the trigger's other reason to run).
        assertThatThrownBy(() -> Db.exec(ds, "INSERT INTO contexts (id, v, tidemark_valid_from, tidemark_context)"
                + " VALUES (1, 'a', '2000-01-01', '{x,y,z,w,\"not json\"}')"))
                .cause().isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23514"));
        Db.exec(ds, "INSERT INTO contexts (id, v, tidemark_context) VALUES (2, 'b', '{x,y,z,w,\"{\\\"k\\\": 1}\"}')");
        // A context of another length cannot break the view: missing elements read as NULL, more are not read.
        Db.exec(ds, "INSERT INTO contexts (id, v, tidemark_context) VALUES (3, 'c', '{x}')");
        Db.exec(ds, "INSERT INTO contexts (id, v, tidemark_context) VALUES (4, 'd', '{{a,b},{c,d}}')");
        assertThat(Db.rows(ds, "SELECT id, changed_by, reason, extra::text AS extra FROM contexts_history ORDER BY id"))
                .extracting(r -> r.get("id") + ":" + r.get("changed_by") + ":" + r.get("reason") + ":" + r.get("extra"))
                .containsExactly("2:x:w:{\"k\": 1}", "3:x:null:null", "4:null:null:null");
    }

    @Test
    void a_context_pushed_as_settings_with_an_extra_is_recorded_through_the_insert_trigger() throws SQLException {
        install("extras");
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SELECT set_config('tidemark.changed_by', 'ann', true),"
                    + " set_config('tidemark.extra', '{\"ticket\": 7}', true)");
            s.execute("INSERT INTO extras VALUES (1, 'a')");
            c.commit();
        }
        assertThat(Db.rows(ds, "SELECT changed_by, extra->>'ticket' AS ticket, valid_from = tidemark_valid_from AS same"
                + " FROM extras_history WHERE id = 1").get(0))
                .containsEntry("changed_by", "ann").containsEntry("ticket", "7").containsEntry("same", true);
    }

    @Test
    void evolve_upgrades_an_install_of_an_earlier_version_and_verify_reports_what_it_changes() {
        TemporalTable t = install("checked");
        // What earlier versions generated: a CHECK on the context column (PostgreSQL named it <table>_<column>_check)
        // and an insert trigger that called the write function under a WHEN condition, with no insert function.
        Db.exec(ds, "ALTER TABLE checked ADD CONSTRAINT checked_tidemark_context_check CHECK (tidemark_context IS NULL"
                + " OR (pg_catalog.cardinality(tidemark_context) OPERATOR(pg_catalog.=) 5"
                + " AND (tidemark_context[5] IS NULL OR (tidemark_context[5])::pg_catalog.jsonb IS NOT NULL)));"
                + " CREATE OR REPLACE TRIGGER checked_history_ins_trg BEFORE INSERT ON checked FOR EACH ROW"
                + " WHEN (NEW.tidemark_valid_from IS NULL OR NEW.tidemark_valid_from OPERATOR(pg_catalog.<>)"
                + " pg_catalog.now()) EXECUTE FUNCTION checked_history_write();"
                + " DROP FUNCTION checked_history_insert();"
                // ...and the closed versions' CHECKs, as their CREATE TABLE declared them.
                + " ALTER TABLE checked_history_closed ADD CHECK (valid_to < 'infinity'),"
                + " ADD CHECK (operation IN (1, 2, 3)), ADD CHECK (valid_from <= valid_to)");
        // A CHECK of the application's on the same column is not Tidemark's to drop.
        Db.exec(ds, "ALTER TABLE checked ADD CONSTRAINT own_check CHECK (tidemark_context IS DISTINCT FROM '{}')");
        assertThat(t.verify(ds).drifts()).extracting(Drift::kind).containsExactlyInAnyOrder(
                Drift.Kind.OBSOLETE_CONSTRAINT, Drift.Kind.OBSOLETE_CONSTRAINT, Drift.Kind.OBSOLETE_CONSTRAINT,
                Drift.Kind.OBSOLETE_CONSTRAINT, Drift.Kind.FUNCTION_MISSING, Drift.Kind.TRIGGER_MISSING);
        assertThat(t.verify(ds).drifts()).filteredOn(d -> d.kind() == Drift.Kind.OBSOLETE_CONSTRAINT)
                .extracting(Drift::detail).anySatisfy(d -> assertThat(d).contains("checked_tidemark_context_check",
                        "public.checked "));
        VerifyReport evolved = t.evolve(ds);
        assertThat(evolved.actions()).contains("dropped constraint checked_tidemark_context_check of public.checked",
                "dropped constraint checked_history_closed_check of public.checked_history_closed",
                "dropped constraint checked_history_closed_valid_to_check of public.checked_history_closed",
                "dropped constraint checked_history_closed_operation_check of public.checked_history_closed");
        assertThat(t.verify(ds).drifts()).isEmpty();
        assertThat(Db.scalar(ds, "SELECT string_agg(conname, ',') FROM pg_constraint"
                + " WHERE conrelid IN ('checked'::regclass, 'checked_history_closed'::regclass) AND contype = 'c'"))
                .isEqualTo("own_check");
        assertThat(Db.rows(ds, "SELECT tgfoid::regproc::text AS fn, tgqual IS NULL AS no_when FROM pg_trigger"
                + " WHERE tgname = 'checked_history_ins_trg'").get(0))
                .containsEntry("fn", "checked_history_insert").containsEntry("no_when", true);
        Db.exec(ds, "INSERT INTO checked (id, v, tidemark_valid_from) VALUES (1, 'a', '2000-01-01')");
        assertThat(Db.scalar(ds, "SELECT tidemark_valid_from > '2020-01-01' FROM checked WHERE id = 1")).isEqualTo(true);
        assertThat(Versions.of(ds, "checked_history", "id = 1").ops()).containsExactly(1);
    }

    @Test
    void the_insert_function_runs_with_the_writers_rights_and_only_the_trigger_may_call_it() {
        install("rights");
        assertThat(Db.rows(ds, "SELECT prosecdef, proconfig IS NULL AS no_settings,"
                + " has_function_privilege('public', oid, 'EXECUTE') AS public_may_call"
                + " FROM pg_proc WHERE proname = 'rights_history_insert'").get(0))
                .containsEntry("prosecdef", false).containsEntry("no_settings", true)
                .containsEntry("public_may_call", false);
        Db.exec(ds, "INSERT INTO rights (id, v, tidemark_valid_from) VALUES (1, 'a', now() - interval '1 day')");
        assertThat(Db.scalar(ds, "SELECT tidemark_valid_from > now() - interval '1 hour' FROM rights WHERE id = 1")).isEqualTo(true);
    }

    @Test
    void evolve_moves_the_context_default_to_a_changed_settings_prefix_and_verify_reports_it() {
        install("prefixed");
        TemporalTable moved = TemporalTable.forTable("prefixed").storage(HistoryStorage.CURRENT_IN_TABLE)
                .settingsPrefix("app").build();
        assertThat(moved.verify(ds).drifts()).extracting(Drift::kind).contains(Drift.Kind.COLUMN_DEFAULT_CHANGED);
        moved.evolve(ds);
        assertThat(moved.verify(ds).drifts()).isEmpty();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SELECT set_config('app.changed_by', 'bob', true)");
            s.execute("INSERT INTO prefixed VALUES (1, 'a')");
            c.commit();
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
        assertThat(Db.scalar(ds, "SELECT changed_by FROM prefixed_history WHERE id = 1")).isEqualTo("bob");
    }

    @Test
    void a_delete_cancelled_by_a_later_before_delete_trigger_leaves_no_tombstone() {
        install("soft");
        Db.exec(ds, "INSERT INTO soft VALUES (1, 'a')");
        Db.exec(ds, "CREATE FUNCTION soft_delete() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN UPDATE soft SET v = 'deleted' WHERE id = OLD.id; RETURN NULL; END $$;"
                + " CREATE TRIGGER zz_soft_delete BEFORE DELETE ON soft FOR EACH ROW EXECUTE FUNCTION soft_delete()");
        Db.exec(ds, "DELETE FROM soft WHERE id = 1");
        assertThat(Db.scalar(ds, "SELECT v FROM soft WHERE id = 1")).isEqualTo("deleted");
        assertThat(Versions.of(ds, "soft_history", "id = 1").ops()).as("an update, no tombstone").containsExactly(1, 2);
    }

    @Test
    void a_before_update_trigger_that_fires_after_tidemarks_is_refused_at_install_and_reported_by_verify() {
        Db.exec(ds, "CREATE TABLE touched (id int PRIMARY KEY, v text, note text, updated_at timestamptz);"
                + " CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS"
                + " $$ BEGIN NEW.updated_at := clock_timestamp(); RETURN NEW; END $$;"
                + " CREATE TRIGGER zz_touch BEFORE UPDATE ON touched FOR EACH ROW EXECUTE FUNCTION touch()");
        TemporalTable t = TemporalTable.forTable("touched").storage(HistoryStorage.CURRENT_IN_TABLE).build();
        assertThatThrownBy(() -> t.install(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
            assertThat(e.getMessage()).contains("zz_touch", "touched_history_upd_trg", "Nothing was installed");
        });
        Db.exec(ds, "ALTER TRIGGER zz_touch ON touched RENAME TO a_touch");
        t.install(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "CREATE TRIGGER zz_touch BEFORE UPDATE ON touched FOR EACH ROW EXECUTE FUNCTION touch()");
        assertThat(t.verify(ds).drifts()).extracting(Drift::kind).containsExactly(Drift.Kind.CONFLICTING_TRIGGER);
        assertThatThrownBy(() -> t.evolve(ds)).isInstanceOfSatisfying(TidemarkException.class,
                e -> assertThat(e.getMessage()).contains("zz_touch"));
        Db.exec(ds, "DROP TRIGGER zz_touch ON touched");
    }

    @Test
    void as_of_between_a_reinserts_stored_start_and_its_clamped_start_shows_the_version_before_it() throws Exception {
        TemporalTable t = install("clamped");
        Db.exec(ds, "INSERT INTO clamped VALUES (1, 'old')");
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
            s.execute("SELECT count(*) FROM clamped"); // the snapshot, and now(): the re-insert's stored start
            Thread.sleep(20);
            Db.exec(ds, "DELETE FROM clamped WHERE id = 1"); // committed later, unseen by the snapshot
            s.execute("INSERT INTO clamped VALUES (1, 'new')");
            c.commit();
        }
        Map<String, Object> current = Db.rows(ds, "SELECT tidemark_valid_from AS stored, valid_from AS clamped"
                + " FROM clamped_history WHERE history_id IS NULL").get(0);
        Instant stored = ((java.sql.Timestamp) current.get("stored")).toInstant();
        Instant clamped = ((java.sql.Timestamp) current.get("clamped")).toInstant();
        assertThat(stored).isBefore(clamped);
        Instant between = stored.plus(java.time.Duration.between(stored, clamped).dividedBy(2));
        HistoryQueries queries = t.queries(ds);
        assertThat(queries.asOf(between)).extracting(r -> r.value("v")).containsExactly("old");
        assertThat(queries.asOf(between, 1)).map(r -> r.value("v")).contains("old");
        assertThat(Db.rows(ds, "SELECT v FROM clamped_as_of(?)", java.sql.Timestamp.from(between)))
                .extracting(r -> r.get("v")).containsExactly("old");
        assertThat(queries.asOf(clamped)).extracting(r -> r.value("v")).containsExactly("new");
        assertThat(Db.rows(ds, "SELECT v FROM clamped_as_of(?)", java.sql.Timestamp.from(clamped)))
                .extracting(r -> r.get("v")).containsExactly("new");
    }

    @Test
    void the_as_of_function_reads_closed_versions_through_the_view_without_its_branch_over_the_table() {
        install("planned");
        Db.exec(ds, "INSERT INTO planned SELECT g, 'a' FROM generate_series(1, 50) g; UPDATE planned SET v = 'b'");
        for (String query : List.of("SELECT h.id FROM planned_history AS h WHERE h.history_id IS NOT NULL"
                        + " AND tstzrange(h.valid_from, h.valid_to) @> now()",
                "SELECT t.id FROM planned AS t WHERE NOT EXISTS (SELECT 1 FROM planned_history AS h"
                        + " WHERE h.history_id IS NOT NULL AND h.id = t.id AND h.valid_to > now())")) {
            String plan = String.join("\n", Db.rows(ds, "EXPLAIN " + query).stream()
                    .map(r -> r.values().iterator().next().toString()).toList());
            assertThat(plan).as("the view's branch over the table (and its look-up) is pruned at plan time: %s", plan)
                    .doesNotContain("Limit").containsOnlyOnce("planned_history_closed");
        }
        assertThat(Db.count(ds, "SELECT count(*) FROM planned_as_of(now())")).isEqualTo(50);
    }
}
