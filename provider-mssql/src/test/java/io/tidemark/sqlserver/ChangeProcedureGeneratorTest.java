package io.tidemark.sqlserver;

import io.tidemark.sync.testsupport.Golden;
import io.tidemark.sqlserver.ChangeProcedureGenerator.Level;
import io.tidemark.sqlserver.internal.SqlServerErrors;
import io.tidemark.sqlserver.internal.TSqlScript;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The generated change procedure, without a server: against golden files, and rule by rule, so that each rule of
 * the procedure contract and the Change Tracking reference is asserted on its own. The same scripts run against
 * SQL Server 2022 in {@code SqlServerEndToEndContainerTest}.
 */
class ChangeProcedureGeneratorTest {

    static ChangeProcedureGenerator items(Level level) {
        return ChangeProcedureGenerator.forTable("dbo.Items")
                .keyColumns("ItemCode")
                .columns("Description", "Assortment")
                .level(level)
                .build();
    }

    @Test
    void table_level_matches_the_golden_file() {
        Golden.assertMatches("procedure-table-level.sql", items(Level.TABLE).script());
    }

    @Test
    void column_level_matches_the_golden_file() {
        Golden.assertMatches("procedure-column-level.sql", items(Level.COLUMN).script());
    }

    @Test
    void awkward_names_are_quoted_and_escaped_everywhere() {
        ChangeProcedureGenerator generator = ChangeProcedureGenerator.forTable("[sales data].[Order Lines]")
                .keyColumns("OrderId", "Line No")
                .columns("Note's", "Price]Net", "Übersicht", "Say \"hi\" \\ bye")
                .procedure("[sales data].[get 'order' lines]")
                .level(Level.COLUMN)
                .build();
        Golden.assertMatches("procedure-awkward-names.sql", generator.script());
        String script = generator.script();
        assertThat(script)
                .contains("CREATE OR ALTER PROCEDURE [sales data].[get 'order' lines]")
                .contains("OBJECT_ID(N'[sales data].[Order Lines]')")
                .contains("t.[Price]]Net] AS [Price]]Net]")
                .contains("COLUMNPROPERTY(@objectId, N'Note''s', 'ColumnId')")
                // the JSON name is escaped for JSON, then the literal for T-SQL
                .contains("(4, N'\"Say \\\"hi\\\" \\\\ bye\"', @column4)")
                .contains("ON t.[OrderId] = ct.[OrderId] AND t.[Line No] = ct.[Line No]")
                .contains("ORDER BY ct.SYS_CHANGE_VERSION, ct.[OrderId], ct.[Line No]");
    }

    @ParameterizedTest
    @EnumSource(Level.class)
    void is_one_batch_that_creates_or_alters_the_procedure(Level level) {
        String script = items(level).script();
        List<String> batches = TSqlScript.batches(script);
        assertThat(batches).hasSize(1);
        assertThat(batches.get(0)).contains("CREATE OR ALTER PROCEDURE [dbo].[Items_changes]\n    @Json NVARCHAR(MAX)\nAS");
        assertThat(script).endsWith("END;\nGO\n");
    }

    @Nested
    class EveryRuleIsInTheText {

