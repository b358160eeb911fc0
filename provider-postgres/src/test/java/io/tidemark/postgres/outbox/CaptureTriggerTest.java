package io.tidemark.postgres.outbox;

import io.tidemark.postgres.CaptureShape;
import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.postgres.TruncatePolicy;
import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every case of the capture triggers, against the real server: what lands in the outbox for each kind of write. */
@EmbeddedPostgresTest
class CaptureTriggerTest {

    private static final String ITEMS = "item_code text PRIMARY KEY, description text, qty int, price numeric,"
            + " attrs json, doc xml, pos point";

    private final TestDatabase database;

    CaptureTriggerTest(TestDatabase database) {
        this.database = database;
    }

    /** The capture shape of every outbox this class installs; a subclass runs every test on another one. */
    CaptureShape shape() {
        return CaptureShape.FULL_IMAGE;
    }

    private OutboxTables items() {
        return OutboxTables.create(shape(), database, "items", ITEMS);
    }

    @Test
    void an_insert_is_captured_with_every_column_and_the_writers_transaction() {
        OutboxTables t = items();

        long xid = insertReturningXid(t, "INSERT INTO $T VALUES ('A-1', 'Widget', 3, 9.50, '{\"size\": 2}',"
                + " '<a>1</a>', '(1,2)')");

        List<JsonNode> changes = t.captured();
        assertThat(changes).hasSize(1);
        JsonNode insert = changes.get(0);
        assertThat(insert.get("$operation").asText()).isEqualTo("I");
        assertThat(insert.get("$version").asLong()).isGreaterThanOrEqualTo(xid);
        assertThat(insert.has("$changed")).isFalse();
        assertThat(t.capturedWithoutVersions().get(0)).isEqualTo("{\"$operation\":\"I\",\"item_code\":\"A-1\","
                + "\"description\":\"Widget\",\"qty\":3,\"price\":9.50,\"attrs\":{\"size\": 2},\"doc\":\"<a>1</a>\","
                + "\"pos\":\"(1,2)\"}");
        assertThat(t.scalar("SELECT xact_id::text::bigint FROM " + t.outbox.outboxTable())).isEqualTo(xid);
    }

    @Test
    void a_multi_row_insert_captures_every_row_in_one_version() {
        OutboxTables t = items();

        t.write("INSERT INTO $T (item_code, qty) SELECT 'K-' || g, g FROM generate_series(1, 1000) g");

        List<JsonNode> changes = t.captured();
        assertThat(changes).hasSize(1000).allSatisfy(c -> assertThat(c.get("$operation").asText()).isEqualTo("I"));
        assertThat(changes.stream().map(c -> c.get("$version").asLong()).distinct()).hasSize(1);
        assertThat(changes.stream().map(c -> c.get("item_code").asText()).distinct()).hasSize(1000);
    }

    @Test
    void an_update_lists_the_changed_columns_and_carries_the_new_row() {
        OutboxTables t = items();
        t.write("INSERT INTO $T VALUES ('A-1', 'Widget', 3, 9.50, NULL, NULL, NULL)");

        t.write("UPDATE $T SET qty = 4, price = 10 WHERE item_code = 'A-1'");

        assertThat(t.capturedWithoutVersions().get(1)).isEqualTo("{\"$operation\":\"U\",\"$changed\":[\"qty\",\"price\"],"
                + "\"item_code\":\"A-1\",\"description\":\"Widget\",\"qty\":4,\"price\":10,\"attrs\":null,"
                + "\"doc\":null,\"pos\":null}");
    }

    @Test
    void a_column_set_to_null_is_listed_as_changed_and_sent_as_null() {
        OutboxTables t = items();
        t.write("INSERT INTO $T VALUES ('A-1', 'Widget', 3, 9.50, NULL, NULL, NULL)");

        t.write("UPDATE $T SET description = NULL WHERE item_code = 'A-1'");

        JsonNode update = t.captured().get(1);
        assertThat(update.get("$changed").toString()).isEqualTo("[\"description\"]");
        assertThat(update.get("description").isNull()).isTrue();
        assertThat(update.get("qty").asInt()).isEqualTo(3);
    }

