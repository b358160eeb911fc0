package io.tidemark.sync.internal.store;

import io.tidemark.sync.testsupport.Golden;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The SQL Server store SQL, checked without a server against a golden file. The same SQL runs against a real
 * SQL Server in the provider module's container tests ({@code SqlServerStoreContainerTest}).
 *
 * <p>To accept a deliberate change, run with {@code -Dtidemark.golden.update=true} and review the diff.
 */
class SqlServerStoreDialectTest {

    @Test
    void generated_sql_matches_the_golden_file() {
        StoreDialect dialect = StoreDialect.forProduct("Microsoft SQL Server", "tidemark", "sync_state", "dead_letters");
        Golden.assertMatches("sqlserver-store.sql", render(dialect));
    }

    @Test
    void detects_sql_server_by_the_product_name_of_mssql_jdbc() {
        assertThat(StoreDialect.forProduct("Microsoft SQL Server", "tidemark", "s", "d"))
                .isInstanceOf(SqlServerStoreDialect.class);
        assertThat(StoreDialect.forProduct("PostgreSQL", "tidemark", "s", "d"))
                .isInstanceOf(PostgresStoreDialect.class);
        assertThatThrownBy(() -> StoreDialect.forProduct("MySQL", "tidemark", "s", "d"))
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining("support PostgreSQL and SQL Server; this database is 'MySQL'");
    }

    @Test
    void names_are_bracket_quoted_and_escaped_everywhere() {
        SqlServerStoreDialect dialect = new SqlServerStoreDialect("ops]x", "state's", "letters");
        assertThat(dialect.selectState()).contains("FROM [ops]]x].[state's]\n");
        assertThat(dialect.advanceFromNothing()).startsWith("MERGE [ops]]x].[state's] WITH (HOLDLOCK) AS s");
        assertThat(dialect.adoptSource()).startsWith("UPDATE [ops]]x].[state's]\n");
        assertThat(dialect.deadLetters().insert()).startsWith("INSERT INTO [ops]]x].[letters] (");
        // Inside a literal the quote is doubled too, so the script's dynamic CREATE SCHEMA stays one literal.
        assertThat(dialect.createScript())
                .contains("IF SCHEMA_ID(N'ops]x') IS NULL")
                .contains("EXEC (N'CREATE SCHEMA [ops]]x]');")
                .contains("IF OBJECT_ID(N'[ops]]x].[state''s]', N'U') IS NULL")
                .contains("IF COL_LENGTH(N'[ops]]x].[state''s]', N'source_identity') IS NULL\n"
                        + "    ALTER TABLE [ops]]x].[state's] ADD source_identity NVARCHAR(1000)"
                        + " COLLATE Latin1_General_100_BIN2 NULL;");
    }

    @Test
    void refuses_unsafe_or_overlong_names() {
        assertThatThrownBy(() -> new SqlServerStoreDialect("tide\nmark", "s", "d"))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER));
        assertThatThrownBy(() -> new SqlServerStoreDialect("tidemark", "t".repeat(129), "d"))
                .hasMessageContaining("SQL Server allows 128");
    }

    @Test
    void an_index_name_longer_than_128_characters_is_cut() {
        String table = "d".repeat(128);
        String index = "[" + table.substring(0, 128 - "_order_idx".length()) + "_order_idx]";
        assertThat(new SqlServerStoreDialect("tidemark", "s", table).createScript()).contains("CREATE INDEX " + index);
    }

    @Test
    void version_writes_are_compare_and_set_and_never_regress() {
        StoreDialect dialect = new SqlServerStoreDialect("tidemark", "sync_state", "dead_letters");
        assertThat(dialect.advanceFrom())
                .contains("WHERE object_name = :name AND version = :expected AND version <= :version\n"
                        + "   AND (source_identity IS NULL OR source_identity = :source)");
        assertThat(dialect.advanceFromNothing())
                .contains("WHEN MATCHED AND s.version IS NULL THEN UPDATE")
                .contains("source_identity = :source")
                .doesNotContain("WHEN MATCHED THEN");
    }

    @Test
    void the_source_is_kept_by_polls_and_pauses_and_forgotten_by_a_reset() {
        StoreDialect dialect = new SqlServerStoreDialect("tidemark", "sync_state", "dead_letters");
        assertThat(dialect.selectState()).contains("source_identity");
        assertThat(dialect.recordPoll()).doesNotContain("source_identity");
        assertThat(dialect.setPaused()).doesNotContain("source_identity");
        assertThat(dialect.reset()).contains("source_identity = NULL");
        assertThat(dialect.adoptSource()).contains("SET source_identity = :source")
                .contains("WHERE object_name = :name AND version IS NOT NULL");
    }

    /** Every statement of the dialect, in a fixed order, as one document. */
    static String render(StoreDialect dialect) {
        return "-- createScript()\n" + dialect.createScript()
                + "\n-- selectState()\n" + dialect.selectState()
                + "\n\n-- selectAllStates()\n" + dialect.selectAllStates()
                + "\n\n-- advanceFromNothing()\n" + dialect.advanceFromNothing()
                + "\n\n-- advanceFrom()\n" + dialect.advanceFrom()
                + "\n\n-- recordPoll()\n" + dialect.recordPoll()
                + "\n\n-- setPaused()\n" + dialect.setPaused()
                + "\n\n-- adoptSource()\n" + dialect.adoptSource()
                + "\n\n-- reset()\n" + dialect.reset()
                + "\n\n-- selectPositions()\n" + dialect.selectPositions()
                + "\n\n-- selectAllPositions()\n" + dialect.selectAllPositions()
                + dialect.selectStateWithPositions().map(sql -> "\n\n-- selectStateWithPositions()\n" + sql).orElse("")
                + "\n\n-- insertPosition()\n" + dialect.insertPosition()
                + "\n\n-- advancePosition()\n" + dialect.advancePosition()
                + dialect.advanceInOneStatement().map(sql -> "\n\n-- advanceInOneStatement()\n" + sql).orElse("")
                + "\n\n-- setDestinationPaused()\n" + dialect.setDestinationPaused()
                + "\n\n-- resetPositions()\n" + dialect.resetPositions()
                + "\n";
    }
}