        @ParameterizedTest
        @EnumSource(Level.class)
        void nocount_and_xact_abort_come_first(Level level) {
            String body = body(items(level).script());
            assertThat(firstStatements(body, 2)).containsExactly("SET NOCOUNT ON;", "SET XACT_ABORT ON;");
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void version_and_rows_are_read_in_one_snapshot_transaction(Level level) {
            String script = items(level).script();
            assertInOrder(script,
                    "SET TRANSACTION ISOLATION LEVEL SNAPSHOT;",
                    "BEGIN TRANSACTION;",
                    "DECLARE @currentVersion BIGINT = CHANGE_TRACKING_CURRENT_VERSION();",
                    "CHANGE_TRACKING_MIN_VALID_VERSION(@objectId)",
                    "CHANGETABLE(CHANGES [dbo].[Items], @fromVersion)",
                    "FOR JSON PATH, WITHOUT_ARRAY_WRAPPER;\n\n    COMMIT TRANSACTION;\nEND;");
            // The current version is the first thing read in the transaction: rows newer than it wait for the
            // next call, and the filter on @toVersion keeps them out of this one.
            String afterBegin = script.substring(script.indexOf("BEGIN TRANSACTION;"));
            assertThat(afterBegin.indexOf("CHANGE_TRACKING_CURRENT_VERSION()"))
                    .isLessThan(afterBegin.indexOf("OBJECT_ID("));
            assertThat(script).contains("WHERE ct.SYS_CHANGE_VERSION <= @toVersion");
            // Every path out of the transaction commits it (seed, full, diff); errors roll it back (XACT_ABORT).
            assertThat(count(script, "COMMIT TRANSACTION;")).isEqualTo(3);
            assertThat(count(script, "BEGIN TRANSACTION;")).isEqualTo(1);
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void versions_are_bigint(Level level) {
            String script = items(level).script();
            for (String variable : List.of("@fromVersion", "@maxRows", "@currentVersion", "@minValidVersion",
                    "@toVersion", "@cut")) {
                assertThat(script).as(variable).containsPattern("DECLARE " + Pattern.quote(variable) + " BIGINT");
            }
            assertThat(script).contains("DECLARE @lastFittingVersion BIGINT, @lastVersion BIGINT;")
                    .contains("TRY_CAST(JSON_VALUE(@Json, N'$.fromVersion') AS BIGINT)")
                    .doesNotContainPattern("(?i)\\bINT\\)? *= *CHANGE_TRACKING");
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void an_aged_out_version_gets_a_full_snapshot_with_reason_code_1(Level level) {
            String full = fullBranch(items(level).script());
            assertThat(items(level).script()).contains("IF @initial = 1 OR @fromVersion < @minValidVersion\n    BEGIN");
            // A stored watermark of 0 is diffed from; only the engine's first FULL cycle ("initial": true) exports all.
            assertThat(items(level).script())
                    .contains("DECLARE @initial BIT = CASE WHEN JSON_VALUE(@Json, N'$.initial') = N'true' THEN 1 ELSE 0 END;")
                    .doesNotContain("@fromVersion = 0");
            assertThat(full)
                    .contains("N'Full' AS [Metadata.Sync.Type]")
                    .contains("CASE WHEN @initial = 1 THEN 0 ELSE 1 END AS [Metadata.Sync.ReasonCode]")
                    .contains("@currentVersion AS [Metadata.Sync.Version]")
                    .contains("FROM [dbo].[Items] AS t")
                    .doesNotContain("CHANGETABLE");
            assertThat(diffBranch(items(level).script()))
                    .contains("N'Diff' AS [Metadata.Sync.Type]")
                    .contains("0 AS [Metadata.Sync.ReasonCode]")
                    .contains("@toVersion AS [Metadata.Sync.Version]");
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void deletes_are_kept_with_a_right_outer_join_and_keys_from_changetable(Level level) {
            String diff = diffBranch(items(level).script());
            assertThat(diff)
                    .contains("FROM [dbo].[Items] AS t\n            RIGHT OUTER JOIN CHANGETABLE(CHANGES [dbo].[Items],"
                            + " @fromVersion) AS ct\n                ON t.[ItemCode] = ct.[ItemCode]")
                    .contains("ct.[ItemCode] AS [ItemCode]")
                    .doesNotContain("INNER JOIN")
                    .doesNotContainPattern("\\n\\s*JOIN CHANGETABLE\\(CHANGES \\[dbo\\]\\.\\[Items\\], @fromVersion\\)");
        }

        @Test
        void column_level_sends_an_updated_column_only_when_it_is_in_the_mask() {
            String diff = diffBranch(items(Level.COLUMN).script());
            assertThat(diff).contains("CASE WHEN ct.SYS_CHANGE_OPERATION = N'I' OR (ct.SYS_CHANGE_COLUMNS IS NULL OR"
                    + " CHANGE_TRACKING_IS_COLUMN_IN_MASK(@column1, ct.SYS_CHANGE_COLUMNS) = 1)\n"
                    + "                    THEN t.[Description] END AS [Description]");
            assertThat(items(Level.COLUMN).script())
                    .contains("DECLARE @column1 INT = COLUMNPROPERTY(@objectId, N'Description', 'ColumnId');")
                    .contains("DECLARE @column2 INT = COLUMNPROPERTY(@objectId, N'Assortment', 'ColumnId');");
        }

        @Test
        void table_level_sends_every_column() {
            String diff = diffBranch(items(Level.TABLE).script());
            assertThat(diff).contains("t.[Description] AS [Description],\n")
                    .contains("t.[Assortment] AS [Assortment],\n")
                    .doesNotContain("THEN t.[Description]");
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void updates_list_their_changed_columns_in_a_changed_array(Level level) {
            String diff = diffBranch(items(level).script());
            assertThat(diff)
                    .contains("CASE WHEN ct.SYS_CHANGE_OPERATION = N'U' THEN JSON_QUERY(N'[' + ISNULL((")
                    .contains("STRING_AGG(CAST(c.name AS NVARCHAR(MAX)), N',') WITHIN GROUP (ORDER BY c.ordinal)")
                    .contains("FROM (VALUES (1, N'\"Description\"', @column1), (2, N'\"Assortment\"', @column2))")
                    .contains("WHERE ct.SYS_CHANGE_COLUMNS IS NULL\n")
                    .contains("OR CHANGE_TRACKING_IS_COLUMN_IN_MASK(c.column_id, ct.SYS_CHANGE_COLUMNS) = 1")
                    .contains("), N'') + N']') END AS [$changed]");
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void json_is_one_document_without_null_values(Level level) {
            String script = items(level).script();
            assertThat(withoutComments(script)).doesNotContain("INCLUDE_NULL_VALUES")
                    .doesNotContain("FOR JSON AUTO");
            // Three documents (seed, full, diff), one of which runs; each with a nested Data array.
            assertThat(count(script, "FOR JSON PATH, WITHOUT_ARRAY_WRAPPER;")).isEqualTo(3);
            assertThat(count(script, "FOR JSON PATH\n")).isEqualTo(2);
            assertThat(count(script, ") AS [Data]")).isEqualTo(2);
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void full_and_diff_rows_have_the_same_shape(Level level) {
            String script = items(level).script();
            List<String> full = aliases(dataQuery(fullBranch(script)));
            List<String> diff = aliases(dataQuery(diffBranch(script)));
            assertThat(full).containsExactly("$operation", "$version", "ItemCode", "Description", "Assortment");
            // A full snapshot has no updates, so no "$changed"; everything else is identical, in the same order.
            assertThat(diff).containsExactly("$operation", "$version", "ItemCode", "Description", "Assortment",
                    "$changed");
            assertThat(aliases(envelope(fullBranch(script)))).isEqualTo(aliases(envelope(diffBranch(script))))
                    .containsExactly("Metadata.Sync.Version", "Metadata.Sync.Type", "Metadata.Sync.ReasonCode", "Data");
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void max_rows_ends_only_at_a_whole_version_that_hides_no_earlier_change(Level level) {
            String script = items(level).script();
            assertThat(script)
                    .contains("DECLARE @maxRows BIGINT = TRY_CAST(JSON_VALUE(@Json, N'$.maxRows') AS BIGINT);")
                    .contains("IF @maxRows > 0")
                    // whole versions only: rows are counted per version, cumulatively
                    .contains("GROUP BY ct.SYS_CHANGE_VERSION")
                    .contains("SUM(COUNT_BIG(*)) OVER (ORDER BY ct.SYS_CHANGE_VERSION ROWS UNBOUNDED PRECEDING) AS rows_through")
                    // the first version is always taken whole, so a call always makes progress
                    .contains("MAX(CASE WHEN v.rows_through <= @maxRows OR v.rows_before = 0 THEN v.change_version END)")
                    // no cut where a row left for later would be described relative to the cut
                    .contains("JOIN CHANGETABLE(CHANGES [dbo].[Items], @cut) AS later")
                    .contains("later.SYS_CHANGE_OPERATION <> ct.SYS_CHANGE_OPERATION")
                    .contains("SET @toVersion = @cut;")
                    // the version reported is the end of what is returned
                    .contains("WHERE ct.SYS_CHANGE_VERSION <= @toVersion")
                    .contains("@toVersion AS [Metadata.Sync.Version]");
            assertThat(count(script, "CHANGE_TRACKING_IS_COLUMN_IN_MASK(@column1, later.SYS_CHANGE_COLUMNS)"))
                    .isEqualTo(1);
            assertThat(count(script, "CHANGE_TRACKING_IS_COLUMN_IN_MASK(@column2, later.SYS_CHANGE_COLUMNS)"))
                    .isEqualTo(1);
            assertThat(fullBranch(script)).doesNotContain("@maxRows");
        }

        @ParameterizedTest
        @EnumSource(Level.class)
        void failures_are_thrown_with_the_numbers_the_provider_maps(Level level) {
            String script = items(level).script();
            assertThat(script)
                    .contains("IF @fromVersion IS NULL OR @fromVersion < 0\n        THROW "
                            + SqlServerErrors.GENERATED_BAD_REQUEST + ", ")
                    .contains("IF @currentVersion IS NULL\n        THROW "
                            + SqlServerErrors.GENERATED_DATABASE_NOT_TRACKED + ", ")
                    .contains("IF @minValidVersion IS NULL\n    BEGIN\n")
                    .contains("IF HAS_PERMS_BY_NAME(N'[dbo].[Items]', N'OBJECT', N'VIEW CHANGE TRACKING') = 1\n"
                            + "            THROW " + SqlServerErrors.GENERATED_TABLE_NOT_TRACKED + ", ")
                    .contains("        THROW " + SqlServerErrors.GENERATED_NO_VIEW_CHANGE_TRACKING + ", N'Tidemark: the"
                            + " caller lacks VIEW CHANGE TRACKING on table [dbo].[Items]")
                    .contains("IF @column1 IS NULL\n        THROW " + SqlServerErrors.GENERATED_COLUMN_MISSING + ", ")
                    .contains("IF @column2 IS NULL\n        THROW " + SqlServerErrors.GENERATED_COLUMN_MISSING + ", ");
        }

        @Test
        void a_seed_request_returns_the_current_version_and_no_rows() {
            String script = items(Level.TABLE).script();
            String seed = script.substring(script.indexOf("IF @mode = N'seed'"), script.indexOf("IF @initial = 1 OR"));
            assertThat(seed).contains("@currentVersion AS [Metadata.Sync.Version]").doesNotContain("[Data]");
        }
    }

    @Test
    void a_table_without_other_columns_sends_keys_only() {
        String script = ChangeProcedureGenerator.forTable("tags").keyColumns("Tag").build().script();
        assertThat(script).contains("CREATE OR ALTER PROCEDURE [dbo].[tags_changes]")
                .doesNotContain("$changed]")
                .doesNotContain("COLUMNPROPERTY")
                .contains("AND (later.SYS_CHANGE_OPERATION <> ct.SYS_CHANGE_OPERATION)");
    }

    @Test
    void names_default_to_the_dbo_schema_and_a_changes_suffix() {
        ChangeProcedureGenerator generator = ChangeProcedureGenerator.forTable("Items").keyColumns("Id").build();
        assertThat(generator.tableName()).isEqualTo("[dbo].[Items]");
        assertThat(generator.procedureName()).isEqualTo("[dbo].[Items_changes]");
        assertThat(ChangeProcedureGenerator.forTable("sales.Items").keyColumns("Id").procedure("get_changes").build()
                .procedureName()).isEqualTo("[sales].[get_changes]");
        assertThat(generator.level()).isEqualTo(Level.TABLE);
    }

    @Test
    void the_tracked_object_calls_the_procedure_and_names_the_table() {
        TrackedObject object = items(Level.COLUMN).trackedObject("Items");
        assertThat(object.name()).isEqualTo("Items");
        assertThat(object.procedure()).isEqualTo("[dbo].[Items_changes]");
        assertThat(object.table()).contains("[dbo].[Items]");
    }

    @Test
    void refuses_what_would_make_a_wrong_procedure() {
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items").columns("A"), ErrorCode.INVALID_CONFIGURATION,
                "needs the key columns of [dbo].[Items]");
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id").columns("a.b"),
                ErrorCode.INVALID_CONFIGURATION, "contains a '.', which FOR JSON PATH turns into a nested object");
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id").columns("$version"),
                ErrorCode.INVALID_CONFIGURATION, "reserves for its own keys");
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id").columns("ID"),
                ErrorCode.INVALID_CONFIGURATION, "listed twice");
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id").columns("x", "X"),
                ErrorCode.INVALID_CONFIGURATION, "listed twice");
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id").columns("line\nbreak"),
                ErrorCode.INVALID_CONFIGURATION, "control character");
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id").columns("c".repeat(129)),
                ErrorCode.INVALID_CONFIGURATION, "SQL Server allows 128");
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items; DROP TABLE x").keyColumns("Id"),
                ErrorCode.INVALID_CONFIGURATION, "Refusing the table name");
        assertRefused(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id").procedure("a.b.c"),
                ErrorCode.INVALID_CONFIGURATION, "more than two parts");
        assertRefused(ChangeProcedureGenerator.forTable("dbo." + "t".repeat(121)).keyColumns("Id"),
                ErrorCode.INVALID_CONFIGURATION, "SQL Server allows 128");
        assertThatThrownBy(() -> ChangeProcedureGenerator.forTable("t").keyColumns((String[]) null).build())
                .hasMessageContaining("keyColumns must not be null");
        assertThatThrownBy(() -> ChangeProcedureGenerator.forTable("t").keyColumns("Id").columns("a", null).build())
                .hasMessageContaining("columns must not contain null");
    }

