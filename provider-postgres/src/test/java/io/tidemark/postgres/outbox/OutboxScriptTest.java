package io.tidemark.postgres.outbox;

import io.tidemark.sync.testsupport.Golden;
import io.tidemark.postgres.CaptureShape;
import io.tidemark.postgres.PostgresOutbox;
import io.tidemark.postgres.TruncatePolicy;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.sql.Connection;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The generated SQL, compared with reviewed golden files and then executed on the real server the way a migration
 * tool would run it. After an intended change to the generator, regenerate the files with
 * {@code -Dtidemark.golden.update=true} and review the diff.
 */
@EmbeddedPostgresTest
class OutboxScriptTest {

    private final TestDatabase database;

    OutboxScriptTest(TestDatabase database) {
        this.database = database;
    }

    /** The reference's items table, with the columns named as a .NET application would send them. */
    private static PostgresOutbox declaredItems() {
        return PostgresOutbox.forTable("sales.items")
                .key("item_code")
                .columns("description", "attrs")
                .payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description")
                .payloadKey("attrs", "Attributes")
                .build();
    }

    @Test
    void the_script_of_a_declared_outbox_matches_its_golden_file() throws IOException {
        Golden.assertMatches("outbox/sales_items.sql", declaredItems().script());
    }

    @Test
    void the_script_read_from_the_catalog_matches_its_golden_file() throws IOException {
        database.execute("CREATE TABLE public.\"Order Lines\" (order_id bigint, line int, sku text NOT NULL,"
                + " qty int, PRIMARY KEY (order_id, line))");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.\"Order Lines\"")
                .outboxTable("public.order_lines_outbox")
                .changeFunction("public.order_lines_changes")
                .truncate(TruncatePolicy.RECORD_DELETES)
                .notifications(false)
                .build();

