package io.tidemark.destinations.jdbc.internal;

import io.tidemark.sync.testsupport.Golden;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Every statement of both dialects against reviewed golden files; no server needed. */
class JdbcTableDialectGoldenTest {

    private static TableMapping mapping(TableDialect dialect, String table, String stateSchema) {
        var target = dialect.table(table, "target table");
        String schema = stateSchema == null ? target.schema().orElseThrow() : stateSchema;
        return new TableMapping(target, dialect.inSchema(schema, "tidemark_destination_position"),
                dialect.inSchema(schema, "tidemark_destination_stage"), List.of(
                new Column("order_id", dialect.quoteColumn("order_id"), "orderId", true),
                new Column("line", dialect.quoteColumn("line"), "line", true),
                new Column("Product Name", dialect.quoteColumn("Product Name"), "product", false),
                new Column("qty", dialect.quoteColumn("qty"), "qty", false),
                new Column("price", dialect.quoteColumn("price"), "price", false)));
    }

    @Test
    void postgres_statements_and_script() {
        PostgresTableDialect pg = new PostgresTableDialect();
        TableMapping m = mapping(pg, "Sales.\"Order Lines\"", null);
        Golden.assertMatches("jdbc/postgres-statements.sql", pg.statements(m));
        Golden.assertMatches("jdbc/postgres-script.sql", pg.createScript(m));
    }

    @Test
    void sqlserver_statements_and_script() {
        SqlServerTableDialect ms = new SqlServerTableDialect();
        TableMapping m = mapping(ms, "sales.[Order Lines]", "tidemark");
        Golden.assertMatches("jdbc/sqlserver-statements.sql", ms.statements(m));
        Golden.assertMatches("jdbc/sqlserver-script.sql", ms.createScript(m));
    }

    @Test
    void names_are_quoted_so_an_embedded_quote_cannot_end_the_identifier() {
        assertThat(new PostgresTableDialect().quoteColumn("a\"b")).isEqualTo("\"a\"\"b\"");
        assertThat(new SqlServerTableDialect().quoteColumn("a]b")).isEqualTo("[a]]b]");
        assertThat(new PostgresTableDialect().table("Items", "t").quoted()).isEqualTo("\"public\".\"items\"");
        assertThat(new SqlServerTableDialect().table("Items", "t").quoted()).isEqualTo("[dbo].[Items]");
    }

    @Test
    void rows_per_statement_stay_under_each_database_s_parameter_limit() {
        assertThat(new PostgresTableDialect().rowsPerStatement(5)).isEqualTo(TableDialect.ROWS_PER_STATEMENT);
        assertThat(new SqlServerTableDialect().rowsPerStatement(5)).isEqualTo(TableDialect.ROWS_PER_STATEMENT);
        assertThat(new SqlServerTableDialect().rowsPerStatement(30)).isEqualTo(66); // 66 * 30 = 1980 < 2100
        assertThat(new SqlServerTableDialect().rowsPerStatement(3000)).isEqualTo(1);
    }

    @Test
    void a_key_only_mapping_inserts_or_does_nothing() {
        PostgresTableDialect pg = new PostgresTableDialect();
        var t = pg.table("s.tags", "t");
        TableMapping m = new TableMapping(t, pg.inSchema("s", "p"), pg.inSchema("s", "st"),
                List.of(new Column("tag", "\"tag\"", "tag", true)));
        assertThat(pg.upsert(m, "1", 1)).endsWith("ON CONFLICT (\"tag\") DO NOTHING");
        SqlServerTableDialect ms = new SqlServerTableDialect();
        TableMapping mm = new TableMapping(ms.table("s.tags", "t"), ms.inSchema("s", "p"), ms.inSchema("s", "st"),
                List.of(new Column("tag", "[tag]", "tag", true)));
        assertThat(ms.upsert(mm, "1", 1)).doesNotContain("WHEN MATCHED").contains("WHEN NOT MATCHED THEN INSERT ([tag])");
    }
}
