package io.tidemark.kafka.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.DeliveryException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class RecordKeysTest {

    private static ChangeBatch page(String... changes) {
        List<Change> list = java.util.Arrays.stream(changes)
                .map(json -> Change.fromRaw(Operation.UPDATE, 7L, null, json.getBytes(StandardCharsets.UTF_8)))
                .toList();
        return new ChangeBatch("Items", 1, 9, SyncType.DIFF, 0, list, 2, 3, 10);
    }

    private static String key(RecordKeys keys, ChangeBatch batch, int index) {
        return new String(keys.keyOf(batch, index, keys.columnsOf(batch.objectName())), StandardCharsets.UTF_8);
    }

    @Test
    void the_key_is_the_key_columns_in_the_configured_order_whatever_the_changes_field_order() {
        RecordKeys keys = new RecordKeys(List.of("region", "code"), Map.of());
        ChangeBatch batch = page("{\"$operation\":\"U\",\"code\":\"A-100\",\"price\":1.50,\"region\":\"EU\"}",
                "{\"region\":\"EU\",\"price\":2,\"code\":\"A-100\",\"$operation\":\"U\"}");

        assertThat(key(keys, batch, 0)).isEqualTo("{\"region\":\"EU\",\"code\":\"A-100\"}");
        assertThat(keys.keyOf(batch, 1, List.of("region", "code"))).isEqualTo(keys.keyOf(batch, 0,
                List.of("region", "code")));
    }

    @Test
    void values_keep_their_json_type_and_exact_form() {
        RecordKeys keys = new RecordKeys(List.of("id", "at", "n"), Map.of());
        ChangeBatch batch = page("{\"id\":42,\"at\":null,\"n\":12.50}");

        assertThat(key(keys, batch, 0)).isEqualTo("{\"id\":42,\"at\":null,\"n\":12.50}");
    }

    @Test
    void an_object_of_its_own_uses_its_own_key_columns() {
        RecordKeys keys = new RecordKeys(List.of("id"), Map.of("Items", List.of("code")));

        assertThat(keys.columnsOf("Items")).containsExactly("code");
        assertThat(keys.columnsOf("Orders")).containsExactly("id");
    }

    @Test
    void a_change_without_a_key_field_is_a_fatal_error_naming_the_field_object_page_and_version() {
        RecordKeys keys = new RecordKeys(List.of("id"), Map.of());
        ChangeBatch batch = page("{\"id\":1}", "{\"name\":\"x\"}");

        DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> key(keys, batch, 1));

        assertThat(e.isRetryable()).isFalse();
        assertThat(e).hasMessageContaining("change 2 of page 2/3 of object 'Items', version 7 has no field 'id'");
    }
}
