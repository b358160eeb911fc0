package io.tidemark.kafka.connect.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.Operation;
import io.tidemark.sync.TidemarkException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Record keys read as a stream are the very text the change's parsed columns give. */
class RecordKeysTest {

    private static Change change(String row) {
        return Change.fromRaw(Operation.INSERT, 3L, null, row.getBytes(StandardCharsets.UTF_8));
    }

    /** The key both ways; asserts they are equal and that the stream read it, and returns it. */
    private static String key(List<String> columns, String row) {
        RecordKeys keys = new RecordKeys("Items", columns);
        String key = keys.of(change(row));
        assertThat(key).as(row).isEqualTo(keys.fromTree(change(row)))
                .isEqualTo(keys.streamed(row.getBytes(StandardCharsets.UTF_8)));
        return key;
    }

    /** The key of a row the stream leaves to the tree; asserts it did. */
    private static String treeKey(List<String> columns, String row) {
        RecordKeys keys = new RecordKeys("Items", columns);
        assertThat(keys.streamed(row.getBytes(StandardCharsets.UTF_8))).as(row).isNull();
        return keys.of(change(row));
    }

    @Test
    void strings_integers_booleans_and_null_in_the_configured_order() {
        assertThat(key(List.of("shop", "item_code"), "{\"$operation\":\"I\",\"item_code\":\"A-1\",\"x\":[1,{\"y\":2}],"
                + "\"shop\":7}")).isEqualTo("{\"shop\":7,\"item_code\":\"A-1\"}");
        assertThat(key(List.of("a", "b", "c", "d", "e"), "{\"e\":null,\"d\":false,\"c\":true,\"b\":-9223372036854775808,"
                + "\"a\":123456789012345678901234567890}"))
                .isEqualTo("{\"a\":123456789012345678901234567890,\"b\":-9223372036854775808,\"c\":true,\"d\":false,"
                        + "\"e\":null}");
        assertThat(key(List.of("id"), "{\"id\":-0}")).isEqualTo("{\"id\":0}");
    }

    @Test
    void escapes_as_jackson_writes_them() {
        String escaped = "{\"k\\\"ey\":\"q\\\"b\\\\s\\/ \\u0001\\n\\t\\u001f\\u007f é € 😀 \\u2028\"}";
        assertThat(key(List.of("k\"ey"), escaped))
                .isEqualTo("{\"k\\\"ey\":\"q\\\"b\\\\s/ \\u0001\\n\\t\\u001F\u007f é € 😀 \u2028\"}");
    }

    @Test
    void decimals_objects_arrays_and_repeated_columns_give_the_same_text() {
        assertThat(treeKey(List.of("price"), "{\"price\":12.50}")).isEqualTo("{\"price\":12.50}");
        assertThat(treeKey(List.of("id", "shop"), "{\"shop\":{\"n\":1,\"l\":[1.0,\"x\"]},\"id\":[2,3]}"))
                .isEqualTo("{\"id\":[2,3],\"shop\":{\"n\":1,\"l\":[1.0,\"x\"]}}");
        assertThat(key(List.of("id"), "{\"id\":1,\"id\":2}")).isEqualTo("{\"id\":2}");
        assertThat(treeKey(List.of("id", "id"), "{\"id\":1}")).isEqualTo("{\"id\":1,\"id\":1}");
    }

    @Test
    void a_missing_column_fails_naming_the_object_and_the_column() {
        RecordKeys keys = new RecordKeys("Items", List.of("shop", "item_code"));

        assertThatThrownBy(() -> keys.of(change("{\"$version\":3,\"shop\":7,\"price\":1}")))
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
                    assertThat(e.getMessage()).contains("Items").contains("'item_code'").contains("[shop, price]");
                });
        assertThatThrownBy(() -> new RecordKeys("Items", List.of("$version")).of(change("{\"$version\":3}")))
                .isInstanceOf(TidemarkException.class).hasMessageContaining("'$version'");
    }
}
