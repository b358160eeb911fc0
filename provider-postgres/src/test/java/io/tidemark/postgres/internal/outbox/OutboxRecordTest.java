package io.tidemark.postgres.internal.outbox;

import io.tidemark.postgres.TruncatePolicy;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The record an install writes: read back as written, and a hash that follows what the SQL does, not its comments. */
class OutboxRecordTest {

    private static OutboxScript script(String payloadKey) {
        OutboxNames names = OutboxNames.of("\"Sales\".\"Items\"", null, "\"Sales\".feed");
        OutboxShape shape = OutboxShape.of(List.of(new OutboxColumn("id", "id")),
                List.of(new OutboxColumn("name", payloadKey)));
        return new OutboxScript(names, shape, TruncatePolicy.RECORD_DELETES, null);
    }

    @Test
    void a_record_reads_back_as_written() {
        OutboxRecord record = script("Name").record();

        OutboxRecord.Parsed parsed = OutboxRecord.parse(record.toJson()).orElseThrow();

        assertThat(parsed.problem()).isNull();
        assertThat(parsed.record()).isEqualTo(record);
        assertThat(record.table()).isEqualTo("\"Sales\".\"Items\"");
        assertThat(record.changeFunction()).isEqualTo("\"Sales\".feed");
        assertThat(record.notifyChannel()).isNull();
        assertThat(OutboxRecord.payloadKeys(record.columns())).isEqualTo("name -> Name");
    }

    @Test
    void the_script_ends_with_its_own_record() {
        OutboxScript script = script("Name");

        assertThat(script.render()).endsWith("COMMENT ON TABLE \"Sales\".\"Items_outbox_state\" IS '"
                + script.record().toJson().replace("'", "''") + "';\n");
    }

    @Test
    void the_hash_follows_the_sql_and_ignores_whole_comment_lines() {
        String sql = "-- explains\nSELECT 1;\n    -- indented explanation\nSELECT 2; -- kept\n";

        assertThat(OutboxRecord.hashOf(sql)).isEqualTo(OutboxRecord.hashOf(sql.replace("explains", "says why")))
                .isNotEqualTo(OutboxRecord.hashOf(sql.replace("SELECT 2", "SELECT 3")))
                .isNotEqualTo(OutboxRecord.hashOf(sql.replace("-- kept", "-- changed")));
        assertThat(script("Name").record().scriptHash()).isNotEqualTo(script("name").record().scriptHash());
    }

    @Test
    void a_comment_that_is_not_a_record_is_not_read_as_one_and_an_unknown_format_is_reported() {
        assertThat(OutboxRecord.parse(null)).isEmpty();
        assertThat(OutboxRecord.parse("What public.items_outbox no longer holds (Tidemark).")).isEmpty();
        assertThat(OutboxRecord.parse("{\"someone\":\"else\"}")).isEmpty();
        assertThat(OutboxRecord.parse("{\"tidemark\":\"outbox\",\"format\":2}").orElseThrow().problem())
                .isEqualTo("format 2, this version reads format 1");
        assertThat(OutboxRecord.parse("{\"tidemark\":\"outbox\",\"format\":1,\"table\":7}").orElseThrow().problem())
                .contains("member table is missing or not text");
    }

    @Test
    void function_bodies_are_the_text_between_the_dollar_quotes() {
        OutboxScript script = script("Name");

        assertThat(script.functionBodies()).containsOnlyKeys("\"Sales\".\"Items_outbox_capture\"()",
                "\"Sales\".\"feed\"(json)",
                "\"Sales\".\"Items_outbox_trim\"(bigint, integer)");
        assertThat(script.functionBodies().get("\"Sales\".\"Items_outbox_trim\"(bigint, integer)"))
                .startsWith("\nDECLARE\n").endsWith("END\n");
        assertThat(script.render()).contains("AS $trim$" + script.functionBodies()
                .get("\"Sales\".\"Items_outbox_trim\"(bigint, integer)") + "$trim$;");
    }
}