    @Test
    void an_update_that_changes_nothing_is_not_captured() {
        OutboxTables t = items();
        t.write("INSERT INTO $T VALUES ('A-1', 'Widget', 3, 9.50, '{\"a\":1}', '<a/>', '(1,2)')");

        t.write("UPDATE $T SET qty = qty, description = 'Widget', attrs = '{\"a\":1}', doc = '<a/>',"
                + " pos = '(1,2)' WHERE item_code = 'A-1'");
        t.write("UPDATE $T SET qty = qty");

        assertThat(t.captured()).hasSize(1);
    }

    @Test
    void json_xml_and_point_columns_are_compared_as_text_without_an_error() {
        OutboxTables t = items();
        t.write("INSERT INTO $T VALUES ('A-1', NULL, NULL, NULL, '{\"a\":1}', '<a>1</a>', '(1,2)')");

        // These types have no equality operator: a plain IS DISTINCT FROM would fail the write.
        t.write("UPDATE $T SET attrs = '{\"a\": 1}' WHERE item_code = 'A-1'"); // same value, new text
        t.write("UPDATE $T SET doc = '<a>2</a>' WHERE item_code = 'A-1'");
        t.write("UPDATE $T SET pos = '(1,3)' WHERE item_code = 'A-1'");
        t.write("UPDATE $T SET attrs = '{\"a\": 1}', doc = '<a>2</a>', pos = '(1,3)' WHERE item_code = 'A-1'");

        List<JsonNode> changes = t.captured();
        assertThat(changes).hasSize(4);
        assertThat(changes.get(1).get("$changed").toString()).isEqualTo("[\"attrs\"]");
        assertThat(t.capturedText().get(1)).contains("\"attrs\":{\"a\": 1}");
        assertThat(changes.get(2).get("$changed").toString()).isEqualTo("[\"doc\"]");
        assertThat(changes.get(3).get("$changed").toString()).isEqualTo("[\"pos\"]");
    }

    @Test
    void a_numeric_scale_change_is_a_change_because_the_value_sent_changes() {
        OutboxTables t = items();
        t.write("INSERT INTO $T (item_code, price) VALUES ('A-1', 1.0)");

        t.write("UPDATE $T SET price = 1.00 WHERE item_code = 'A-1'");

        assertThat(t.captured().get(1).get("$changed").toString()).isEqualTo("[\"price\"]");
    }

    @Test
    void a_primary_key_update_is_a_delete_of_the_old_key_and_an_insert_of_the_new_one() {
        OutboxTables t = items();
        t.write("INSERT INTO $T (item_code, description) VALUES ('A-1', 'Widget')");

        t.write("UPDATE $T SET item_code = 'A-2' WHERE item_code = 'A-1'");

        List<JsonNode> changes = t.captured();
        assertThat(changes).hasSize(3);
        assertThat(t.capturedWithoutVersions().get(1)).isEqualTo("{\"$operation\":\"D\",\"item_code\":\"A-1\"}");
        assertThat(changes.get(2).get("$operation").asText()).isEqualTo("I");
        assertThat(changes.get(2).get("item_code").asText()).isEqualTo("A-2");
        assertThat(changes.get(2).get("description").asText()).isEqualTo("Widget");
    }

    @Test
    void a_multi_row_key_update_deletes_the_old_keys_and_inserts_the_new_ones() {
        OutboxTables t = OutboxTables.create(shape(), database, "shift", "id int PRIMARY KEY, name text");
        t.write("INSERT INTO $T VALUES (1, 'one'), (2, 'two'), (3, 'three')");

        t.write("UPDATE $T SET id = id + 10 WHERE id < 3; UPDATE $T SET name = 'drei' WHERE id = 3");

        assertThat(t.capturedWithoutVersions().subList(3, 8)).containsExactlyInAnyOrder(
                "{\"$operation\":\"D\",\"id\":1}", "{\"$operation\":\"D\",\"id\":2}",
                "{\"$operation\":\"I\",\"id\":11,\"name\":\"one\"}", "{\"$operation\":\"I\",\"id\":12,\"name\":\"two\"}",
                "{\"$operation\":\"U\",\"$changed\":[\"name\"],\"id\":3,\"name\":\"drei\"}");
    }

