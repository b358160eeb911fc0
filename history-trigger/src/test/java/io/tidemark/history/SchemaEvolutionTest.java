package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.math.BigDecimal;

import static io.tidemark.history.Drift.Kind.COLUMN_ADDED;
import static io.tidemark.history.Drift.Kind.COLUMN_DROPPED;
import static io.tidemark.history.Drift.Kind.COLUMN_TYPE_CHANGED;
import static io.tidemark.history.Drift.Kind.FUNCTION_CHANGED;
import static io.tidemark.history.Drift.Kind.INDEX_MISSING;
import static io.tidemark.history.Drift.Kind.NOT_INSTALLED;
import static io.tidemark.history.Drift.Kind.OPTIONS_CHANGED;
import static io.tidemark.history.Drift.Kind.TRIGGER_DISABLED;
import static io.tidemark.history.Drift.Kind.TRIGGER_MISSING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** verify() reports each kind of drift; evolve() repairs it; install() is idempotent; uninstall() keeps history. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class SchemaEvolutionTest {

    private final DataSource ds;
    private final TemporalTable items = TemporalTable.forTable("items").build();

    SchemaEvolutionTest(DataSource ds) {
        this.ds = ds;
    }

    @BeforeEach
    void installed() {
        Db.exec(ds, "DROP TABLE IF EXISTS items CASCADE; DROP TABLE IF EXISTS items_history;"
                + " DROP FUNCTION IF EXISTS items_history_write, items_history_truncate, items_as_of;"
                + " DO $$ BEGIN IF to_regclass('tidemark.temporal_tables') IS NOT NULL THEN"
                + " DELETE FROM tidemark.temporal_tables WHERE source_table = 'items'; END IF; END $$");
        Db.exec(ds, "CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(10,2));"
                + " INSERT INTO items VALUES (1, 'a', 1.50)");
        assertThat(items.install(ds).created()).isTrue();
        assertThat(items.verify(ds).drifts()).isEmpty();
    }

    @Test
    void install_is_idempotent() {
        InstallReport again = items.install(ds);
        assertThat(again.created()).isFalse();
        assertThat(again.seededRows()).isZero();
        assertThat(again.repairs()).isEmpty();
        assertThat(Db.count(ds, "SELECT count(*) FROM items_history")).isEqualTo(1);
    }

    @Test
    void a_column_added_by_hand_is_drift_and_evolve_adds_it_to_history() {
        HistoryQueries queries = items.queries(ds);
        assertThat(queries.versions(1).get(0).values()).doesNotContainKey("color");
        Db.exec(ds, "ALTER TABLE items ADD COLUMN color varchar(12)");
        VerifyReport drift = items.verify(ds);
        assertThat(drift.has(COLUMN_ADDED)).isTrue();
        assertThat(drift.has(FUNCTION_CHANGED)).as("the function no longer writes every column").isTrue();
        assertThatThrownBy(drift::assertClean).isInstanceOfSatisfying(TidemarkException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_DRIFT)).hasMessageContaining("evolve");

        VerifyReport evolved = items.evolve(ds);
        assertThat(evolved.actions()).anySatisfy(a -> assertThat(a).contains("added column color character varying(12)"));
        assertThat(items.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "UPDATE items SET color = 'red' WHERE id = 1");
        assertThat(Versions.of(ds, "items_history", "id = 1").last().get("color")).isEqualTo("red");
        assertThat(queries.versions(1)).as("a queries object made before evolve sees the new column")
                .last().extracting(r -> r.value("color")).isEqualTo("red");
        assertThat(Db.count(ds, "SELECT count(*) FROM items_as_of(now()) WHERE color = 'red'")).isEqualTo(1);
    }

    @Test
    void a_dropped_column_stays_in_history_as_an_orphan() {
        Db.exec(ds, "UPDATE items SET price = 2.00");
        Db.exec(ds, "ALTER TABLE items DROP COLUMN price");
        assertThat(items.verify(ds).has(COLUMN_DROPPED)).isTrue();
        items.evolve(ds);
        assertThat(items.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "UPDATE items SET name = 'b'");
        Versions v = Versions.of(ds, "items_history", "id = 1");
        assertThat(v.ops()).containsExactly(1, 2, 2);
        assertThat(v.get(1).get("price")).isEqualTo(new BigDecimal("2.00"));
        assertThat(v.last().get("price")).as("no longer written").isNull();
        HistoryRow old = items.queries(ds).versions(1).get(1);
        assertThat(old.value("price")).as("queries still show the orphan's past values").isEqualTo(new BigDecimal("2.00"));

        Db.exec(ds, "ALTER TABLE items ADD COLUMN price numeric(10,2)");
        assertThat(items.verify(ds).has(COLUMN_ADDED)).isTrue();
        items.evolve(ds);
        Db.exec(ds, "UPDATE items SET price = 3.00");
        assertThat(Versions.of(ds, "items_history", "id = 1").last().get("price")).as("written again")
                .isEqualTo(new BigDecimal("3.00"));
        assertThat(items.verify(ds).drifts()).isEmpty();
    }

    @Test
    void a_type_change_under_the_same_name_is_refused_and_nothing_changes() {
        Db.exec(ds, "ALTER TABLE items ALTER COLUMN price TYPE numeric(14,4)");
        assertThat(items.verify(ds).has(COLUMN_TYPE_CHANGED)).isTrue();
        String before = (String) Db.scalar(ds, "SELECT prosrc FROM pg_proc WHERE proname = 'items_history_write'");
        assertThatThrownBy(() -> items.evolve(ds)).isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CHANGE_REFUSED))
                .hasMessageContaining("column price changed type from numeric(10,2) to numeric(14,4)")
                .hasMessageContaining("Nothing was changed");
        assertThat(Db.scalar(ds, "SELECT prosrc FROM pg_proc WHERE proname = 'items_history_write'")).isEqualTo(before);
        assertThat(Db.scalar(ds, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                + " WHERE attrelid = 'items_history'::regclass AND attname = 'price'")).isEqualTo("numeric(10,2)");
        Db.exec(ds, "ALTER TABLE items_history RENAME COLUMN price TO price_numeric_10_2");
        items.evolve(ds); // the documented way out: a fresh column of the new type
        assertThat(items.verify(ds).drifts()).isEmpty();
    }

    @Test
    void missing_index_disabled_or_missing_trigger_and_an_edited_function_are_reported_and_repaired() {
        Db.exec(ds, "DROP INDEX items_history_key_idx; ALTER TABLE items DISABLE TRIGGER items_history_trg;"
                + " DROP TRIGGER items_history_truncate_trg ON items");
        String body = (String) Db.scalar(ds, "SELECT prosrc FROM pg_proc WHERE proname = 'items_history_write'");
        Db.exec(ds, "CREATE OR REPLACE FUNCTION public.items_history_write() RETURNS trigger LANGUAGE plpgsql"
                + " SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$" + body.replace("'infinity', 2",
                "'infinity', 1") + "$f$");
        VerifyReport drift = items.verify(ds);
        assertThat(drift.drifts()).extracting(Drift::kind)
                .containsExactlyInAnyOrder(INDEX_MISSING, TRIGGER_DISABLED, TRIGGER_MISSING, FUNCTION_CHANGED);
        assertThat(drift.drifts()).filteredOn(d -> d.kind() == FUNCTION_CHANGED).singleElement()
                .extracting(Drift::detail).asString().contains("changed after installation");

        items.evolve(ds);
        assertThat(items.verify(ds).drifts()).isEmpty();
        Db.exec(ds, "UPDATE items SET name = 'z'");
        assertThat(Versions.of(ds, "items_history", "id = 1").ops()).containsExactly(1, 2);
    }

    @Test
    void an_as_of_function_that_lost_its_pinned_search_path_is_drift() {
        Db.exec(ds, "ALTER FUNCTION public.items_as_of(timestamptz) RESET search_path");
        assertThat(items.verify(ds).drifts()).singleElement().extracting(Drift::detail).asString()
                .contains("search_path is not pinned");
        items.evolve(ds);
        assertThat(items.verify(ds).drifts()).isEmpty();
    }

    @Test
    void a_trigger_function_with_the_former_set_clause_is_drift_and_installing_again_replaces_it() {
        // Functions installed before names were qualified carried this clause; the generated ones qualify every
        // name instead (the clause only slows every write). Installing over them replaces them.
        Db.exec(ds, "ALTER FUNCTION public.items_history_write() SET search_path = pg_catalog, pg_temp");
        assertThat(items.verify(ds).drifts()).singleElement().extracting(Drift::detail).asString()
                .contains("it has SET search_path=pg_catalog, pg_temp, which the generated function does not");
        items.install(ds);
        assertThat(items.verify(ds).drifts()).isEmpty();
        assertThat(Db.scalar(ds, "SELECT proconfig FROM pg_proc WHERE proname = 'items_history_write'")).isNull();
    }

    @Test
    void changed_options_are_drift_and_evolve_applies_them() {
        TemporalTable refusing = TemporalTable.forTable("items").truncatePolicy(TruncatePolicy.REFUSE)
                .sessionUserColumn(true).build();
        assertThat(refusing.verify(ds).has(OPTIONS_CHANGED)).isTrue();
        refusing.evolve(ds);
        assertThat(refusing.verify(ds).drifts()).isEmpty();
        assertThatThrownBy(() -> Db.exec(ds, "TRUNCATE items")).hasMessageContaining("is refused");
        Db.exec(ds, "UPDATE items SET name = 'q'");
        assertThat(Versions.of(ds, "items_history", "id = 1").last().get("db_session_user")).isEqualTo("postgres");
        assertThat(items.verify(ds).has(OPTIONS_CHANGED)).as("the old configuration now differs").isTrue();
    }

    @Test
    void uninstall_drops_trigger_and_functions_and_keeps_the_history() {
        Db.exec(ds, "UPDATE items SET name = 'b'");
        items.uninstall(ds);
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'items'::regclass")).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM pg_proc WHERE proname LIKE 'items%'")).isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM items_history")).isEqualTo(2);
        assertThat(items.verify(ds).drifts()).extracting(Drift::kind).containsExactly(NOT_INSTALLED);
        assertThatThrownBy(() -> items.evolve(ds)).hasMessageContaining("Run install() first");
        assertThatThrownBy(() -> items.install(ds)).isInstanceOfSatisfying(TidemarkException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_UNSUPPORTED))
                .hasMessageContaining("already exists and is not a registered history table");
        Db.exec(ds, "DROP TABLE items_history");   // the operator's decision: start a new history
        assertThat(items.install(ds).created()).isTrue();
    }
}
