package io.tidemark.postgres.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.TruncatePolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What only an outbox of keys does: several changes of one key between two reads are one net change, read from the
 * row as it is; and a shape, once installed, is not changed in place.
 */
@EmbeddedPostgresTest
class KeysNetChangeTest {

    private final TestDatabase database;

    KeysNetChangeTest(TestDatabase database) {
        this.database = database;
    }

    private OutboxTables items() {
        return OutboxTables.create(CaptureShape.KEYS, database, "net", "id int PRIMARY KEY, name text, qty int");
    }

    /** Writes through the database directly: {@link OutboxTables#execute} would read after each statement. */
    private void write(OutboxTables t, String sql) {
        database.execute(sql.replace("$T", "public." + t.table));
    }

    private static List<String> withoutVersions(JsonNode answer) {
        List<String> changes = new ArrayList<>();
        answer.get("Data").forEach(c -> changes.add(OutboxTables.withoutVersion(c.toString())));
        return changes;
    }

    @Test
    void an_insert_and_updates_before_a_read_are_one_insert_of_the_row_as_it_is() {
        OutboxTables t = items();
        long from = t.seed();
        write(t, "INSERT INTO $T VALUES (1, 'a', 1)");
        write(t, "UPDATE $T SET name = 'b' WHERE id = 1");
        write(t, "UPDATE $T SET qty = 2 WHERE id = 1");

        assertThat(withoutVersions(t.sync(from))).containsExactly("{\"$operation\":\"I\",\"id\":1,\"name\":\"b\",\"qty\":2}");
        assertThat(t.scalar("SELECT count(*) FROM " + t.outbox.outboxTable())).isEqualTo(3);
    }

    /** The reader may hold the row from an early read (see the test below), so the delete is delivered. */
    @Test
    void a_row_inserted_and_deleted_before_a_read_is_one_delete_and_the_watermark_moves_past_both() {
        OutboxTables t = items();
        long from = t.seed();
        write(t, "INSERT INTO $T VALUES (1, 'a', 1)");
        write(t, "DELETE FROM $T WHERE id = 1");

        JsonNode answer = t.sync(from);

        assertThat(withoutVersions(answer)).containsExactly("{\"$operation\":\"D\",\"id\":1}");
        long version = answer.at("/Metadata/Sync/Version").asLong();
        assertThat(version).isGreaterThanOrEqualTo(t.scalar("SELECT max(version) FROM " + t.outbox.outboxTable()));
    }

    @Test
    void updates_before_a_read_are_one_update_listing_every_column_any_of_them_changed_in_payload_order() {
        OutboxTables t = items();
        write(t, "INSERT INTO $T VALUES (1, 'a', 1), (2, 'x', 1)");
        long from = t.seed();
        write(t, "UPDATE $T SET qty = 5 WHERE id = 1");
        write(t, "UPDATE $T SET name = NULL WHERE id = 1");

        assertThat(withoutVersions(t.sync(from))).containsExactly(
                "{\"$operation\":\"U\",\"$changed\":[\"name\",\"qty\"],\"id\":1,\"name\":null,\"qty\":5}");
    }

    @Test
    void a_delete_and_an_insert_of_a_key_before_a_read_are_an_update_of_every_column() {
        OutboxTables t = items();
        write(t, "INSERT INTO $T VALUES (1, 'a', 1)");
        long from = t.seed();
        write(t, "DELETE FROM $T WHERE id = 1");
        write(t, "INSERT INTO $T VALUES (1, 'a', 2)");

        assertThat(withoutVersions(t.sync(from))).containsExactly(
                "{\"$operation\":\"U\",\"$changed\":[\"name\",\"qty\"],\"id\":1,\"name\":\"a\",\"qty\":2}");
    }

