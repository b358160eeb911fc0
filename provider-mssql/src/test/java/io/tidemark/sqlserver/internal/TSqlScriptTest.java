package io.tidemark.sqlserver.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TSqlScriptTest {

    @Test
    void splits_on_lines_holding_only_go() {
        String script = "-- comment\nSELECT 1;\nGO\n\n  go  \nSELECT 'GO';\nSELECT 2 -- GO\nGO\n-- only a comment\nGO\n";
        assertThat(TSqlScript.batches(script)).containsExactly("-- comment\nSELECT 1;", "SELECT 'GO';\nSELECT 2 -- GO");
    }

    @Test
    void a_script_without_go_is_one_batch() {
        assertThat(TSqlScript.batches("SELECT 1;\nSELECT 2;")).containsExactly("SELECT 1;\nSELECT 2;");
        assertThat(TSqlScript.batches("GOTO x;\nx: SELECT 1;")).hasSize(1);
    }

    @Test
    void json_names_escape_quotes_and_backslashes() {
        assertThat(TSqlScript.jsonString("Name")).isEqualTo("\"Name\"");
        assertThat(TSqlScript.jsonString("a\"b\\c")).isEqualTo("\"a\\\"b\\\\c\"");
        assertThat(TSqlScript.jsonString("Übersicht")).isEqualTo("\"Übersicht\"");
    }

    @Test
    void a_banner_frames_its_lines() {
        assertThat(TSqlScript.banner("one", "", "two"))
                .isEqualTo("-- " + "=".repeat(100) + "\n-- one\n--\n-- two\n-- " + "=".repeat(100) + "\n");
    }
}