    @Test
    void a_composite_key_is_captured_whole() {
        OutboxTables t = OutboxTables.create(shape(), database, "lines", "order_id int, line int, qty int,"
                + " PRIMARY KEY (order_id, line)");
        t.write("INSERT INTO $T VALUES (7, 1, 5)");

        t.write("UPDATE $T SET qty = 6");
        t.write("UPDATE $T SET line = 2");
        t.write("DELETE FROM $T");

        List<String> changes = t.capturedWithoutVersions();
        assertThat(changes.subList(0, 2)).containsExactly(
                "{\"$operation\":\"I\",\"order_id\":7,\"line\":1,\"qty\":5}",
                "{\"$operation\":\"U\",\"$changed\":[\"qty\"],\"order_id\":7,\"line\":1,\"qty\":6}");
        assertThat(changes.subList(2, 4)).containsExactlyInAnyOrder(  // one statement: two keys, one version
                "{\"$operation\":\"D\",\"order_id\":7,\"line\":1}",
                "{\"$operation\":\"I\",\"order_id\":7,\"line\":2,\"qty\":6}");
        assertThat(changes.get(4)).isEqualTo("{\"$operation\":\"D\",\"order_id\":7,\"line\":2}");
    }

    @Test
    void a_delete_captures_the_key_of_every_deleted_row() {
        OutboxTables t = items();
        t.write("INSERT INTO $T (item_code) SELECT 'K-' || g FROM generate_series(1, 3) g");

        t.write("DELETE FROM $T WHERE item_code IN ('K-1', 'K-3')");

        List<JsonNode> deletes = t.captured().subList(3, 5);
        assertThat(t.capturedWithoutVersions().subList(3, 5)).containsExactlyInAnyOrder(
                "{\"$operation\":\"D\",\"item_code\":\"K-1\"}", "{\"$operation\":\"D\",\"item_code\":\"K-3\"}");
        assertThat(deletes.get(0).get("$version")).isEqualTo(deletes.get(1).get("$version"));
    }

    @Test
    void insert_on_conflict_do_update_is_captured_as_an_update() {
        OutboxTables t = items();
        t.write("INSERT INTO $T (item_code, qty) VALUES ('A-1', 1)");

        t.write("INSERT INTO $T (item_code, qty) VALUES ('A-1', 2), ('A-2', 5)"
                + " ON CONFLICT (item_code) DO UPDATE SET qty = excluded.qty");

        assertThat(t.captured()).extracting(c -> c.get("$operation").asText() + ":" + c.get("item_code").asText()
                + ":" + c.get("qty").asInt()).containsExactlyInAnyOrder("I:A-1:1", "I:A-2:5", "U:A-1:2");
    }

    @Test
    void truncate_is_refused_with_an_error_that_says_what_to_do_by_default() {
        OutboxTables t = items();
        t.write("INSERT INTO $T (item_code) VALUES ('A-1')");

        assertThatThrownBy(() -> t.write("TRUNCATE $T"))
                .hasMessageContaining("TRUNCATE of public." + t.table + " is refused")
                .hasMessageContaining("Use DELETE");
        assertThat(t.scalar("SELECT count(*) FROM $T")).isEqualTo(1);
        assertThat(t.captured()).hasSize(1);
    }

    @Test
    void truncate_is_recorded_as_a_delete_of_every_row_when_asked() {
        OutboxTables t = OutboxTables.create(shape(), database, "items", ITEMS, b -> b.truncate(TruncatePolicy.RECORD_DELETES));
        t.write("INSERT INTO $T (item_code) SELECT 'K-' || g FROM generate_series(1, 50) g");

        t.write("TRUNCATE $T");

        List<JsonNode> deletes = t.captured().subList(50, 100);
        assertThat(deletes).allSatisfy(d -> {
            assertThat(d.get("$operation").asText()).isEqualTo("D");
            assertThat(d.size()).isEqualTo(3);
        });
        assertThat(deletes.stream().map(d -> d.get("item_code").asText()).distinct()).hasSize(50);
        assertThat(t.scalar("SELECT count(*) FROM $T")).isZero();
    }

    @Test
    void a_rolled_back_transaction_leaves_nothing_in_the_outbox() throws SQLException {
        OutboxTables t = items();
        try (Connection c = t.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("INSERT INTO public." + t.table + " (item_code) VALUES ('A-1')");
            s.execute("UPDATE public." + t.table + " SET qty = 1");
            c.rollback();
        }
        assertThat(t.captured()).isEmpty();
    }

