package io.tidemark.sync;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sync.spi.DeliveryException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EnvelopeTest {

    private static ChangeBatch page(String object, long from, long to, int page, int pages) {
        List<Change> changes = List.of(
                Change.fromRaw(Operation.INSERT, 11L, null,
                        "{\"$operation\":\"I\",\"$version\":11,\"id\":1,\"price\":12.50}".getBytes(StandardCharsets.UTF_8)),
                Change.fromRaw(Operation.DELETE, 12L, null,
                        "{\"$operation\":\"D\",\"$version\":12,\"id\":2}".getBytes(StandardCharsets.UTF_8)));
        return new ChangeBatch(object, from, to, SyncType.DIFF, 0, changes, page, pages, 2L * pages);
    }

    @Test
    void the_idempotency_key_is_the_same_for_the_same_page_and_differs_for_any_other() {
        String key = page("Items", 10, 20, 1, 3).idempotencyKey();
        assertThat(page("Items", 10, 20, 1, 3).idempotencyKey()).isEqualTo(key);
        assertThat(key).matches("tm1-[0-9a-f]{32}");
        assertThat(List.of(page("Orders", 10, 20, 1, 3), page("Items", 11, 20, 1, 3), page("Items", 10, 21, 1, 3),
                page("Items", 10, 20, 2, 3), page("Items", 10, 20, 1, 4)))
                .extracting(ChangeBatch::idempotencyKey).doesNotContain(key).doesNotHaveDuplicates();
    }

    @Test
    void the_envelope_carries_every_field_and_the_changes_as_returned() throws Exception {
        ChangeBatch batch = page("Items", 10, 20, 1, 3);
        JsonNode json = new ObjectMapper().readTree(Envelope.toBytes(batch));
        assertThat(json.get("object").asText()).isEqualTo("Items");
        assertThat(json.get("idempotencyKey").asText()).isEqualTo(batch.idempotencyKey());
        assertThat(json.get("batchId").asText()).isEqualTo("Items:10-20");
        assertThat(json.get("fromVersion").asLong()).isEqualTo(10);
        assertThat(json.get("toVersion").asLong()).isEqualTo(20);
        assertThat(json.get("syncType").asText()).isEqualTo("DIFF");
        assertThat(json.get("reasonCode").asInt()).isZero();
        assertThat(json.get("page").asInt()).isEqualTo(1);
        assertThat(json.get("pageCount").asInt()).isEqualTo(3);
        assertThat(json.get("totalChanges").asLong()).isEqualTo(6);
        assertThat(json.get("changes")).hasSize(2);
        assertThat(json.get("changes").get(0).get("price").decimalValue()).isEqualByComparingTo("12.50");
        assertThat(new String(Envelope.toBytes(batch), StandardCharsets.UTF_8))
                .contains("{\"$operation\":\"I\",\"$version\":11,\"id\":1,\"price\":12.50}");
    }

    @Test
    void a_delivery_exception_says_whether_trying_again_can_help() {
        assertThat(DeliveryException.retryable("503", null).isRetryable()).isTrue();
        assertThat(DeliveryException.retryableAfter("429", Duration.ofSeconds(3)).retryAfter())
                .contains(Duration.ofSeconds(3));
        DeliveryException fatal = DeliveryException.fatal("400 Bad Request", null);
        assertThat(fatal.isRetryable()).isFalse();
        assertThat(fatal.code()).isEqualTo(ErrorCode.DESTINATION_FAILED);
        assertThatThrownBy(() -> DeliveryException.retryableAfter("429", Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
