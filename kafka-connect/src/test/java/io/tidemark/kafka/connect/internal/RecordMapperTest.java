package io.tidemark.kafka.connect.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.kafka.connect.ObjectSettings;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Records as the JSON converter writes them, with and without schemas. */
class RecordMapperTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectSettings ITEMS = new ObjectSettings(TrackedObject.of("Items", "public.items_changes"),
            List.of("shop", "item_code"), "shop.Items");
    private static final ChangeBatch PAGE = new ChangeBatch("Items", 10, 20, SyncType.DIFF, 0, List.of(), 1, 1, 2);

    private static Change change(Operation operation, String row) {
        return Change.fromRaw(operation, 15L, List.of("price"), row.getBytes(StandardCharsets.UTF_8));
    }

    private static List<SourceRecord> map(boolean tombstones, Change change) {
        List<SourceRecord> out = new ArrayList<>();
        new RecordMapper(ITEMS, "postgres:src", tombstones)
                .add(new ObjectCursor.Emitted(change, OptionalLong.of(15), PAGE), out);
        return out;
    }

    private static JsonNode convert(SourceRecord record, boolean schemas) throws Exception {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of("schemas.enable", Boolean.toString(schemas)), false);
        return JSON.readTree(converter.fromConnectData(record.topic(), record.valueSchema(), record.value()));
    }

    @Test
    void the_value_carries_the_change_and_the_row_exactly_as_returned() throws Exception {
        String row = "{\"$version\":15,\"$operation\":\"U\",\"$changed\":[\"price\"],\"shop\":7,"
                + "\"item_code\":\"A-1\",\"price\":12.50}";
        SourceRecord record = map(false, change(Operation.UPDATE, row)).get(0);

        JsonNode plain = convert(record, false);
        assertThat(plain.get("operation").asText()).isEqualTo("U");
        assertThat(plain.get("version").asLong()).isEqualTo(15);
        assertThat(plain.get("changed").get(0).asText()).isEqualTo("price");
        assertThat(plain.get("syncType").asText()).isEqualTo("DIFF");
        assertThat(plain.get("row").asText()).isEqualTo(row);        // 12.50 stays 12.50

        JsonNode withSchema = convert(record, true);
        assertThat(withSchema.get("schema").get("name").asText()).isEqualTo("io.tidemark.kafka.connect.Change");
        assertThat(withSchema.get("payload")).isEqualTo(plain);

        assertThat(record.key()).isEqualTo("{\"shop\":7,\"item_code\":\"A-1\"}");
        assertThat(record.topic()).isEqualTo("shop.Items");
        assertThat(record.sourcePartition()).isEqualTo(Map.of("object", "Items"));
        assertThat(record.sourceOffset()).isEqualTo(Map.of("version", 15L, "source", "postgres:src"));
        assertThat(record.headers().lastWithName("tidemark.idempotencyKey").value()).isEqualTo(PAGE.idempotencyKey());
        assertThat(record.headers().lastWithName("tidemark.toVersion").value()).isEqualTo(20L);
    }

    @Test
    void records_of_one_page_share_the_envelope_but_each_has_its_own_headers() {
        RecordMapper mapper = new RecordMapper(ITEMS, "postgres:src", false);
        List<SourceRecord> out = new ArrayList<>();
        Change first = change(Operation.INSERT, "{\"shop\":7,\"item_code\":\"A-1\"}");
        Change second = change(Operation.INSERT, "{\"shop\":7,\"item_code\":\"A-2\"}");
        mapper.add(new ObjectCursor.Emitted(first, OptionalLong.of(15), PAGE), out);
        mapper.add(new ObjectCursor.Emitted(second, OptionalLong.of(15), PAGE), out);
        ChangeBatch next = new ChangeBatch("Items", 20, 30, SyncType.DIFF, 0, List.of(), 1, 1, 1);
        mapper.add(new ObjectCursor.Emitted(second, OptionalLong.of(25), next), out);

        out.get(0).headers().addString("added.by", "a transformation");
        assertThat(out.get(1).headers()).hasSize(10);
        assertThat(out.get(1).headers().lastWithName("tidemark.idempotencyKey").value())
                .isEqualTo(PAGE.idempotencyKey());
        assertThat(out.get(2).headers().lastWithName("tidemark.idempotencyKey").value())
                .isEqualTo(next.idempotencyKey()).isNotEqualTo(PAGE.idempotencyKey());
        assertThat(out.get(2).headers().lastWithName("tidemark.fromVersion").value()).isEqualTo(20L);
    }

    @Test
    void a_delete_is_followed_by_a_tombstone_only_when_configured() {
        Change delete = change(Operation.DELETE, "{\"$operation\":\"D\",\"shop\":7,\"item_code\":\"A-1\"}");

        assertThat(map(false, delete)).hasSize(1);
        List<SourceRecord> both = map(true, delete);
        assertThat(both).hasSize(2);
        assertThat(((org.apache.kafka.connect.data.Struct) both.get(0).value()).getString("operation"))
                .isEqualTo("D");
        assertThat(both.get(1).value()).isNull();
        assertThat(both.get(1).key()).isEqualTo(both.get(0).key());
    }

    @Test
    void a_change_without_a_key_column_fails_naming_the_object_and_the_column() {
        Change keyless = change(Operation.INSERT, "{\"shop\":7,\"price\":1}");

        assertThatThrownBy(() -> map(false, keyless)).isInstanceOfSatisfying(TidemarkException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
            assertThat(e.getMessage()).contains("Items").contains("'item_code'").contains("[shop, price]");
        });
    }
}