    @Test
    void an_update_and_a_delete_before_a_read_are_a_delete_of_the_key() {
        OutboxTables t = items();
        write(t, "INSERT INTO $T VALUES (1, 'a', 1)");
        long from = t.seed();
        write(t, "UPDATE $T SET qty = 3 WHERE id = 1");
        write(t, "DELETE FROM $T WHERE id = 1");

        JsonNode answer = t.sync(from);

        assertThat(withoutVersions(answer)).containsExactly("{\"$operation\":\"D\",\"id\":1}");
        long firstChange = t.scalar("SELECT min(version) FROM " + t.outbox.outboxTable() + " WHERE version > " + from);
        assertThat(answer.at("/Data/0/$version").asLong()).as("the version of the key's first change in the read")
                .isEqualTo(firstChange);
    }

    /**
     * The page ends below a committed change of the same row (an older transaction holds the horizon back): the
     * read delivers the row as it is, newer than the page, and the next read delivers that change again, so the
     * reader never ends on an older state than the table's.
     */
    @Test
    void a_row_newer_than_its_page_is_delivered_early_and_again_with_its_own_version() {
        OutboxTables t = items();
        long from = t.seed();
        write(t, "INSERT INTO $T VALUES (1, 'first', 1)");
        JsonNode first;
        long heldBackVersion;
        try (OpenTransaction older = OpenTransaction.begin(t.dataSource())) {
            older.takeXid(); // holds the horizon below the next change
            write(t, "UPDATE $T SET name = 'newer' WHERE id = 1");
            heldBackVersion = t.scalar("SELECT max(version) FROM " + t.outbox.outboxTable());

            first = t.sync(from);
            assertThat(first.at("/Metadata/Sync/Version").asLong()).isLessThan(heldBackVersion);
            assertThat(withoutVersions(first)).containsExactly(
                    "{\"$operation\":\"I\",\"id\":1,\"name\":\"newer\",\"qty\":1}");
            older.commit();
        }

        JsonNode second = t.sync(first.at("/Metadata/Sync/Version").asLong());

        assertThat(withoutVersions(second)).containsExactly(
                "{\"$operation\":\"U\",\"$changed\":[\"name\"],\"id\":1,\"name\":\"newer\",\"qty\":1}");
        assertThat(second.at("/Data/0/$version").asLong()).isEqualTo(heldBackVersion)
                .isGreaterThan(first.at("/Data/0/$version").asLong());
    }

    /**
     * A read whose page ends below a re-insert (an older transaction holds the horizon back) delivers the
     * re-inserted row early; when the row is deleted before the next read, that read holds the insert and the delete
     * of the key. The reader holds the row, so the read must deliver the delete: an insert and a delete in one read
     * are "nothing to tell" only to a reader that never saw the insert, which the function cannot know.
     */
    @Test
    void a_row_delivered_early_and_deleted_before_the_next_read_is_delivered_as_a_delete() {
        OutboxTables t = items();
        write(t, "INSERT INTO $T VALUES (1, 'a', 1)");
        long from = t.seed();
        write(t, "DELETE FROM $T WHERE id = 1");
        JsonNode first;
        try (OpenTransaction older = OpenTransaction.begin(t.dataSource())) {
            older.takeXid(); // holds the horizon below the re-insert
            write(t, "INSERT INTO $T VALUES (1, 'again', 2)");

            first = t.sync(from);
            assertThat(withoutVersions(first)).as("the delete's page, with the re-inserted row read early")
                    .containsExactly("{\"$operation\":\"U\",\"$changed\":[\"name\",\"qty\"],\"id\":1,\"name\":\"again\",\"qty\":2}");
            older.commit();
        }
        write(t, "DELETE FROM $T WHERE id = 1");

        JsonNode second = t.sync(first.at("/Metadata/Sync/Version").asLong());

        assertThat(withoutVersions(second)).as("the reader holds the row: it must learn of its delete")
                .containsExactly("{\"$operation\":\"D\",\"id\":1}");
    }

    @Test
    void an_insert_a_delete_and_an_insert_of_a_new_key_before_a_read_are_one_insert_of_the_row_as_it_is() {
        OutboxTables t = items();
        long from = t.seed();
        write(t, "INSERT INTO $T VALUES (1, 'a', 1)");
        write(t, "DELETE FROM $T WHERE id = 1");
        write(t, "INSERT INTO $T VALUES (1, 'again', 2)");

        assertThat(withoutVersions(t.sync(from))).containsExactly(
                "{\"$operation\":\"I\",\"id\":1,\"name\":\"again\",\"qty\":2}");
    }

