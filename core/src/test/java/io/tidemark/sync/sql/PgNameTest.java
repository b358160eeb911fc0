package io.tidemark.sync.sql;

import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Pins how PostgreSQL names are read (they share their splitting with {@link SqlServerName}). */
class PgNameTest {

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
