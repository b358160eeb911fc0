package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * verify(), evolve() and uninstall() of {@link HistoryStorage#CURRENT_IN_TABLE}: the view and the triggers depend on
 * the table's columns, so schema changes of the table reach them in ways the history table shape does not know.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class CurrentSchemaMaintenanceTest {

    private final DataSource ds;

    CurrentSchemaMaintenanceTest(DataSource ds) {
        this.ds = ds;
    }

    private TemporalTable install(String table, String columns, String... excluded) {
        Db.exec(ds, "CREATE TABLE " + table + " (" + columns + ")");
        TemporalTable t = TemporalTable.forTable(table).storage(HistoryStorage.CURRENT_IN_TABLE)
                .exclude(excluded).build();
        t.install(ds);
        return t;
    }

    private static List<Drift.Kind> kinds(VerifyReport report) {
        return report.drifts().stream().map(Drift::kind).toList();
    }

    @Test
    void a_versioned_column_dropped_with_cascade_is_a_missing_view_and_evolve_restores_it_keeping_the_closed_history() {
        TemporalTable t = install("dropped", "id int PRIMARY KEY, v text, note text");
        Db.exec(ds, "INSERT INTO dropped VALUES (1, 'a', 'n1'); UPDATE dropped SET v = 'b'; UPDATE dropped SET note = 'n2'");
        List<Map<String, Object>> closedBefore = Db.rows(ds, "SELECT history_id, id, v, note, valid_from, valid_to, operation, chain_no,"
                + " context::text FROM dropped_history_closed ORDER BY history_id");
        assertThatThrownBy(() -> Db.exec(ds, "ALTER TABLE dropped DROP COLUMN note"))
                .as("without CASCADE PostgreSQL names what depends on the column")
                .hasMessageContaining("dropped_history");

        Db.exec(ds, "ALTER TABLE dropped DROP COLUMN note CASCADE");
        VerifyReport report = t.verify(ds);
        assertThat(kinds(report)).contains(Drift.Kind.HISTORY_VIEW_MISSING, Drift.Kind.COLUMN_DROPPED,
                Drift.Kind.FUNCTION_CHANGED).doesNotContain(Drift.Kind.HISTORY_TABLE_MISSING, Drift.Kind.TRIGGER_MISSING);
        assertThat(report.drifts()).filteredOn(d -> d.kind() == Drift.Kind.HISTORY_VIEW_MISSING).singleElement()
                .satisfies(d -> assertThat(d.detail()).contains("dropped_history_closed", "intact", "evolve()"));
        assertThatThrownBy(() -> Db.exec(ds, "UPDATE dropped SET v = 'x'")).as("the update trigger compares whole"
                + " rows, so it survived; until evolve its function still reads the dropped column: an UPDATE fails"
                + " rather than go unrecorded").isNotNull();
        assertThatThrownBy(() -> Db.exec(ds, "DELETE FROM dropped")).as("and so does a DELETE").isNotNull();

        t.evolve(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
        assertThat(Db.rows(ds, "SELECT history_id, id, v, note, valid_from, valid_to, operation, chain_no,"
                + " context::text FROM dropped_history_closed ORDER BY history_id"))
                .as("the closed history, its orphan column included, is untouched").isEqualTo(closedBefore);
        assertThat(Db.rows(ds, "SELECT note FROM dropped_history ORDER BY valid_from, valid_to").stream()
                .map(r -> r.get("note")).toList()).as("the orphan column in the view; NULL for the current version")
                .containsExactly("n1", "n1", null);
        Db.exec(ds, "UPDATE dropped SET v = 'c'");
        Db.exec(ds, "DELETE FROM dropped");
        assertThat(Versions.of(ds, "dropped_history", "id = 1").ops()).as("writes are versioned again")
                .containsExactly(1, 2, 2, 2, 3);
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'dropped'::regclass"
                + " AND tgname LIKE 'dropped_history%'")).isEqualTo(4);
    }

    @Test
    void with_an_excluded_column_a_cascade_drop_also_drops_the_update_trigger_and_updates_go_unarchived_until_evolve() {
        TemporalTable t = install("partial", "id int PRIMARY KEY, v text, note text, seen timestamptz", "seen");
        Db.exec(ds, "INSERT INTO partial VALUES (1, 'a', 'n1', now())");
        Db.exec(ds, "ALTER TABLE partial DROP COLUMN note CASCADE");
        assertThat(kinds(t.verify(ds))).contains(Drift.Kind.HISTORY_VIEW_MISSING, Drift.Kind.TRIGGER_MISSING,
                Drift.Kind.COLUMN_DROPPED).doesNotContain(Drift.Kind.HISTORY_TABLE_MISSING);
        Db.exec(ds, "UPDATE partial SET v = 'b'"); // the gap the README warns of: no trigger, nothing archived
        assertThat(Db.count(ds, "SELECT count(*) FROM partial_history_closed")).isZero();
        t.evolve(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "UPDATE partial SET v = 'c'");
        assertThat(Versions.of(ds, "partial_history", "id = 1").ops()).containsExactly(1, 2);
    }

    @Test
    void a_versioned_column_excluded_first_is_dropped_without_cascade_and_without_a_gap() {
        TemporalTable t = install("retired", "id int PRIMARY KEY, v text, note text");
        Db.exec(ds, "INSERT INTO retired VALUES (1, 'a', 'n1'); UPDATE retired SET v = 'b'");
        TemporalTable excluding = TemporalTable.forTable("retired").storage(HistoryStorage.CURRENT_IN_TABLE)
                .exclude("note").build();
        excluding.evolve(ds);
        assertThat(excluding.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "ALTER TABLE retired DROP COLUMN note"); // nothing of Tidemark's reads it any more
        Db.exec(ds, "UPDATE retired SET v = 'c'");
        assertThat(Versions.of(ds, "retired_history", "id = 1").ops()).as("versioned throughout")
                .containsExactly(1, 2, 2);
        assertThat(kinds(t.verify(ds))).contains(Drift.Kind.OPTIONS_CHANGED)
                .doesNotContain(Drift.Kind.HISTORY_VIEW_MISSING, Drift.Kind.TRIGGER_MISSING);
        t.evolve(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
        assertThat(Db.rows(ds, "SELECT note FROM retired_history ORDER BY valid_from, valid_to").stream()
                .map(r -> r.get("note")).toList()).containsExactly("n1", null, null);
        assertThat(Db.count(ds, "SELECT count(*) FROM retired_as_of(now())")).isEqualTo(1);
    }

    @Test
    void a_closed_versions_table_that_is_gone_is_a_missing_history_which_evolve_refuses() {
        TemporalTable t = install("lost", "id int PRIMARY KEY, v text");
        Db.exec(ds, "DROP VIEW lost_history; DROP TABLE lost_history_closed");
        assertThat(kinds(t.verify(ds))).containsExactly(Drift.Kind.HISTORY_TABLE_MISSING);
        assertThatThrownBy(() -> t.evolve(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
            assertThat(e.getMessage()).contains("lost_history_closed is gone");
        });
        t.uninstall(ds);
        Db.exec(ds, "DROP TABLE lost");
    }

    @Test
    void a_versioned_column_with_a_name_the_shape_adds_is_refused_naming_it_and_can_be_excluded() {
        Db.exec(ds, "CREATE TABLE named (id int PRIMARY KEY, context text)");
        TemporalTable t = TemporalTable.forTable("named").storage(HistoryStorage.CURRENT_IN_TABLE).build();
        assertThatThrownBy(() -> t.install(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
            assertThat(e.getMessage()).contains("column \"context\"", "CURRENT_IN_TABLE", "exclude it");
        });
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_class WHERE relname LIKE 'named_history%'")).isZero();
        Db.exec(ds, "CREATE TABLE named2 (id int PRIMARY KEY, valid_to date)");
        assertThatThrownBy(() -> TemporalTable.forTable("named2").storage(HistoryStorage.CURRENT_IN_TABLE).build()
                .install(ds)).hasMessageContaining("column \"valid_to\"");
        TemporalTable excluded = TemporalTable.forTable("named").storage(HistoryStorage.CURRENT_IN_TABLE)
                .exclude("context").build();
        excluded.install(ds);
        Db.exec(ds, "INSERT INTO named VALUES (1, 'mine'); UPDATE named SET context = 'still mine'");
        assertThat(Db.scalar(ds, "SELECT context FROM named")).isEqualTo("still mine");
        assertThat(Versions.of(ds, "named_history", "id = 1").ops()).containsExactly(1);
    }

    @Test
    void a_stored_generated_column_is_versioned_with_its_value_and_compared_through_its_sources() {
        TemporalTable t = install("lines", "id int PRIMARY KEY, price numeric, qty int,"
                + " total numeric GENERATED ALWAYS AS (price * qty) STORED");
        assertThat(t.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "INSERT INTO lines (id, price, qty) VALUES (1, 2, 3)");
        Db.exec(ds, "UPDATE lines SET qty = qty");
        Db.exec(ds, "UPDATE lines SET qty = 4");
        Db.exec(ds, "UPDATE lines SET price = 5");
        assertThat(Db.rows(ds, "SELECT total FROM lines_history ORDER BY valid_from, valid_to").stream()
                .map(r -> r.get("total").toString()).toList()).containsExactly("6", "8", "20");
        assertThat(Versions.of(ds, "lines_history", "id = 1").ops()).as("no version for an update that changed"
                + " nothing").containsExactly(1, 2, 2);
        Db.exec(ds, "DELETE FROM lines");
        assertThat(Db.scalar(ds, "SELECT total FROM lines_history_closed WHERE operation = 3").toString())
                .as("the tombstone holds the last value").isEqualTo("20");

        Db.exec(ds, "CREATE TABLE lines2 (id int PRIMARY KEY, price numeric, note text,"
                + " total numeric GENERATED ALWAYS AS (price * 2) STORED)");
        assertThatThrownBy(() -> TemporalTable.forTable("lines2").storage(HistoryStorage.CURRENT_IN_TABLE)
                .exclude("price").build().install(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
                    assertThat(e.getMessage()).contains("\"total\"", "[price]");
                });
        Db.exec(ds, "CREATE TABLE lines3 (id int GENERATED ALWAYS AS (n * 10) STORED PRIMARY KEY, n int)");
        assertThatThrownBy(() -> TemporalTable.forTable("lines3").storage(HistoryStorage.CURRENT_IN_TABLE).build()
                .install(ds)).hasMessageContaining("primary-key column \"id\" is generated");
    }

    @Test
    void a_virtual_generated_column_is_refused_unless_excluded() {
        org.junit.jupiter.api.Assumptions.assumeTrue(Db.count(ds, "SELECT current_setting('server_version_num')::int")
                >= 180000, "virtual generated columns exist from PostgreSQL 18");
        Db.exec(ds, "CREATE TABLE vlines (id int PRIMARY KEY, price numeric, qty int,"
                + " total numeric GENERATED ALWAYS AS (price * qty) VIRTUAL)");
        assertThatThrownBy(() -> TemporalTable.forTable("vlines").storage(HistoryStorage.CURRENT_IN_TABLE).build()
                .install(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED);
                    assertThat(e.getMessage()).contains("\"total\" is a virtual generated column", "STORED");
                });
        TemporalTable t = TemporalTable.forTable("vlines").storage(HistoryStorage.CURRENT_IN_TABLE).exclude("total")
                .build();
        t.install(ds);
        Db.exec(ds, "INSERT INTO vlines (id, price, qty) VALUES (1, 2, 3); UPDATE vlines SET qty = 4; DELETE FROM vlines");
        assertThat(Db.rows(ds, "SELECT qty FROM vlines_history ORDER BY valid_from, valid_to, operation").stream()
                .map(r -> r.get("qty")).toList()).containsExactly(3, 4, 4);
        assertThat(t.verify(ds).drifts()).isEmpty();
    }

    @Test
    void verify_reports_a_changed_view_trigger_or_default_and_evolve_restores_them() {
        TemporalTable t = install("edited", "id int PRIMARY KEY, v text, w text");
        Db.exec(ds, "INSERT INTO edited VALUES (1, 'a', 'x')");
        Db.exec(ds, "DROP VIEW edited_history; CREATE VIEW edited_history AS SELECT history_id, id, v,"
                + " valid_from, valid_to, operation, chain_no FROM edited_history_closed");
        Db.exec(ds, "CREATE OR REPLACE TRIGGER edited_history_upd_trg BEFORE UPDATE ON edited FOR EACH ROW"
                + " WHEN (NEW.v IS DISTINCT FROM OLD.v) EXECUTE FUNCTION edited_history_write()");
        Db.exec(ds, "CREATE OR REPLACE TRIGGER edited_history_del_trg BEFORE DELETE ON edited FOR EACH ROW"
                + " EXECUTE FUNCTION edited_history_write()");
        Db.exec(ds, "ALTER TABLE edited ALTER COLUMN tidemark_valid_from SET DEFAULT '2000-01-01'");
        VerifyReport report = t.verify(ds);
        assertThat(kinds(report)).containsExactlyInAnyOrder(Drift.Kind.HISTORY_VIEW_CHANGED,
                Drift.Kind.TRIGGER_CHANGED, Drift.Kind.TRIGGER_CHANGED, Drift.Kind.COLUMN_DEFAULT_CHANGED);
        assertThat(report.drifts()).extracting(Drift::detail).anySatisfy(d -> assertThat(d)
                        .contains("edited_history_upd_trg", "reads [v]"))
                .anySatisfy(d -> assertThat(d).contains("edited_history_del_trg", "BEFORE DELETE FOR EACH ROW",
                        "not AFTER DELETE FOR EACH ROW"));
        t.evolve(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "UPDATE edited SET w = 'y'");
        Db.exec(ds, "DELETE FROM edited");
        assertThat(Versions.of(ds, "edited_history", "id = 1").ops()).containsExactly(1, 2, 3);
    }

    @Test
    void evolve_switches_deletes_between_row_and_statement_triggers_and_verify_reports_the_switch() {
        TemporalTable row = install("switched", "id int PRIMARY KEY, v text");
        TemporalTable statement = TemporalTable.forTable("switched").storage(HistoryStorage.CURRENT_IN_TABLE)
                .triggerMode(TriggerMode.STATEMENT).build();
        Db.exec(ds, "INSERT INTO switched SELECT g, 'a' FROM generate_series(1, 4) g");
        Db.exec(ds, "DELETE FROM switched WHERE id = 1");
        VerifyReport report = statement.verify(ds);
        assertThat(kinds(report)).contains(Drift.Kind.OPTIONS_CHANGED, Drift.Kind.TRIGGER_CHANGED);
        assertThat(report.drifts()).extracting(Drift::detail).anySatisfy(d -> assertThat(d)
                .contains("switched_history_del_trg", "AFTER DELETE FOR EACH ROW", "not AFTER DELETE FOR EACH STATEMENT"));
        statement.evolve(ds);
        assertThat(statement.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "DELETE FROM switched WHERE id IN (2, 3)");
        assertThat(Db.scalar(ds, "SELECT tgtype & 1 FROM pg_trigger WHERE tgname = 'switched_history_del_trg'"))
                .as("a statement trigger").isEqualTo(0);
        row.evolve(ds);
        assertThat(row.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "DELETE FROM switched WHERE id = 4");
        for (int id = 1; id <= 4; id++) {
            assertThat(Versions.of(ds, "switched_history", "id = " + id).ops()).as("key " + id).containsExactly(1, 3);
        }
    }

    @Test
    void verify_reports_a_statement_delete_trigger_without_its_transition_table_and_evolve_restores_it() {
        Db.exec(ds, "CREATE TABLE untabled (id int PRIMARY KEY, v text)");
        TemporalTable t = TemporalTable.forTable("untabled").storage(HistoryStorage.CURRENT_IN_TABLE)
                .triggerMode(TriggerMode.STATEMENT).build();
        t.install(ds);
        Db.exec(ds, "CREATE OR REPLACE TRIGGER untabled_history_del_trg AFTER DELETE ON untabled"
                + " REFERENCING OLD TABLE AS other_rows FOR EACH STATEMENT EXECUTE FUNCTION untabled_history_write()");
        VerifyReport report = t.verify(ds);
        assertThat(kinds(report)).containsExactly(Drift.Kind.TRIGGER_CHANGED);
        assertThat(report.drifts().get(0).detail()).contains("untabled_history_del_trg",
                "transition table of old rows is other_rows, not tidemark_deleted");
        t.evolve(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "INSERT INTO untabled VALUES (1, 'a'); DELETE FROM untabled");
        assertThat(Versions.of(ds, "untabled_history", "id = 1").ops()).containsExactly(1, 3);
    }

    @Test
    void a_view_of_the_application_on_the_history_is_never_dropped_silently() {
        TemporalTable t = install("watched", "id int PRIMARY KEY, v text");
        Db.exec(ds, "INSERT INTO watched VALUES (1, 'a'); CREATE VIEW watched_report AS SELECT id, valid_from"
                + " FROM watched_history");
        Db.exec(ds, "ALTER TABLE watched ADD COLUMN w text");
        List<Drift> before = t.verify(ds).drifts();
        assertThat(kinds(t.verify(ds))).contains(Drift.Kind.COLUMN_ADDED);
        assertThatThrownBy(() -> t.evolve(ds)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CHANGE_REFUSED);
            assertThat(e.getMessage()).contains("public.watched_report", "Nothing was changed");
        });
        assertThatThrownBy(() -> t.uninstall(ds)).isInstanceOf(TidemarkException.class)
                .hasMessageContaining("watched_report");
        assertThat(Db.count(ds, "SELECT count(*) FROM watched_report")).as("still there, and nothing changed")
                .isEqualTo(1);
        assertThat(t.verify(ds).drifts()).isEqualTo(before);
        Db.exec(ds, "DROP VIEW watched_report");
        t.evolve(ds);
        assertThat(t.verify(ds).drifts()).isEmpty();
    }

    @Test
    void uninstall_leaves_the_table_as_it_was_but_for_its_two_columns_and_keeps_the_closed_versions() {
        TemporalTable t = install("removed", "id int PRIMARY KEY, v text");
        Db.exec(ds, "INSERT INTO removed VALUES (1, 'a'); UPDATE removed SET v = 'b'");
        t.uninstall(ds);
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_class WHERE relname = 'removed_history'"))
                .as("the view").isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'removed'::regclass")).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_proc WHERE proname LIKE 'removed%'")).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_attrdef WHERE adrelid = 'removed'::regclass"))
                .as("no default left").isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM removed_history_closed")).as("the closed versions stay")
                .isEqualTo(1);
        Db.exec(ds, "INSERT INTO removed (id, v) VALUES (2, 'c'); INSERT INTO removed VALUES (3, 'd');"
                + " UPDATE removed SET v = 'e'; DELETE FROM removed WHERE id = 3");
        assertThat(Db.rows(ds, "SELECT id, tidemark_valid_from, tidemark_context FROM removed WHERE id = 2").get(0))
                .as("the two columns stay, no longer filled").containsEntry("tidemark_valid_from", null)
                .containsEntry("tidemark_context", null);
        assertThat(Db.scalar(ds, "SELECT tidemark_context[1] IS NULL AND tidemark_valid_from IS NOT NULL"
                + " FROM removed WHERE id = 1")).as("and keep the values they had").isEqualTo(true);
        assertThat(Db.count(ds, "SELECT count(*) FROM removed_history_closed")).as("nothing is archived any more")
                .isEqualTo(1);
        assertThatThrownBy(() -> t.install(ds)).as("a new install does not adopt the old closed versions")
                .hasMessageContaining("removed_history_closed already exists");
    }
}