    @Test
    void an_update_of_the_key_is_a_delete_of_the_old_key_and_an_insert_of_the_new_one() {
        OutboxTables t = items();
        write(t, "INSERT INTO $T VALUES (1, 'a', 1)");
        long from = t.seed();
        write(t, "UPDATE $T SET id = 2 WHERE id = 1");

        assertThat(withoutVersions(t.sync(from))).containsExactly(
                "{\"$operation\":\"D\",\"id\":1}",
                "{\"$operation\":\"I\",\"id\":2,\"name\":\"a\",\"qty\":1}");
    }

    @Test
    void a_truncate_recorded_as_deletes_then_a_new_insert_of_a_key_is_an_update_of_it_and_deletes_of_the_rest() {
        OutboxTables t = OutboxTables.create(CaptureShape.KEYS, database, "net_trunc",
                "id int PRIMARY KEY, name text, qty int", b -> b.truncate(TruncatePolicy.RECORD_DELETES));
        write(t, "INSERT INTO $T VALUES (1, 'a', 1), (2, 'b', 1)");
        long from = t.seed();
        write(t, "TRUNCATE $T");
        write(t, "INSERT INTO $T VALUES (1, 'a', 3)");

        assertThat(withoutVersions(t.sync(from))).containsExactlyInAnyOrder(
                "{\"$operation\":\"U\",\"$changed\":[\"name\",\"qty\"],\"id\":1,\"name\":\"a\",\"qty\":3}",
                "{\"$operation\":\"D\",\"id\":2}");
    }

    /**
     * numeric 1.0 = 1.00, but a reader comparing keys by their JSON text holds a row "1.0": the update of the key
     * to 1.00 must reach it as the delete of 1.0 (first) and the insert of 1.00, as the capture recorded them.
     */
    @Test
    void a_key_equal_to_another_under_its_type_but_not_in_text_is_deleted_and_inserted() {
        OutboxTables t = OutboxTables.create(CaptureShape.KEYS, database, "net_numeric", "id numeric PRIMARY KEY, name text");
        write(t, "INSERT INTO $T VALUES (1.0, 'a')");
        long from = t.seed();
        write(t, "UPDATE $T SET id = 1.00 WHERE id = 1.0");

        // Read as text: a JSON parser would read both numbers as the same double.
        String[] data = new String[1];
        t.query("SELECT public." + t.table + "_changes('{\"fromVersion\":" + from + ",\"mode\":\"sync\"}')"
                + "->'Data'", rs -> data[0] = rs.getString(1));
        assertThat(data[0].replaceAll(",\"\\$version\":[0-9]+", "")).isEqualTo(
                "[{\"$operation\":\"D\",\"id\":1.0}, {\"$operation\":\"I\",\"id\":1.00,\"name\":\"a\"}]");
    }

    /**
     * Pending updates name their changed columns by payload key: an upgrade that renames one is refused while such
     * an update is pending (the renamed column would be missing from its $changed), and runs once none is.
     */
    @Test
    void an_upgrade_renaming_a_payload_key_is_refused_while_an_update_naming_it_is_pending() {
        database.execute("CREATE TABLE public.renamed_keys (id int PRIMARY KEY, name text, qty int)");
        PostgresOutbox before = PostgresOutbox.forTable("public.renamed_keys").capture(CaptureShape.KEYS).build();
        before.install(database.dataSource());
        database.execute("INSERT INTO public.renamed_keys VALUES (1, 'a', 1)");
        database.execute("UPDATE public.renamed_keys SET name = 'b' WHERE id = 1");
        PostgresOutbox renamed = PostgresOutbox.forTable("public.renamed_keys").capture(CaptureShape.KEYS)
                .payloadKey("name", "Name").build();

        assertThatThrownBy(() -> renamed.upgrade(database.dataSource()))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining(before.outboxTable())
                .hasMessageContaining("names the payload keys name")
                .hasMessageContaining("PostgresOutbox.trim");
        assertThat(renamed.differences(database.dataSource()))
                .anySatisfy(d -> assertThat(d.toString()).contains("payload keys"));

        database.execute("DELETE FROM " + before.outboxTable() + " WHERE operation = 'U'"); // as a trim would
        renamed.upgrade(database.dataSource());
        assertThat(renamed.differences(database.dataSource())).isEmpty();
    }

