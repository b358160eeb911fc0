package io.tidemark.destinations.jdbc;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.spi.DeliveryException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import io.tidemark.testing.UnreachableDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.destinations.jdbc.Changes.diff;
import static io.tidemark.destinations.jdbc.Changes.full;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JDBC table destination against a real PostgreSQL database: the test class's own database on the embedded
 * server stands for "another database" (nothing of Tidemark's source side is in it). An audit trigger on the target
 * table records every row write, so "applied once" is counted, not assumed.
 */
@EmbeddedPostgresTest
class JdbcTableDestinationTest {

    private final TestDatabase db;

    JdbcTableDestinationTest(TestDatabase db) {
        this.db = db;
    }

    @BeforeEach
    void tables() {
        db.execute("""
                DROP SCHEMA IF EXISTS copy CASCADE;
                CREATE SCHEMA copy;
                CREATE TABLE copy.items (
                    id        bigint PRIMARY KEY,
                    name      text NOT NULL,
                    price     numeric(12, 2),
                    active    boolean,
                    seen_at   timestamptz,
                    attrs     jsonb,
                    note      text DEFAULT 'none'
                );
                CREATE TABLE copy.audit (n bigserial PRIMARY KEY, op text NOT NULL, id bigint NOT NULL);
                CREATE FUNCTION copy.audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO copy.audit (op, id) VALUES (TG_OP, CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END);
                    RETURN NULL;
                END $$;
                CREATE TRIGGER audit AFTER INSERT OR UPDATE OR DELETE ON copy.items
                    FOR EACH ROW EXECUTE FUNCTION copy.audit_row();
                """);
    }

    private JdbcTableDestination.Builder items() {
        return JdbcTableDestination.postgres(db.dataSource(), "copy.items")
                .name("items-copy")
                .columns("id", "name", "price", "active", "seen_at", "attrs", "note")
                .keyColumns("id");
    }

    @Test
    void inserts_updates_and_deletes_are_applied_with_exact_values_and_the_position_recorded() throws Exception {
        JdbcTableDestination copy = items().build();
        copy.deliver(diff("Items", 0, 10, 1, 1,
                "{\"$operation\":\"I\",\"id\":1,\"name\":\"a\",\"price\":12.50,\"active\":true,"
                        + "\"seen_at\":\"2026-12-01T10:00:00Z\",\"attrs\":{\"k\":[1,2]},\"note\":\"n1\"}",
                "{\"$operation\":\"I\",\"id\":2,\"name\":\"b\",\"price\":0.10,\"active\":false,\"seen_at\":null}",
                "{\"$operation\":\"I\",\"id\":3,\"name\":\"c\",\"price\":99999999.99}"));
        copy.deliver(diff("Items", 10, 20, 1, 1,
                "{\"$operation\":\"U\",\"id\":2,\"name\":\"b2\",\"price\":1.25,\"active\":null}",
                "{\"$operation\":\"D\",\"id\":3}"));

        assertThat(rows()).containsExactly(
                "1|a|12.50|true|2026-12-01 10:00:00+00|{\"k\": [1, 2]}|n1",
                "2|b2|1.25|null|null|null|none");
        assertThat(position("Items")).isEqualTo("10|20|1|1|DIFF|" + diff("Items", 10, 20, 1, 1, "{}").idempotencyKey());
        assertThat(scalar("SELECT price FROM copy.items WHERE id = 1", BigDecimal.class))
                .isEqualByComparingTo("12.50");
    }

    @Test
    void changed_columns_update_only_what_changed_and_a_page_folds_per_key_in_order() {
        JdbcTableDestination copy = items().build();
        copy.deliver(diff("Items", 0, 1, 1, 1,
                "{\"$operation\":\"I\",\"id\":1,\"name\":\"a\",\"price\":1.00,\"note\":\"keep\"}",
                "{\"$operation\":\"I\",\"id\":2,\"name\":\"b\",\"price\":2.00,\"note\":\"old\"}"));
        copy.deliver(diff("Items", 1, 9, 1, 1,
                // $changed: price changed, note cleared (listed without a value); name not listed: kept.
                "{\"$operation\":\"U\",\"$changed\":[\"price\",\"note\"],\"id\":1,\"price\":1.50}",
                // delete then insert again in one page: a fresh row (note gets its default, not "old").
                "{\"$operation\":\"D\",\"id\":2}",
                "{\"$operation\":\"I\",\"id\":2,\"name\":\"b-again\",\"price\":2.50}",
                // insert, update, delete in one page: nothing left.
                "{\"$operation\":\"I\",\"id\":5,\"name\":\"e\"}",
                "{\"$operation\":\"U\",\"id\":5,\"name\":\"e2\"}",
                "{\"$operation\":\"D\",\"id\":5}",
                // two updates of one key: the later wins column by column.
                "{\"$operation\":\"I\",\"id\":6,\"name\":\"f\",\"price\":6.00}",
                "{\"$operation\":\"U\",\"$changed\":[\"name\"],\"id\":6,\"name\":\"f2\"}"));

        assertThat(rows()).containsExactly(
                "1|a|1.50|null|null|null|null",
                "2|b-again|2.50|null|null|null|none",
                "6|f2|6.00|null|null|null|none");
    }

    @Test
    void a_page_offered_again_is_skipped_and_an_older_range_does_not_roll_rows_back() {
        JdbcTableDestination copy = items().build();
        var page = diff("Items", 0, 10, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}",
                "{\"$operation\":\"I\",\"id\":2,\"name\":\"b\"}");
        copy.deliver(page);
        copy.deliver(page);
        copy.deliver(diff("Items", 10, 20, 1, 1, "{\"$operation\":\"U\",\"id\":1,\"name\":\"a2\"}"));
        // The same changes cut into other pages (the engine lost track after a crash): covered, skipped.
        copy.deliver(diff("Items", 10, 20, 1, 2, "{\"$operation\":\"U\",\"id\":1,\"name\":\"stale\"}"));
        copy.deliver(diff("Items", 0, 10, 1, 1, "{\"$operation\":\"U\",\"id\":1,\"name\":\"stale\"}"));

        assertThat(rows()).containsExactly("1|a2|null|null|null|null|none", "2|b|null|null|null|null|none");
        assertThat(auditCount()).as("two inserts and one update, nothing twice").isEqualTo(3);
    }

    @Test
    void a_page_larger_than_one_statement_is_applied_whole_in_order() {
        JdbcTableDestination copy = items().build();
        List<String> changes = new ArrayList<>();
        for (int id = 1; id <= 301; id++) { // 2 full statements of 128 rows, then 32 + 8 + 4 + 1
            changes.add("{\"$operation\":\"I\",\"id\":" + id + ",\"name\":\"n" + id + "\",\"price\":" + id + ".25}");
        }
        changes.add("{\"$operation\":\"U\",\"id\":7,\"name\":\"seven\"}"); // folded into the insert of 7
        copy.deliver(diff("Items", 0, 400, 1, 1, changes.toArray(String[]::new)));

        assertThat(scalar("SELECT count(*) FROM copy.items", Long.class)).isEqualTo(301);
        assertThat(scalar("SELECT sum(price) FROM copy.items", BigDecimal.class))
                .isEqualByComparingTo(new BigDecimal("45526.25")); // 301 * 302 / 2 + 301 * 0.25
        assertThat(scalar("SELECT name FROM copy.items WHERE id = 7", String.class)).isEqualTo("seven");
        assertThat(auditCount()).as("one write per row").isEqualTo(301);

        List<String> deletes = new ArrayList<>();
        for (int id = 2; id <= 301; id += 2) { // 150 deletes: one statement of 128, then 16 + 4 + 2
            deletes.add("{\"$operation\":\"D\",\"id\":" + id + "}");
        }
        copy.deliver(diff("Items", 400, 500, 1, 1, deletes.toArray(String[]::new)));
        assertThat(scalar("SELECT count(*) FROM copy.items", Long.class)).isEqualTo(151);
        assertThat(scalar("SELECT count(*) FROM copy.items WHERE id % 2 = 0", Long.class)).isZero();
    }

    @Test
    void a_composite_key_is_matched_on_all_its_columns() {
        db.execute("CREATE TABLE copy.lines (order_id bigint, line integer, qty integer NOT NULL,"
                + " PRIMARY KEY (order_id, line))");
        JdbcTableDestination lines = JdbcTableDestination.postgres(db.dataSource(), "copy.lines")
                .column("order_id", "orderId").columns("line", "qty").keyColumns("order_id", "line").build();
        lines.deliver(diff("Lines", 0, 5, 1, 1,
                "{\"$operation\":\"I\",\"orderId\":1,\"line\":1,\"qty\":10}",
                "{\"$operation\":\"I\",\"orderId\":1,\"line\":2,\"qty\":20}",
                "{\"$operation\":\"I\",\"orderId\":2,\"line\":1,\"qty\":30}",
                "{\"$operation\":\"I\",\"orderId\":2,\"line\":2,\"qty\":40}"));
        lines.deliver(diff("Lines", 5, 9, 1, 1,
                "{\"$operation\":\"D\",\"orderId\":1,\"line\":2}",
                "{\"$operation\":\"D\",\"orderId\":2,\"line\":1}",
                "{\"$operation\":\"U\",\"$changed\":[\"qty\"],\"orderId\":2,\"line\":2,\"qty\":41}"));
        assertThat(query("SELECT order_id || '/' || line || '=' || qty FROM copy.lines ORDER BY 1"))
                .containsExactly("1/1=10", "2/2=41");
    }

    @Test
    void two_destinations_keep_their_own_positions_and_objects_are_apart() {
        JdbcTableDestination one = items().build();
        JdbcTableDestination two = items().name("items-copy-2").build();
        one.deliver(diff("Items", 0, 10, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}"));
        two.deliver(diff("Items", 0, 10, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":\"a\"}"));
        one.deliver(diff("Other", 0, 10, 1, 1, "{\"$operation\":\"I\",\"id\":7,\"name\":\"x\"}"));

        assertThat(auditCount()).as("the second destination applied its own page").isEqualTo(3);
        assertThat(query("SELECT destination_name || '/' || object_name || '/' || to_version"
                + " FROM copy.tidemark_destination_position ORDER BY 1"))
                .containsExactly("items-copy-2/Items/10", "items-copy/Items/10", "items-copy/Other/10");
    }

    @Test
    void a_full_export_over_several_pages_replaces_the_content_at_its_last_page_only() {
        JdbcTableDestination copy = items().build();
        copy.deliver(diff("Items", 0, 5, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":\"old\"}",
                "{\"$operation\":\"I\",\"id\":9,\"name\":\"gone\"}"));

        copy.deliver(full("Items", 50, 1, 3, "{\"id\":1,\"name\":\"new1\"}", "{\"id\":2,\"name\":\"new2\"}"));
        copy.deliver(full("Items", 50, 2, 3, "{\"id\":3,\"name\":\"new3\"}"));
        assertThat(rows()).as("pages 1 and 2 are staged: readers still see the old content")
                .containsExactly("1|old|null|null|null|null|none", "9|gone|null|null|null|null|none");
        assertThat(scalar("SELECT count(*) FROM copy.tidemark_destination_stage", Long.class)).isEqualTo(3);
        // A staged page offered again is skipped, not staged twice.
        copy.deliver(full("Items", 50, 2, 3, "{\"id\":3,\"name\":\"new3\"}"));
        assertThat(scalar("SELECT count(*) FROM copy.tidemark_destination_stage", Long.class)).isEqualTo(3);

        copy.deliver(full("Items", 50, 3, 3, "{\"id\":4,\"name\":\"new4\"}"));
        assertThat(rows()).containsExactly("1|new1|null|null|null|null|none", "2|new2|null|null|null|null|none",
                "3|new3|null|null|null|null|none", "4|new4|null|null|null|null|none");
        assertThat(scalar("SELECT count(*) FROM copy.tidemark_destination_stage", Long.class)).isZero();
        assertThat(position("Items")).startsWith("0|50|3|3|FULL|");
    }

    @Test
    void a_one_page_full_export_replaces_the_content_in_its_transaction() {
        JdbcTableDestination copy = items().build();
        copy.deliver(diff("Items", 0, 5, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":\"old\"}"));
        copy.deliver(full("Items", 5, 1, 1, "{\"id\":2,\"name\":\"only\"}"));
        assertThat(rows()).containsExactly("2|only|null|null|null|null|none");
    }

    @Test
    void a_full_page_whose_predecessor_was_not_applied_is_fatal_and_an_abandoned_export_is_forgotten() {
        JdbcTableDestination copy = items().build();
        assertThatThrownBy(() -> copy.deliver(full("Items", 50, 2, 3, "{\"id\":3,\"name\":\"x\"}")))
                .isInstanceOfSatisfying(DeliveryException.class, e -> {
                    assertThat(e.isRetryable()).isFalse();
                    assertThat(e.getMessage()).contains("FULL export Items:0-50: page 2/3 cannot be applied")
                            .contains("offered again from its first page");
                });
        copy.deliver(full("Items", 50, 1, 3, "{\"id\":1,\"name\":\"x\"}"));
        // The engine moved on without finishing the export (say it was replaced by a new one): the stage is
        // cleared by the next page that is not part of it.
        copy.deliver(diff("Items", 50, 60, 1, 1, "{\"$operation\":\"I\",\"id\":8,\"name\":\"y\"}"));
        assertThat(scalar("SELECT count(*) FROM copy.tidemark_destination_stage", Long.class)).isZero();
        assertThat(rows()).containsExactly("8|y|null|null|null|null|none");
    }

    @Test
    void what_a_retry_cannot_cure_is_fatal_and_named() {
        db.execute("CREATE TABLE copy.narrow (id bigint PRIMARY KEY, name text NOT NULL)");
        JdbcTableDestination wrongColumn = JdbcTableDestination.postgres(db.dataSource(), "copy.narrow")
                .columns("id", "name", "colour").keyColumns("id").build();
        assertFatal(() -> wrongColumn.deliver(diff("Items", 0, 1, 1, 1, "{\"id\":1,\"name\":\"a\"}")),
                "the table copy.narrow has no column colour (it has id, name)");

        JdbcTableDestination noTable = JdbcTableDestination.postgres(db.dataSource(), "copy.nope")
                .columns("id").keyColumns("id").build();
        assertFatal(() -> noTable.deliver(diff("Items", 0, 1, 1, 1, "{\"id\":1}")),
                "the table copy.nope does not exist");

        JdbcTableDestination copy = items().build();
        assertFatal(() -> copy.deliver(diff("Items", 0, 1, 1, 1, "{\"$operation\":\"I\",\"name\":\"no id\"}")),
                "a change has no value for the key field \"id\"");
        assertFatal(() -> copy.deliver(diff("Items", 0, 1, 1, 1, "{\"$operation\":\"I\",\"id\":1,\"name\":null}")),
                "23502");
        assertFatal(() -> copy.deliver(diff("Items", 0, 1, 1, 1,
                "{\"$operation\":\"I\",\"id\":1,\"name\":\"a\",\"seen_at\":\"not a time\"}")), "22007");
        assertThat(rows()).as("a refused page leaves nothing").isEmpty();
        assertThat(position("Items")).as("and no position").isEqualTo("none");
    }

    @Test
    void an_unreachable_database_is_retryable_and_names_the_target_without_the_password() {
        JdbcTableDestination copy = JdbcTableDestination.postgres(UnreachableDatabase.postgres(), "copy.items")
                .columns("id").keyColumns("id").build();
        assertThatThrownBy(() -> copy.deliver(diff("Items", 0, 1, 1, 1, "{\"id\":1}")))
                .isInstanceOfSatisfying(DeliveryException.class, e -> {
                    assertThat(e.isRetryable()).isTrue();
                    assertThat(e.getMessage()).contains("could not apply page 1/1 of Items:0-1")
                            .doesNotContain(UnreachableDatabase.PASSWORD);
                });
    }

    @Test
    void with_ready_tables_an_ordinary_role_needs_only_dml_rights() {
        JdbcTableDestination dba = items().build();
        db.execute(dba.script());
        var role = db.createRole("jdbc_dest_writer");
        db.execute("""
                GRANT USAGE ON SCHEMA copy TO jdbc_dest_writer;
                GRANT SELECT, INSERT, UPDATE, DELETE ON copy.items, copy.audit,
                      copy.tidemark_destination_position, copy.tidemark_destination_stage TO jdbc_dest_writer;
                GRANT USAGE ON SEQUENCE copy.audit_n_seq TO jdbc_dest_writer;""");
        JdbcTableDestination copy = JdbcTableDestination.postgres(role, "copy.items").name("items-copy")
                .columns("id", "name").keyColumns("id").build();
        copy.deliver(full("Items", 3, 1, 2, "{\"id\":1,\"name\":\"a\"}"));
        copy.deliver(full("Items", 3, 2, 2, "{\"id\":2,\"name\":\"b\"}"));
        assertThat(rows()).hasSize(2);
    }

    @Test
    void the_configuration_is_checked_at_build_and_every_problem_listed() {
        assertThatThrownBy(() -> JdbcTableDestination.postgres(null, "a;b").name(" ").columns("id", "id")
                .keyColumns("nope").batchSize(0).positionTable("").build())
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
                    assertThat(e.getMessage()).contains("dataSource must not be null")
                            .contains("Refusing the target table name 'a;b'").contains("name must not be blank")
                            .contains("column \"id\" is mapped twice")
                            .contains("key column \"nope\" is not one of the columns [id]")
                            .contains("The object name is empty").contains("batchSize must be at least 1");
                });
        assertThatThrownBy(() -> JdbcTableDestination.sqlServer(db.dataSource(), "dbo.t").build())
                .hasMessageContaining("columns must name at least one column")
                .hasMessageContaining("keyColumns must name at least one column");
    }

    private static void assertFatal(Runnable delivery, String message) {
        assertThatThrownBy(delivery::run).isInstanceOfSatisfying(DeliveryException.class, e -> {
            assertThat(e.isRetryable()).as(e.getMessage()).isFalse();
            assertThat(e.getMessage()).contains(message);
        });
    }

    List<String> rows() {
        return query("""
                SELECT concat_ws('|', id, name, coalesce(price::text, 'null'), coalesce(active::text, 'null'),
                       coalesce(to_char(seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || '+00', 'null'),
                       coalesce(attrs::text, 'null'), coalesce(note, 'null'))
                  FROM copy.items ORDER BY id""");
    }

    String position(String object) {
        List<String> rows = query("SELECT concat_ws('|', coalesce(from_version::text, 'null'),"
                + " coalesce(to_version::text, 'null'), coalesce(page_number::text, 'null'),"
                + " coalesce(page_count::text, 'null'), coalesce(sync_type, 'null'),"
                + " coalesce(idempotency_key, 'null')) FROM copy.tidemark_destination_position"
                + " WHERE destination_name = 'items-copy' AND object_name = '" + object + "'");
        return rows.isEmpty() ? "none" : rows.get(0);
    }

    long auditCount() {
        return scalar("SELECT count(*) FROM copy.audit", Long.class);
    }

    <T> T scalar(String sql, Class<T> type) {
        try (Connection c = db.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getObject(1, type);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    List<String> query(String sql) {
        return Rows.query(db.dataSource(), sql);
    }
}
