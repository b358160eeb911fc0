package io.tidemark.sync.internal.contract;

import io.tidemark.sync.Change;
import io.tidemark.sync.Operation;
import io.tidemark.sync.internal.payload.SpooledPayload;
import io.tidemark.sync.spi.ResponsePayload;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ChangeReaderTest {

    private static final String RESPONSE = "{\"Data\":[\n"
            + "  {\"$operation\":\"I\", \"$version\":1, \"Name\":\"Zoë\", \"Price\":12.50, \"Big\":123456789012345678901234567890},\n"
            + "  {\"$operation\":\"U\",\"$version\":2,\"$changed\":[\"Name\",\"Note\"],\"Name\":\"Zoe\",\"Tags\":[\"a\",{\"b\":true}]},\n"
            + "  {\"$operation\":\"D\",\"$version\":3,\"Name\":null}\n"
            + "], \"Metadata\":{\"Sync\":{\"Version\":3}}}";

    private static List<Change> readAll(ResponsePayload payload, int pageSize) {
        List<Change> all = new ArrayList<>();
        try (ChangeReader reader = new ChangeReader("Items", payload)) {
            List<Change> page;
            while (!(page = reader.nextPage(pageSize)).isEmpty()) {
                assertThat(page.size()).isLessThanOrEqualTo(pageSize);
                all.addAll(page);
            }
        }
        return all;
    }

    @Test
    void cuts_each_element_out_of_a_byte_payload_exactly_as_returned() {
        List<Change> changes = readAll(ResponsePayload.ofUtf8(RESPONSE.getBytes(StandardCharsets.UTF_8)), 2);

        assertThat(changes).extracting(Change::rawJson).containsExactly(
                "{\"$operation\":\"I\", \"$version\":1, \"Name\":\"Zoë\", \"Price\":12.50, \"Big\":123456789012345678901234567890}",
                "{\"$operation\":\"U\",\"$version\":2,\"$changed\":[\"Name\",\"Note\"],\"Name\":\"Zoe\",\"Tags\":[\"a\",{\"b\":true}]}",
                "{\"$operation\":\"D\",\"$version\":3,\"Name\":null}");
        assertContent(changes);
    }

    @Test
    void rewrites_elements_of_a_character_payload_compactly() throws IOException {
        try (SpooledPayload spooled = SpooledPayload.spool(new StringReader(RESPONSE), 16)) {
            assertThat(spooled.overflowed()).isTrue();
            List<Change> changes = readAll(spooled, 1);

            assertThat(changes.get(0).rawJson()).isEqualTo(
                    "{\"$operation\":\"I\",\"$version\":1,\"Name\":\"Zoë\",\"Price\":12.50,\"Big\":123456789012345678901234567890}");
            assertContent(changes);
        }
    }

    @Test
    void a_lone_surrogate_from_a_character_payload_reaches_the_fields_unchanged() throws IOException {
        // SQL Server's NVARCHAR holds UTF-16 code units, valid pairs or not, and its character stream hands them
        // over as they are; the rewritten element carries them as escapes.
        String value = "x\uD83Dy\uDE00z";
        String response = "{\"Metadata\":{\"Sync\":{\"Version\":1}},\"Data\":["
                + "{\"$operation\":\"I\",\"$version\":1,\"Name\":\"" + value + "\"}]}";
        try (SpooledPayload spooled = SpooledPayload.spool(new StringReader(response), 8)) {
            List<Change> changes = readAll(spooled, 1);

            assertThat(changes).hasSize(1);
            assertThat(changes.get(0).field("Name").orElseThrow().textValue()).isEqualTo(value);
            assertThat(changes.get(0).rawJson()).contains("\\uD83D", "\\uDE00");
        }
    }

    @Test
    void a_lone_surrogate_written_as_an_escape_reaches_the_fields_unchanged() {
        String response = "{\"Metadata\":{\"Sync\":{\"Version\":1}},\"Data\":["
                + "{\"$operation\":\"I\",\"$version\":1,\"Name\":\"x\\uD83Dy\"}]}";
        List<Change> changes = readAll(ResponsePayload.ofUtf8(response.getBytes(StandardCharsets.UTF_8)), 1);

        assertThat(changes.get(0).field("Name").orElseThrow().textValue()).isEqualTo("x\uD83Dy");
    }

    private static void assertContent(List<Change> changes) {
        Change insert = changes.get(0);
        assertThat(insert.operation()).hasValue(Operation.INSERT);
        assertThat(insert.version()).hasValue(1);
        assertThat(insert.changedColumns()).isEmpty();
        assertThat(insert.fields().fieldNames()).toIterable().containsExactly("Name", "Price", "Big");
        assertThat(insert.field("Price").orElseThrow().decimalValue().toPlainString()).isEqualTo("12.50");
        assertThat(insert.field("Big").orElseThrow().bigIntegerValue()).hasToString("123456789012345678901234567890");

        Change update = changes.get(1);
        assertThat(update.changedColumns()).hasValue(List.of("Name", "Note"));
        assertThat(update.columnState("Name")).isEqualTo(Change.ColumnState.SET);
        assertThat(update.columnState("Note")).isEqualTo(Change.ColumnState.CLEARED);
        assertThat(update.columnState("Tags")).isEqualTo(Change.ColumnState.UNCHANGED);
        assertThat(update.field("Tags").orElseThrow().get(1).get("b").asBoolean()).isTrue();

        Change delete = changes.get(2);
        assertThat(delete.operation()).hasValue(Operation.DELETE);
        assertThat(delete.columnState("Name")).isEqualTo(Change.ColumnState.CLEARED);
        assertThat(delete.columnState("Other")).isEqualTo(Change.ColumnState.ABSENT);
    }

    @Test
    void no_data_or_null_data_yields_no_pages() {
        for (String json : List.of("{\"Metadata\":{\"Sync\":{\"Version\":1}}}", "{\"Data\":null,\"Metadata\":{}}", "{\"Data\":[]}")) {
            assertThat(readAll(ResponsePayload.ofString(json), 10)).isEmpty();
        }
    }

    @Test
    void a_change_built_from_fields_writes_its_json_with_the_contract_keys_first() {
        Change change = Change.of(Operation.UPDATE, 4L, List.of("A"),
                io.tidemark.sync.internal.Json.NODES.objectNode().put("A", "x").put("B", 2));
        assertThat(change.rawJson()).isEqualTo("{\"$operation\":\"U\",\"$version\":4,\"$changed\":[\"A\"],\"A\":\"x\",\"B\":2}");
    }
}