    @Test
    void install_over_an_outbox_of_the_other_shape_is_refused_and_upgrade_says_what_to_do() {
        database.execute("CREATE TABLE public.shapes (id int PRIMARY KEY, name text)");
        PostgresOutbox full = PostgresOutbox.forTable("public.shapes").build();
        PostgresOutbox keys = PostgresOutbox.forTable("public.shapes").capture(CaptureShape.KEYS).build();
        full.install(database.dataSource());

        assertThatThrownBy(() -> keys.install(database.dataSource()))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("capture shape")
                .hasMessageContaining("FULL_IMAGE")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
        assertThatThrownBy(() -> keys.upgrade(database.dataSource()))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("PostgresOutbox.uninstall")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_CHANGE_REFUSED);
        assertThat(keys.differences(database.dataSource()))
                .anySatisfy(d -> assertThat(d.toString()).contains("capture shape"));

        full.uninstall(database.dataSource());
        keys.install(database.dataSource());
        assertThat(keys.differences(database.dataSource())).isEmpty();
        assertThatThrownBy(() -> full.install(database.dataSource()))
                .hasMessageContaining("capture shape")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_DRIFT);
    }

    @Test
    void the_key_of_an_outbox_of_keys_is_not_changed_by_upgrade_nor_by_running_the_new_script() {
        database.execute("CREATE TABLE public.rekeyed (id int PRIMARY KEY, code text NOT NULL UNIQUE, name text)");
        PostgresOutbox byId = PostgresOutbox.forTable("public.rekeyed").capture(CaptureShape.KEYS).build();
        byId.install(database.dataSource());
        PostgresOutbox byCode = PostgresOutbox.forTable("public.rekeyed").key("code").columns("id", "name")
                .capture(CaptureShape.KEYS).build();

        assertThatThrownBy(() -> byCode.upgrade(database.dataSource()))
                .hasMessageContaining("does not change the key of an outbox of keys")
                .extracting(e -> ((TidemarkException) e).code()).isEqualTo(ErrorCode.SCHEMA_CHANGE_REFUSED);
        String script = byCode.script();
        assertThatThrownBy(() -> database.execute("BEGIN; " + script + " COMMIT;"))
                .hasMessageContaining("holds other key columns than the key (code)");

        // Nothing was changed: writes are still captured, by id.
        database.execute("INSERT INTO public.rekeyed VALUES (7, 'a', 'still captured by id')");
        assertThat(keyOfTheOnlyChange(byId)).isEqualTo("7");
    }

    private String keyOfTheOnlyChange(PostgresOutbox outbox) {
        List<String> keys = new ArrayList<>();
        try (var c = database.dataSource().getConnection(); var st = c.createStatement();
             var rs = st.executeQuery("SELECT key_1::text FROM " + outbox.outboxTable())) {
            while (rs.next()) {
                keys.add(rs.getString(1));
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        assertThat(keys).hasSize(1);
        return keys.get(0);
    }

    @Test
    void the_script_of_keys_run_over_a_full_image_outbox_is_refused_by_its_preflight() {
        database.execute("CREATE TABLE public.shapes_sql (id int PRIMARY KEY, name text)");
        PostgresOutbox.forTable("public.shapes_sql").build().install(database.dataSource());
        String keysScript = PostgresOutbox.forTable("public.shapes_sql").key("id").columns("name")
                .capture(CaptureShape.KEYS).build().script();

        assertThatThrownBy(() -> database.execute("BEGIN; " + keysScript + " COMMIT;"))
                .hasMessageContaining("is not a Tidemark outbox of keys (CaptureShape.KEYS)");
    }
}
