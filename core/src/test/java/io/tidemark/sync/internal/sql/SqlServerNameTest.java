package io.tidemark.sync.internal.sql;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SqlServerNameTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "get_changes                 | [get_changes]",
            "dbo.get_changes             | [dbo].[get_changes]",
            "[dbo].[get changes]         | [dbo].[get changes]",
            "[sales data].Items          | [sales data].[Items]",
            "dbo.[a]]b]                  | [dbo].[a]]b]",
            "[x]]]]y].z                  | [x]]]]y].[z]",
            "dbo.[semi;colon--]          | [dbo].[semi;colon--]",
            "dbo.[it's]                  | [dbo].[it's]",
            "dbo.[dotted.name]           | [dbo].[dotted.name]",
            "_private.t$1#x@y            | [_private].[t$1#x@y]",
            "dbo.Bestellübersicht        | [dbo].[Bestellübersicht]",
            "dbo.[\"quoted\"]            | [dbo].[\"quoted\"]",
    })
    void parses_and_renders_bracketed(String text, String quoted) {
        assertThat(SqlServerName.parse(text, "procedure").quoted()).isEqualTo(quoted);
    }

    @Test
    void surrounding_whitespace_is_ignored() {
        assertThat(SqlServerName.parse("  dbo.GetItemChanges \t", "procedure").quoted())
                .isEqualTo("[dbo].[GetItemChanges]");
    }

    @Test
    void keeps_case_as_written_because_sql_server_does_not_fold_it() {
        SqlServerName name = SqlServerName.parse("Sales.GetItemChanges", "procedure");
        assertThat(name.schema()).contains("Sales");
        assertThat(name.name()).isEqualTo("GetItemChanges");
        assertThat(name).hasToString("Sales.GetItemChanges");
    }

    @Test
    void unescapes_doubled_closing_brackets_into_the_part() {
        SqlServerName name = SqlServerName.parse("[a]]b].[c]]]", "table");
        assertThat(name.schema()).contains("a]b");
        assertThat(name.name()).isEqualTo("c]");
        assertThat(SqlServerName.parse(name.quoted(), "table")).isEqualTo(name);
    }

    @Test
    void a_name_without_schema_stays_unqualified_until_a_default_is_given() {
        SqlServerName name = SqlServerName.parse("Items", "table");
        assertThat(name.schema()).isEmpty();
        assertThat(name.quoted()).isEqualTo("[Items]");
        assertThat(name.withDefaultSchema("dbo").quoted()).isEqualTo("[dbo].[Items]");
        assertThat(SqlServerName.parse("sales.Items", "table").withDefaultSchema("dbo").quoted())
                .isEqualTo("[sales].[Items]");
    }

    @ParameterizedTest(name = "refuses \"{0}\"")
    @ValueSource(strings = {
            "dbo.get_changes; DROP TABLE x",
            "dbo.get changes",
            "db.dbo.get_changes",
            "srv.db.dbo.p",
            "dbo.",
            ".p",
            "dbo..p",
            "[dbo",
            "[dbo].[p",
            "[dbo]x.p",
            "1p",
            "dbo.1p",
            "@p",
            "#temp_proc",
            "dbo.p'--",
            "dbo.\"p\"",
            "dbo.p()",
            "[]",
            "[   ]",
            "dbo.[a\u0000b]",
            "dbo.[a\nb]",
    })
    void refuses_what_is_not_a_safe_name(String text) {
        assertThatThrownBy(() -> SqlServerName.parse(text, "procedure"))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER));
    }

    @Test
    void the_refusal_says_why_and_how_to_write_the_name() {
        assertThatThrownBy(() -> SqlServerName.parse("dbo.get changes", "procedure"))
                .hasMessageContaining("Refusing the procedure name 'dbo.get changes'")
                .hasMessageContaining("bracket it, [like this]");
        assertThatThrownBy(() -> SqlServerName.parse("a.b.c", "table"))
                .hasMessageContaining("more than two parts");
        assertThatThrownBy(() -> SqlServerName.parse("[dbo", "table"))
                .hasMessageContaining("bracket is not closed");
        assertThatThrownBy(() -> SqlServerName.parse("  ", "table"))
                .hasMessage("The table name is empty");
        assertThatThrownBy(() -> SqlServerName.parse(null, "table"))
                .hasMessage("The table name is empty");
    }

    @Test
    void accepts_128_characters_and_refuses_129() {
        String longest = "p".repeat(SqlServerName.MAX_IDENTIFIER_LENGTH);
        assertThat(SqlServerName.parse("dbo." + longest, "procedure").name()).hasSize(128);
        assertThat(SqlServerName.parse("[" + longest + "]", "procedure").name()).hasSize(128);
        assertThatThrownBy(() -> SqlServerName.parse("dbo." + longest + "p", "procedure"))
                .hasMessageContaining("129 characters long; SQL Server allows 128");
        assertThatThrownBy(() -> SqlServerName.parse("[" + longest + "]]]", "procedure"))
                .hasMessageContaining("129 characters long");
    }

    @Test
    void resolved_parts_are_checked_but_not_parsed() {
        assertThat(SqlServerName.of("my schema", "a.b").quoted()).isEqualTo("[my schema].[a.b]");
        assertThat(SqlServerName.of(null, "t").quoted()).isEqualTo("[t]");
        assertThatThrownBy(() -> SqlServerName.of("dbo", "")).hasMessage("The object name is empty");
        assertThatThrownBy(() -> SqlServerName.checkPart("a\tb", "column"))
                .hasMessageContaining("control character");
    }

    @Test
    void literals_are_unicode_and_double_single_quotes() {
        assertThat(SqlServerName.literal("it's")).isEqualTo("N'it''s'");
        assertThat(SqlServerName.literal("[dbo].[Items]")).isEqualTo("N'[dbo].[Items]'");
        assertThat(SqlServerName.literal("Übersicht")).isEqualTo("N'Übersicht'");
        assertThatThrownBy(() -> SqlServerName.literal("a\0b")).hasMessageContaining("NUL");
    }

    @Test
    void quote_doubles_only_the_closing_bracket() {
        assertThat(SqlServerName.quote("a[b]c")).isEqualTo("[a[b]]c]");
    }

    @Test
    void equal_names_are_equal() {
        assertThat(SqlServerName.parse("[dbo].[p]", "procedure")).isEqualTo(SqlServerName.parse("dbo.p", "procedure"))
                .hasSameHashCodeAs(SqlServerName.parse("dbo.p", "procedure"));
        assertThat(SqlServerName.parse("dbo.p", "procedure")).isNotEqualTo(SqlServerName.parse("p", "procedure"));
    }
}
