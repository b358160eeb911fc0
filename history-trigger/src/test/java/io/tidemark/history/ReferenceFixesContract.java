package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import static io.tidemark.history.InvariantViolation.Kind.CHAIN_NOT_TERMINATED;
import static io.tidemark.history.InvariantViolation.Kind.OPEN_VERSION_WITHOUT_ROW;
import static io.tidemark.history.InvariantViolation.Kind.OVERLAP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Each fix of issue 4 against the reference shape: the same scenario runs on a table with the reference's trigger
 * (installed verbatim from the listing, see {@link ReferenceShape}) and on a table with Tidemark's. The reference
 * half proves the scenario really breaks the reference; the Tidemark half proves the fix.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ReferenceFixesContract {

    /** The trigger mode under test; every scenario runs for both. */
    abstract TriggerMode mode();

    /** Where versions are kept; every scenario runs for each storage shape too. */
    HistoryStorage storage() {
        return HistoryStorage.HISTORY_TABLE;
    }


    private final TestDatabase db;
    private final DataSource ds;

    ReferenceFixesContract(TestDatabase db) {
        this.db = db;
        this.ds = db.dataSource();
    }

    /** Creates {@code <name>_ref} with the reference shape and {@code <name>_tm} with Tidemark's history. */
    private ReferenceShape twins(String name, String columns, List<String> names, List<String> types,
                                 TemporalTable.Builder tidemark) {
        Db.exec(ds, "CREATE TABLE " + name + "_ref (" + columns + "); CREATE TABLE " + name + "_tm (" + columns + ")");
        ReferenceShape ref = ReferenceShape.of(name + "_ref", "id", names);
        ref.install(ds, types);
        (tidemark != null ? tidemark : TemporalTable.forTable(name + "_tm")).triggerMode(mode()).storage(storage()).build().install(ds);
        return ref;
    }

    private ReferenceShape twins(String name) {
        return twins(name, "id int PRIMARY KEY, name text", List.of("id", "name"), List.of("int", "text"), null);
    }

    private static List<InvariantViolation.Kind> kinds(List<InvariantViolation> violations) {
        return violations.stream().map(InvariantViolation::kind).toList();
    }

    private List<InvariantViolation> tidemarkViolations(String table) {
        return TemporalTable.forTable(table).build().checkInvariants(ds);
    }

    @Test
    void insert_is_clamped_so_a_delete_and_reinsert_inside_one_transaction_never_overlaps() {
        ReferenceShape ref = twins("reins");
        for (String t : List.of("reins_ref", "reins_tm")) {
            Db.exec(ds, "BEGIN; INSERT INTO " + t + " VALUES (1, 'a'); DELETE FROM " + t + " WHERE id = 1;"
                    + " INSERT INTO " + t + " VALUES (1, 'b'); COMMIT");
        }
        assertThat(kinds(ref.checkerView().checkInvariants(ds))).as("reference").contains(OVERLAP);
        assertThat(tidemarkViolations("reins_tm")).isEmpty();
        Versions v = Versions.of(ds, "reins_tm_history", "id = 1");
        assertThat(v.ops()).containsExactly(1, 3, 1);
        assertThat(v.get(2).from()).as("re-insert starts where the tombstone is").isEqualTo(v.get(1).to());
    }

    @Test
    void insert_is_clamped_when_an_older_transaction_reinserts_a_key_deleted_by_a_newer_one() throws SQLException {
        ReferenceShape ref = twins("older");
        for (String t : List.of("older_ref", "older_tm")) {
            Db.exec(ds, "INSERT INTO " + t + " VALUES (1, 'a')");
            try (Connection older = ds.getConnection(); Statement s = older.createStatement()) {
                older.setAutoCommit(false);
                s.execute("SELECT now()"); // fixes the older transaction's now()
                Db.exec(ds, "DELETE FROM " + t + " WHERE id = 1"); // a later transaction deletes and commits
                s.execute("INSERT INTO " + t + " VALUES (1, 'again')");
                older.commit();
            }
        }
        assertThat(kinds(ref.checkerView().checkInvariants(ds))).as("reference").contains(OVERLAP);
        assertThat(tidemarkViolations("older_tm")).isEmpty();
        Versions v = Versions.of(ds, "older_tm_history", "id = 1");
        assertThat(v.ops()).containsExactly(1, 3, 1);
        assertThat(v.get(2).from()).isEqualTo(v.get(1).to());
    }

    @Test
    void a_primary_key_update_ends_the_old_chain_with_a_tombstone_and_starts_the_new_key_with_an_insert() {
        ReferenceShape ref = twins("rekey");
        for (String t : List.of("rekey_ref", "rekey_tm")) {
            Db.exec(ds, "INSERT INTO " + t + " VALUES (1, 'a')");
            Db.exec(ds, "UPDATE " + t + " SET id = 2, name = 'b' WHERE id = 1");
        }
        assertThat(kinds(ref.checkerView().checkInvariants(ds))).as("reference: key 1 is closed without a tombstone")
                .contains(CHAIN_NOT_TERMINATED);
        assertThat(Versions.of(ds, "rekey_ref_history", "id = 2").ops()).as("reference: key 2 starts with an update")
                .containsExactly(2);
        assertThat(tidemarkViolations("rekey_tm")).isEmpty();
        Versions old = Versions.of(ds, "rekey_tm_history", "id = 1");
        Versions moved = Versions.of(ds, "rekey_tm_history", "id = 2");
        assertThat(old.ops()).containsExactly(1, 3);
        assertThat(old.get(1).get("name")).as("tombstone keeps the last values").isEqualTo("a");
        assertThat(moved.ops()).containsExactly(1);
        assertThat(moved.get(0).from()).isEqualTo(old.get(1).to());
    }

    @Test
    void truncate_closes_every_open_version_with_a_tombstone() {
        ReferenceShape ref = twins("trunc");
        for (String t : List.of("trunc_ref", "trunc_tm")) {
            Db.exec(ds, "INSERT INTO " + t + " VALUES (1, 'a'), (2, 'b'); UPDATE " + t + " SET name = 'c' WHERE id = 2");
            Db.exec(ds, "TRUNCATE " + t);
        }
        assertThat(kinds(ref.checkerView().checkInvariants(ds))).as("reference leaves versions open")
                .containsOnly(OPEN_VERSION_WITHOUT_ROW).hasSize(2);
        assertThat(tidemarkViolations("trunc_tm")).isEmpty();
        assertThat(Db.count(ds, "SELECT count(*) FROM trunc_tm_history WHERE valid_to = 'infinity'")).isZero();
        assertThat(Versions.of(ds, "trunc_tm_history", "id = 2").ops()).containsExactly(1, 2, 3);
        assertThat(Versions.of(ds, "trunc_tm_history", "id = 2").last().get("name")).isEqualTo("c");
        // After the truncate the keys can come back, clamped after their tombstones.
        Db.exec(ds, "INSERT INTO trunc_tm VALUES (1, 'again')");
        assertThat(Versions.of(ds, "trunc_tm_history", "id = 1").ops()).containsExactly(1, 3, 1);
    }

    @Test
    void truncate_can_be_refused_instead() {
        Db.exec(ds, "CREATE TABLE trunc_refused (id int PRIMARY KEY, name text); INSERT INTO trunc_refused VALUES (1, 'a')");
        TemporalTable.forTable("trunc_refused").truncatePolicy(TruncatePolicy.REFUSE).triggerMode(mode()).storage(storage()).build().install(ds);
        assertThatThrownBy(() -> Db.exec(ds, "TRUNCATE trunc_refused"))
                .hasMessageContaining("TRUNCATE of public.trunc_refused is refused");
        assertThat(Db.count(ds, "SELECT count(*) FROM trunc_refused")).isEqualTo(1);
    }

    @Test
    void columns_without_an_equality_operator_never_break_updates() {
        String columns = "id int PRIMARY KEY, body json, markup xml, spot point";
        twins("noeq", columns, List.of("id", "body", "markup", "spot"), List.of("int", "json", "xml", "point"),
                null);
        String insert = " VALUES (1, '{\"a\": 1}', '<a>1</a>', point(1, 2))";
        Db.exec(ds, "INSERT INTO noeq_ref" + insert + "; INSERT INTO noeq_tm" + insert);
        assertThatThrownBy(() -> Db.exec(ds, "UPDATE noeq_ref SET body = '{\"a\": 2}' WHERE id = 1"))
                .as("reference").hasMessageContaining("operator does not exist: json = json");
        Db.exec(ds, "UPDATE noeq_tm SET body = '{\"a\": 2}' WHERE id = 1");
        Db.exec(ds, "UPDATE noeq_tm SET markup = '<a>2</a>' WHERE id = 1");
        Db.exec(ds, "UPDATE noeq_tm SET spot = point(3, 4) WHERE id = 1");
        Db.exec(ds, "UPDATE noeq_tm SET body = '{\"a\": 2}', markup = '<a>2</a>', spot = point(3, 4) WHERE id = 1");
        Versions v = Versions.of(ds, "noeq_tm_history", "id = 1");
        assertThat(v.ops()).as("three changes, then a no-op").containsExactly(1, 2, 2, 2);
        assertThat(v.last().get("spot").toString()).isEqualTo("(3.0,4.0)");
    }

    @Test
    void a_session_search_path_that_shadows_the_history_table_does_not_reroute_history() throws SQLException {
        twins("shadowed");
        Db.exec(ds, "CREATE SCHEMA decoy;"
                + " CREATE TABLE decoy.shadowed_ref_history (LIKE public.shadowed_ref_history INCLUDING ALL);"
                + " CREATE TABLE decoy.shadowed_tm_history (LIKE public.shadowed_tm_history INCLUDING ALL)");
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET search_path = decoy, public");
            s.execute("INSERT INTO shadowed_ref VALUES (1, 'a')");
            s.execute("INSERT INTO shadowed_tm VALUES (1, 'a')");
        }
        assertThat(Db.count(ds, "SELECT count(*) FROM decoy.shadowed_ref_history")).as("reference: rerouted")
                .isEqualTo(1);
        assertThat(Db.count(ds, "SELECT count(*) FROM public.shadowed_ref_history")).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM decoy.shadowed_tm_history")).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM public.shadowed_tm_history")).isEqualTo(1);
    }

    @Test
    void the_application_role_needs_no_privilege_on_history_and_cannot_forge_or_rewrite_it() {
        twins("guarded");
        Db.exec(ds, "INSERT INTO guarded_ref VALUES (1, 'a'); INSERT INTO guarded_tm VALUES (1, 'a')");
        DataSource app = db.createRole("fix_app");
        Db.exec(ds, "GRANT SELECT, INSERT, UPDATE, DELETE ON guarded_ref, guarded_tm TO fix_app");

        assertThatThrownBy(() -> Db.exec(app, "UPDATE guarded_ref SET name = 'b' WHERE id = 1"))
                .as("reference: the writer itself needs rights on history").hasMessageContaining("permission denied");
        Db.exec(ds, "GRANT SELECT, INSERT, UPDATE ON guarded_ref_history TO fix_app");
        Db.exec(app, "UPDATE guarded_ref SET name = 'b' WHERE id = 1");
        Db.exec(app, "UPDATE guarded_ref_history SET changed_by = 'someone else'");
        assertThat(Db.count(ds, "SELECT count(*) FROM guarded_ref_history WHERE changed_by = 'someone else'"))
                .as("reference: and with them it rewrites history").isEqualTo(2);

        Db.exec(app, "UPDATE guarded_tm SET name = 'b' WHERE id = 1");
        Db.exec(app, "DELETE FROM guarded_tm WHERE id = 1");
        assertThat(Versions.of(ds, "guarded_tm_history", "id = 1").ops()).containsExactly(1, 2, 3);
        // With the current version in the table, history is written to the closed-versions table.
        String stored = "guarded_tm_history" + (storage() == HistoryStorage.CURRENT_IN_TABLE ? "_closed" : "");
        for (String forge : List.of("INSERT INTO " + stored + " (id, valid_from, valid_to, operation, chain_no)"
                        + " VALUES (9, now(), now(), 1, 1)",
                "UPDATE " + stored + " SET valid_to = valid_from", "DELETE FROM " + stored,
                "TRUNCATE " + stored)) {
            assertThatThrownBy(() -> Db.exec(app, forge)).as(forge).hasMessageContaining("permission denied");
        }
    }

    @Test
    void the_security_definer_function_cannot_be_attached_to_another_table() {
        twins("attach");
        DataSource app = db.createRole("attach_app");
        Db.exec(ds, "CREATE SCHEMA attach_own AUTHORIZATION attach_app");
        Db.exec(app, "CREATE TABLE attach_own.attach_tm (id int PRIMARY KEY, name text)");
        assertThatThrownBy(() -> Db.exec(app, "CREATE TRIGGER forge AFTER INSERT ON attach_own.attach_tm FOR EACH ROW"
                + " EXECUTE FUNCTION public.attach_tm_history_write()"))
                .hasMessageContaining("permission denied for function public.attach_tm_history_write");
        // Even attached by a superuser, the function refuses to write for any table but its own.
        Db.exec(ds, "CREATE TRIGGER forge AFTER INSERT ON attach_own.attach_tm FOR EACH ROW"
                + " EXECUTE FUNCTION public.attach_tm_history_write()");
        assertThatThrownBy(() -> Db.exec(app, "INSERT INTO attach_own.attach_tm VALUES (1, 'forged')"))
                .hasMessageContaining("was generated for public.attach_tm, not for attach_own.attach_tm");
        assertThat(Db.count(ds, "SELECT count(*) FROM attach_tm_history")).isZero();
    }

    @Test
    void generated_names_over_63_bytes_are_refused_where_the_reference_lets_them_collide_silently() {
        String first = "t".repeat(56);                 // its generated names all exceed 63 bytes
        String second = first + "_histor";           // 63 bytes: truncation makes both functions one
        Db.exec(ds, "CREATE TABLE " + first + " (id int PRIMARY KEY, name text);"
                + " CREATE TABLE " + second + " (id int PRIMARY KEY, name text)");
        ReferenceShape refFirst = ReferenceShape.of(first, "id", List.of("id", "name"))
                .withHistory("long_first_history", first + "_history_write");
        ReferenceShape refSecond = ReferenceShape.of(second, "id", List.of("id", "name"))
                .withHistory("long_second_history", second + "_history_write");
        refFirst.install(ds, List.of("int", "text"));
        refSecond.install(ds, List.of("int", "text"));
        Db.exec(ds, "INSERT INTO " + first + " VALUES (1, 'a')");
        assertThat(Db.count(ds, "SELECT count(*) FROM long_first_history")).as("reference: nothing recorded").isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM long_second_history"))
                .as("reference: the first table's change went to the second table's history").isEqualTo(1);

        for (String table : List.of(first, second)) {
            assertThatThrownBy(() -> TemporalTable.forTable(table).build())
                    .isInstanceOfSatisfying(TidemarkException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER))
                    .hasMessageContaining("would silently truncate");
        }
        assertThatThrownBy(() -> TemporalTable.forTable(second).historyTable("short_history").build())
                .hasMessageContaining("as-of function");
    }

    @Test
    void reserved_column_names_are_refused_where_the_reference_breaks_at_the_first_write() {
        String columns = "id int PRIMARY KEY, valid_from date";
        Db.exec(ds, "CREATE TABLE reserved_ref (" + columns + "); CREATE TABLE reserved_tm (" + columns + ")");
        ReferenceShape ref = ReferenceShape.of("reserved_ref", "id", List.of("id", "valid_from"));
        assertThatThrownBy(() -> ref.install(ds, List.of("int", "date")))
                .as("reference: its history table cannot even hold the column").hasMessageContaining("valid_from");
        assertThatThrownBy(() -> TemporalTable.forTable("reserved_tm").triggerMode(mode()).storage(storage()).build().install(ds))
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED))
                .hasMessageContaining("column \"valid_from\"").hasMessageContaining("rename it or exclude it");
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_class WHERE relname = 'reserved_tm_history'"))
                .as("nothing half-installed").isZero();
        TemporalTable.forTable("reserved_tm").exclude("valid_from").triggerMode(mode()).storage(storage()).build().install(ds);
        Db.exec(ds, "INSERT INTO reserved_tm VALUES (1, '2020-01-01')");
        assertThat(Versions.of(ds, "reserved_tm_history", "id = 1").ops()).containsExactly(1);
    }
}
