package io.tidemark.kafka.internal;

import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.DeliveryException;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class PageRecordsTest {

    private static Change change(Operation op, long version, String json) {
        return Change.fromRaw(op, version, null, json.getBytes(StandardCharsets.UTF_8));
    }

    private static final ChangeBatch PAGE = new ChangeBatch("Items", 10, 20, SyncType.FULL, 1, List.of(
            change(Operation.INSERT, 11, "{\"$operation\":\"I\",\"$version\":11,\"id\":1,\"name\":\"a\"}"),
            change(Operation.DELETE, 12, "{\"$operation\":\"D\",\"$version\":12,\"id\":2}")), 2, 3, 2500);

    private static Map<String, String> headers(ProducerRecord<byte[], byte[]> record) {
        Map<String, String> map = new LinkedHashMap<>();
        for (Header h : record.headers()) {
            map.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
        }
        return map;
    }

    @Test
    void one_record_per_change_in_order_keyed_by_the_row_with_the_change_as_returned() {
        List<ProducerRecord<byte[], byte[]>> records = PageRecords.of(PAGE, "items",
                new RecordKeys(List.of("id"), Map.of()), false);

        assertThat(records).hasSize(2);
        assertThat(records).extracting(ProducerRecord::topic).containsOnly("items");
        assertThat(records).extracting(r -> new String(r.key(), StandardCharsets.UTF_8))
                .containsExactly("{\"id\":1}", "{\"id\":2}");
        assertThat(records.get(0).value()).isEqualTo(PAGE.changes().get(0).rawUtf8());
        assertThat(records).extracting(ProducerRecord::partition).containsOnlyNulls();
    }

    @Test
    void every_record_carries_the_envelope_fields_as_headers() {
        ProducerRecord<byte[], byte[]> record = PageRecords.of(PAGE, "items",
                new RecordKeys(List.of("id"), Map.of()), false).get(1);

        assertThat(headers(record)).containsExactly(
                Map.entry("object", "Items"),
                Map.entry("idempotencyKey", PAGE.idempotencyKey()),
                Map.entry("batchId", "Items:10-20"),
                Map.entry("fromVersion", "10"),
                Map.entry("toVersion", "20"),
                Map.entry("syncType", "FULL"),
                Map.entry("reasonCode", "1"),
                Map.entry("page", "2"),
                Map.entry("pageCount", "3"),
                Map.entry("totalChanges", "2500"));
    }

    @Test
    void with_tombstones_a_delete_is_followed_by_its_keys_record_without_a_value() {
        List<ProducerRecord<byte[], byte[]>> records = PageRecords.of(PAGE, "items",
                new RecordKeys(List.of("id"), Map.of()), true);

        assertThat(records).hasSize(3);
        assertThat(records.get(1).value()).isNotNull();
        assertThat(records.get(2).value()).isNull();
        assertThat(records.get(2).key()).isEqualTo(records.get(1).key());
        assertThat(headers(records.get(2))).containsEntry("idempotencyKey", PAGE.idempotencyKey());
    }

    @Test
    void an_object_without_key_columns_fails_the_page_fatally_before_anything_is_sent() {
        DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> PageRecords.of(PAGE, "items",
                new RecordKeys(List.of(), Map.of("Orders", List.of("id"))), false));

        assertThat(e.isRetryable()).isFalse();
        assertThat(e).hasMessageContaining("object 'Items' has no key columns");
    }
}