    @Test
    void a_chosen_subset_is_captured_under_its_payload_keys_and_other_columns_do_not_count() {
        OutboxTables t = OutboxTables.create(shape(), database, "items", ITEMS, b -> b
                .columns("description", "qty")
                .payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description"));
        t.write("INSERT INTO $T VALUES ('A-1', 'Widget', 3, 9.50, NULL, NULL, NULL)");

        t.write("UPDATE $T SET price = 11");            // not captured: no change
        t.write("UPDATE $T SET description = 'Gadget'");
        t.write("DELETE FROM $T");

        assertThat(t.capturedWithoutVersions()).containsExactly(
                "{\"$operation\":\"I\",\"ItemCode\":\"A-1\",\"Description\":\"Widget\",\"qty\":3}",
                "{\"$operation\":\"U\",\"$changed\":[\"Description\"],\"ItemCode\":\"A-1\",\"Description\":\"Gadget\",\"qty\":3}",
                "{\"$operation\":\"D\",\"ItemCode\":\"A-1\"}");
    }

    @Test
    void the_json_does_not_depend_on_the_writing_sessions_settings() {
        OutboxTables t = OutboxTables.create(shape(), database, "fmt", "id int PRIMARY KEY, at timestamptz, ratio float8,"
                + " blob bytea, span interval, ats timestamptz[]");

        t.write("SET TimeZone = 'Asia/Tokyo'; SET extra_float_digits = -10; SET bytea_output = 'escape';"
                + " SET IntervalStyle = 'sql_standard';"
                + " INSERT INTO $T VALUES (1, '2026-01-02 03:04:05+00', 0.1::float8 + 0.2::float8, 'ab', '1 day 2 hours',"
                + " '{2026-01-02 03:04:05+00}')");
        // At extra_float_digits = -15 both values are written as 0.3: the change must still be seen.
        t.write("SET TimeZone = 'America/St_Johns'; SET extra_float_digits = -15; SET bytea_output = 'escape';"
                + " SET IntervalStyle = 'sql_standard'; UPDATE $T SET ratio = 0.3");

        assertThat(t.capturedWithoutVersions()).containsExactly("{\"$operation\":\"I\",\"id\":1,"
                        + "\"at\":\"2026-01-02T03:04:05+00:00\",\"ratio\":0.30000000000000004,\"blob\":\"\\\\x6162\","
                        + "\"span\":\"P1DT2H\",\"ats\":[\"2026-01-02T03:04:05+00:00\"]}",
                "{\"$operation\":\"U\",\"$changed\":[\"ratio\"],\"id\":1,"
                        + "\"at\":\"2026-01-02T03:04:05+00:00\",\"ratio\":0.3,\"blob\":\"\\\\x6162\","
                        + "\"span\":\"P1DT2H\",\"ats\":[\"2026-01-02T03:04:05+00:00\"]}");
    }

    @Test
    void a_stored_generated_column_is_captured_and_a_virtual_one_is_left_out() {
        // Virtual generated columns exist from PostgreSQL 18; an older server has the stored one only.
        String virtual = EmbeddedPostgresServer.shared().serverMajor() >= 18
                ? ", thrice int GENERATED ALWAYS AS (a * 3) VIRTUAL" : "";
        OutboxTables t = OutboxTables.create(shape(), database, "gen", "id int PRIMARY KEY, a int,"
                + " twice int GENERATED ALWAYS AS (a * 2) STORED" + virtual);

        t.write("INSERT INTO $T (id, a) VALUES (1, 5)");
        t.write("UPDATE $T SET a = 6");

        assertThat(t.capturedWithoutVersions()).containsExactly(
                "{\"$operation\":\"I\",\"id\":1,\"a\":5,\"twice\":10}",
                "{\"$operation\":\"U\",\"$changed\":[\"a\",\"twice\"],\"id\":1,\"a\":6,\"twice\":12}");
    }

    @Test
    void writers_need_no_privilege_on_the_outbox() {
        OutboxTables t = items();
        DataSource writer = database.createRole("capture_writer");
        database.execute("GRANT USAGE ON SCHEMA public TO capture_writer;"
                + " GRANT SELECT, INSERT, UPDATE, DELETE ON public." + t.table + " TO capture_writer");

        try (Connection c = writer.getConnection(); Statement s = c.createStatement()) {
            s.execute("INSERT INTO public." + t.table + " (item_code) VALUES ('A-1')");
            s.execute("UPDATE public." + t.table + " SET qty = 2");
            s.execute("DELETE FROM public." + t.table);
            assertThatThrownBy(() -> s.executeQuery("SELECT * FROM " + t.outbox.outboxTable()))
                    .hasMessageContaining("permission denied");
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
        assertThat(t.outboxOperations()).containsExactly("I", "U", "D");
    }

    @Test
    void a_transaction_notifies_once_however_many_rows_and_statements_it_changes() throws SQLException {
        OutboxTables t = items();
        try (Connection listener = t.dataSource().getConnection(); Statement l = listener.createStatement()) {
            l.execute("LISTEN tidemark");

            try (Connection c = t.dataSource().getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute("INSERT INTO public." + t.table + " (item_code) SELECT 'K-' || g FROM generate_series(1, 500) g");
                s.execute("UPDATE public." + t.table + " SET qty = 1");
                s.execute("DELETE FROM public." + t.table + " WHERE item_code < 'K-2'");
                c.commit();
                c.setAutoCommit(true);
                // The first notification cleared the wake-up flag: a reader sets it again before it waits.
                s.execute("SELECT public." + t.table + "_outbox_arm()");
                s.execute("UPDATE public." + t.table + " SET qty = 2 WHERE item_code = 'K-2'");
            }

            List<String> received = notifications(listener, 2);
            assertThat(received).containsExactly("public." + t.table + "_changes", "public." + t.table + "_changes");
        }
    }

    @Test
    void names_with_quotes_percent_signs_and_line_breaks_are_quoted_everywhere() {
        database.execute("CREATE SCHEMA \"Odd 'Schema'\"; CREATE TABLE \"Odd 'Schema'\".\"50% \"\"off\"\"\" ("
                + " \"Key\" int PRIMARY KEY, \"line\nbreak\" text, \"$dollar\" int)");
        io.tidemark.postgres.PostgresOutbox outbox = io.tidemark.postgres.PostgresOutbox
                .forTable("\"Odd 'Schema'\".\"50% \"\"off\"\"\"")
                .outboxTable("\"Odd 'Schema'\".odd_outbox")
                .payloadKey("$dollar", "dollar")
                .truncate(TruncatePolicy.REFUSE)
                .build();
        outbox.install(database.dataSource());
        String table = "\"Odd 'Schema'\".\"50% \"\"off\"\"\"";

        database.execute("INSERT INTO " + table + " VALUES (1, 'x', 2); UPDATE " + table + " SET \"line\nbreak\" = 'y'");

        assertThat(outbox.script(database.dataSource())).contains("--   captured:  Key, line?break, $dollar as dollar\n");
        assertThat(OutboxTables.call(database.dataSource(), outbox.changeFunction(), "{\"fromVersion\":0}")
                .get("Data").toString()).isEqualTo("[{\"Key\":1,\"line\\nbreak\":\"y\",\"dollar\":2}]");
        assertThatThrownBy(() -> database.execute("TRUNCATE " + table))
                .hasMessageContaining("TRUNCATE of Odd 'Schema'.50% \"off\" is refused");
    }

    @Test
    void a_deferrable_key_is_refused_at_install() {
        database.execute("CREATE TABLE public.deferred_key (id int PRIMARY KEY DEFERRABLE, name text)");

        assertThatThrownBy(() -> io.tidemark.postgres.PostgresOutbox.forTable("public.deferred_key").build()
                .install(database.dataSource()))
                .hasMessageContaining("not deferrable");
    }

    /** Collects notifications until {@code expected} arrived, then checks that no more come within a short window. */
    private static List<String> notifications(Connection listener, int expected) throws SQLException {
        PGConnection pg = listener.unwrap(PGConnection.class);
        List<String> received = new ArrayList<>();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (received.size() < expected && System.nanoTime() < deadline) {
            PGNotification[] batch = pg.getNotifications(1000);
            if (batch != null) {
                for (PGNotification n : batch) {
                    received.add(n.getParameter());
                }
            }
        }
        PGNotification[] extra = pg.getNotifications(200);
        if (extra != null) {
            for (PGNotification n : extra) {
                received.add(n.getParameter());
            }
        }
        return received;
    }

    private static long insertReturningXid(OutboxTables t, String sql) {
        try (OpenTransaction tx = OpenTransaction.begin(t.dataSource())) {
            long xid = tx.execute(sql.replace("$T", "public." + t.table)).takeXid();
            tx.commit();
            return xid;
        }
    }
}
