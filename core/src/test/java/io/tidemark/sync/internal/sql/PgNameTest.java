package io.tidemark.sync.internal.sql;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** How PostgreSQL names are read (they share their splitting with {@link SqlServerName}). */
class PgNameTest {

    @Test
    void unquoted_parts_fold_to_lower_case_and_are_quoted_on_output() {
        PgName name = PgName.parse("Public.Get_Item_Changes", "function");
        assertThat(name.schema()).hasValue("public");
        assertThat(name.name()).isEqualTo("get_item_changes");
        assertThat(name.quoted()).isEqualTo("\"public\".\"get_item_changes\"");
        assertThat(PgName.parse("items$2", "table").quoted()).isEqualTo("\"items$2\"");
    }

    @Test
    void quoted_parts_are_kept_as_written_with_doubled_quotes_undone() {
        PgName name = PgName.parse("\"Sales Data\".\"Say \"\"Hi\"\"\"", "function");
        assertThat(name.schema()).hasValue("Sales Data");
        assertThat(name.name()).isEqualTo("Say \"Hi\"");
        assertThat(name.quoted()).isEqualTo("\"Sales Data\".\"Say \"\"Hi\"\"\"");
        assertThat(name).hasToString("Sales Data.Say \"Hi\"");
    }

    @ParameterizedTest
    @ValueSource(strings = {"x; drop table y", "a.b.c", "1abc", "a b", "\"open", "a.", ".a", "a..b", "a.\"b\"c",
            "f()", "x--", "\"\"", "a-b"})
    void refuses_anything_that_is_not_a_plain_or_quoted_name(String text) {
        assertThatThrownBy(() -> PgName.parse(text, "function"))
                .isInstanceOf(TidemarkException.class)
                .satisfies(e -> assertThat(((TidemarkException) e).code()).isEqualTo(ErrorCode.INVALID_IDENTIFIER));
    }

    @Test
    void refuses_names_postgresql_would_truncate() {
        assertThat(PgName.parse("a".repeat(63), "table").name()).hasSize(63);
        assertThatThrownBy(() -> PgName.parse("a".repeat(64), "table"))
                .hasMessageContaining("64 bytes long").hasMessageContaining("silently truncate");
        assertThatThrownBy(() -> PgName.parse("\"" + "é".repeat(32) + "\"", "table"))
                .hasMessageContaining("64 bytes long");
    }

    @Test
    void literals_double_single_quotes() {
        assertThat(PgName.literal("it's")).isEqualTo("'it''s'");
    }

    @Test
    void a_default_schema_fills_only_a_missing_one() {
        assertThat(PgName.parse("items", "table").withDefaultSchema("public").quoted()).isEqualTo("\"public\".\"items\"");
        assertThat(PgName.parse("s.items", "table").withDefaultSchema("public").quoted()).isEqualTo("\"s\".\"items\"");
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "get_changes            | \"get_changes\"",
            "Public.Get_Changes     | \"public\".\"get_changes\"",
            "\"My Schema\".\"Get\"  | \"My Schema\".\"Get\"",
            "s.\"a\"\"b\"           | \"s\".\"a\"\"b\"",
            "s.f$1                  | \"s\".\"f$1\"",
    })
    void parses_folds_and_quotes(String text, String quoted) {
        assertThat(PgName.parse(text, "function").quoted()).isEqualTo(quoted);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "a.b.c          | it has more than two parts; use schema.name",
            "a.             | a part is missing",
            ".a             | \"\" is not a plain identifier",
            "\"a            | a double quote is not closed",
            "\"a\"x.b       | unexpected character 'x' after a quoted part",
            "a b            | \"a b\" is not a plain identifier (letters, digits, _ and $, not starting with a digit);"
                    + " double-quote it if the name really is like that",
            "1a             | \"1a\" is not a plain identifier",
    })
    void refuses_with_a_reason(String text, String reason) {
        assertThatThrownBy(() -> PgName.parse(text, "function"))
                .isInstanceOf(TidemarkException.class)
                .hasMessageStartingWith("Refusing the function name '" + text + "': ")
                .hasMessageContaining(reason);
    }

    @Test
    void refuses_control_characters_and_long_names() {
        assertThatThrownBy(() -> PgName.parse("\"a\nb\"", "table")).hasMessageContaining("it contains a control character");
        assertThatThrownBy(() -> PgName.parse("x".repeat(64), "table")).hasMessageContaining("is 64 bytes long");
        assertThatThrownBy(() -> PgName.parse(" ", "table")).hasMessage("The table name is empty");
    }
}