    /** Setters only store: build() reports every bad value at once, nulls included. */
    @Test
    void every_problem_is_reported_by_build() {
        ChangeProcedureGenerator.Builder builder = ChangeProcedureGenerator.forTable("dbo.Items")
                .keyColumns((String[]) null).columns("a.b", "$version", "x", "X", null).procedure("a.b.c").level(null);
        assertThatThrownBy(builder::build)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageStartingWith("ChangeProcedureGenerator for dbo.Items has 4 configuration problems:")
                .hasMessageContaining("more than two parts")
                .hasMessageContaining("level must not be null")
                .hasMessageContaining("keyColumns must not be null")
                .hasMessageContaining("columns must not contain null");
        assertThatThrownBy(ChangeProcedureGenerator.forTable("dbo.Items").keyColumns("Id")
                .columns("a.b", "$version", "x", "X")::build)
                .hasMessageStartingWith("ChangeProcedureGenerator for dbo.Items has 3 configuration problems:")
                .hasMessageContaining("contains a '.'")
                .hasMessageContaining("reserves for its own keys")
                .hasMessageContaining("the column 'X' is listed twice");
    }

    private static void assertRefused(ChangeProcedureGenerator.Builder builder, ErrorCode code, String message) {
        assertThatThrownBy(builder::build)
                .isInstanceOf(TidemarkException.class)
                .hasMessageContaining(message)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(code));
    }

    // --- reading the generated text -------------------------------------------------------------------

    static String body(String script) {
        return script.substring(script.indexOf("\nBEGIN\n") + "\nBEGIN\n".length());
    }

    static List<String> firstStatements(String body, int n) {
        List<String> statements = new ArrayList<>();
        for (String line : body.split("\n")) {
            String s = line.strip();
            if (!s.isEmpty() && !s.startsWith("--")) {
                statements.add(s);
                if (statements.size() == n) {
                    break;
                }
            }
        }
        return statements;
    }

    static String fullBranch(String script) {
        int start = script.indexOf("IF @initial = 1 OR @fromVersion < @minValidVersion");
        return script.substring(start, script.indexOf("RETURN;", start));
    }

    static String diffBranch(String script) {
        return script.substring(script.indexOf("DECLARE @toVersion BIGINT"));
    }

    /** The SELECT inside {@code ( ... ) AS [Data]}. */
    static String dataQuery(String branch) {
        int open = branch.indexOf("(\n", branch.indexOf("AS [Metadata.Sync.ReasonCode]"));
        return branch.substring(open, branch.indexOf(") AS [Data]"));
    }

    /** The outer SELECT with the Data subquery blanked out. */
    static String envelope(String branch) {
        int start = branch.lastIndexOf("SELECT\n", branch.indexOf("AS [Metadata.Sync.Version]"));
        String select = branch.substring(start, branch.indexOf("FOR JSON PATH, WITHOUT_ARRAY_WRAPPER;"));
        return select.replace(dataQuery(branch), "(...)");
    }

    /** The {@code AS [alias]} names of the outermost select list, in order (nested subqueries excluded). */
    static List<String> aliases(String select) {
        List<String> aliases = new ArrayList<>();
        int depth = 0;
        StringBuilder flat = new StringBuilder();
        for (char c : select.toCharArray()) {
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            }
            flat.append(depth > 1 ? ' ' : c);
        }
        Matcher m = Pattern.compile("AS \\[([^\\]]+)\\]").matcher(flat);
        while (m.find()) {
            aliases.add(m.group(1));
        }
        return aliases;
    }

    /** The script without its comment lines (every comment the generator writes is a whole line). */
    static String withoutComments(String script) {
        return script.replaceAll("(?m)^\\s*--.*\\R", "");
    }

    static void assertInOrder(String text, String... parts) {
        int at = 0;
        for (String part : parts) {
            int found = text.indexOf(part, at);
            assertThat(found).as("'%s' after position %d", part, at).isGreaterThanOrEqualTo(0);
            at = found + part.length();
        }
    }

    static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + part.length())) {
            n++;
        }
        return n;
    }
}