        Golden.assertMatches("outbox/order_lines.sql", outbox.script(database.dataSource()));
    }

    @Test
    void the_golden_script_runs_as_a_migration_tool_would_run_it_and_captures_changes() throws Exception {
        database.execute("CREATE SCHEMA IF NOT EXISTS sales; CREATE TABLE sales.items (item_code text PRIMARY KEY,"
                + " description text, attrs json, price numeric)");
        String script = Golden.read("outbox/sales_items.sql");

        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute(script);
            c.commit();
            c.setAutoCommit(true);
            s.execute("INSERT INTO sales.items VALUES ('A-1', 'Widget', '{\"x\": 1}', 2)");
            s.execute("UPDATE sales.items SET description = NULL");
            s.execute("UPDATE sales.items SET price = 3"); // not captured
        }

        String data = OutboxTables.call(database.dataSource(), "sales.items_changes",
                "{\"fromVersion\":" + trimmedThrough("sales.items_outbox_state") + ",\"mode\":\"sync\"}").get("Data").toString();
        assertThat(data.replaceAll("\"\\$version\":[0-9]+,", "")).isEqualTo("[{\"$operation\":\"I\",\"ItemCode\":\"A-1\","
                + "\"Description\":\"Widget\",\"Attributes\":{\"x\":1}},{\"$operation\":\"U\",\"$changed\":[\"Description\"],"
                + "\"ItemCode\":\"A-1\",\"Description\":null,\"Attributes\":{\"x\":1}}]");
    }

    @Test
    void the_script_of_an_outbox_of_keys_matches_its_golden_file() throws IOException {
        Golden.assertMatches("outbox/sales_items_keys.sql", PostgresOutbox.forTable("sales.items_k")
                .key("item_code")
                .columns("description", "attrs")
                .payloadKey("item_code", "ItemCode")
                .payloadKey("description", "Description")
                .payloadKey("attrs", "Attributes")
                .capture(CaptureShape.KEYS)
                .build().script());
    }

    @Test
    void the_script_of_an_outbox_of_keys_read_from_the_catalog_matches_its_golden_file() throws IOException {
        database.execute("CREATE TABLE public.\"Order Lines K\" (order_id bigint, line int, sku text NOT NULL,"
                + " qty int, PRIMARY KEY (order_id, line))");
        PostgresOutbox outbox = PostgresOutbox.forTable("public.\"Order Lines K\"")
                .outboxTable("public.order_lines_k_outbox")
                .changeFunction("public.order_lines_k_changes")
                .truncate(TruncatePolicy.RECORD_DELETES)
                .notifications(false)
                .capture(CaptureShape.KEYS)
                .build();

        Golden.assertMatches("outbox/order_lines_keys.sql", outbox.script(database.dataSource()));
    }

    @Test
    void the_golden_script_of_keys_runs_as_a_migration_tool_would_run_it_and_captures_changes() throws Exception {
        database.execute("CREATE SCHEMA IF NOT EXISTS sales; CREATE TABLE sales.items_k (item_code text PRIMARY KEY,"
                + " description text, attrs json, price numeric)");
        String script = Golden.read("outbox/sales_items_keys.sql");

        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute(script);
            s.execute(script); // running it again is harmless
            c.commit();
            c.setAutoCommit(true);
            s.execute("INSERT INTO sales.items_k VALUES ('A-1', 'Widget', '{\"x\": 1}', 2), ('A-2', 'Gadget', NULL, 1)");
            s.execute("UPDATE sales.items_k SET description = NULL WHERE item_code = 'A-1'");
            s.execute("UPDATE sales.items_k SET price = 3"); // not captured
            s.execute("DELETE FROM sales.items_k WHERE item_code = 'A-2'");
        }

        String data = OutboxTables.call(database.dataSource(), "sales.items_k_changes",
                "{\"fromVersion\":" + trimmedThrough("sales.items_k_outbox_state") + ",\"mode\":\"sync\"}").get("Data").toString();
        assertThat(data.replaceAll("\"\\$version\":[0-9]+,", "")).isEqualTo("[{\"$operation\":\"I\",\"ItemCode\":\"A-1\","
                + "\"Description\":null,\"Attributes\":{\"x\":1}},{\"$operation\":\"D\",\"ItemCode\":\"A-2\"}]");
    }

    @Test
    void script_without_a_database_needs_the_key_and_the_columns() {
        assertThatThrownBy(() -> PostgresOutbox.forTable("public.items").build().script())
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("declare both with key(...) and columns(...), or call script(dataSource)");
    }

    @Test
    void names_are_validated_at_build() {
        String long63 = "t".repeat(60);
        assertThat(code(() -> PostgresOutbox.forTable("public." + long63).build())).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(PostgresOutbox.forTable("public." + long63).outboxTable("public.short_outbox")
                .changeFunction("public.short_changes").build().outboxTable()).isEqualTo("public.short_outbox");
        assertThat(code(() -> PostgresOutbox.forTable("public.items; DROP TABLE x").build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").build().table())).isNull();
        assertThat(PostgresOutbox.forTable("Items").build().changeFunction()).isEqualTo("public.items_changes");
        assertThat(PostgresOutbox.forTable("\"Sales\".\"Items\"").build().outboxTable()).isEqualTo("\"Sales\".\"Items_outbox\"");
    }

    @Test
    void configuration_is_validated_at_build() {
        assertThat(code(() -> PostgresOutbox.forTable("items").columns("a", "a").build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").payloadKey("a", "$version").build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").key("id").columns("a").payloadKey("b", "B").build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").key("id").columns("a").payloadKey("a", "id").build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").key().build())).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").notifyChannel(null).build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").notifyChannel("c".repeat(64)).build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").trimBatchSize(0).build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").trimMargin(-1).build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").truncate(null).build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
        assertThat(code(() -> PostgresOutbox.forTable("items").outboxTable("public.items").build()))
                .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
    }

    /** Setters only store: build() reports every bad value at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        PostgresOutbox.Builder builder = PostgresOutbox.forTable("items").key((String[]) null).columns("a", "a")
                .payloadKey("b", "$b").truncate(null).notifyChannel(null).trimMargin(-1).trimBatchSize(0);
        assertThatThrownBy(builder::build)
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("[outbox items] has 8 configuration problems:")
                .hasMessageContaining("key names a null column")
                .hasMessageContaining("columns(...) names a column twice: [a, a]")
                .hasMessageContaining("payload key \"$b\" starts with '$'")
                .hasMessageContaining("payloadKey names column \"b\", which is not captured")
                .hasMessageContaining("truncate policy must not be null")
                .hasMessageContaining("notifyChannel must not be null")
                .hasMessageContaining("trimMargin must not be negative, got -1")
                .hasMessageContaining("trimBatchSize must be at least 1, got 0");
    }

    private long trimmedThrough(String stateTable) throws Exception {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement();
             var rs = s.executeQuery("SELECT trimmed_through FROM " + stateTable)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static ErrorCode code(Runnable action) {
        try {
            action.run();
            return null;
        } catch (TidemarkException e) {
            return e.code();
        }
    }
}
