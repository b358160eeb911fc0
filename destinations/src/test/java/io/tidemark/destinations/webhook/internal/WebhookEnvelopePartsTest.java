package io.tidemark.destinations.webhook.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tidemark.sync.Change;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import io.tidemark.sync.Operation;
import io.tidemark.sync.SyncType;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The split plan over many random pages and limits: never over the limit, nothing lost, nothing reordered. */
class WebhookEnvelopePartsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static ChangeBatch randomPage(Random random, int count) {
        List<Change> changes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String raw = "{\"$operation\":\"U\",\"$version\":" + (1000 + i) + ",\"Note\":\"" + "ü".repeat(random.nextInt(3))
                    + "n".repeat(random.nextInt(700)) + "\"}";
            changes.add(Change.fromRaw(Operation.UPDATE, 1000L + i, null, raw.getBytes(StandardCharsets.UTF_8)));
        }
        return new ChangeBatch("Notes \"quoted\"", 999, 999 + count, SyncType.DIFF, 0, changes, 3, 9, 9000);
    }

    @Test
    void random_pages_split_within_the_limit_keeping_every_change_in_order() throws Exception {
        Random random = new Random(11);
        for (int trial = 0; trial < 200; trial++) {
            int count = random.nextInt(300);
            ChangeBatch batch = randomPage(random, count);
            long limit = 1024 + random.nextInt(20_000);
            List<RequestPart> parts = EnvelopeParts.plan(batch, limit);
            List<Long> versions = new ArrayList<>();
            for (RequestPart part : parts) {
                byte[] body = EnvelopeParts.body(part);
                assertThat(body.length).isLessThanOrEqualTo((int) limit);
                JsonNode json = JSON.readTree(body);
                assertThat(json.get("object").asText()).isEqualTo("Notes \"quoted\"");
                json.get("changes").forEach(c -> versions.add(c.get("$version").asLong()));
                if (parts.size() == 1) {
                    assertThat(body).isEqualTo(Envelope.toBytes(batch));
                    assertThat(part.id()).isEqualTo(batch.idempotencyKey());
                } else {
                    assertThat(part.changeCount()).isPositive();
                    assertThat(part.id()).isEqualTo(batch.idempotencyKey() + "-p" + part.part());
                }
            }
            assertThat(versions).hasSize(count);
            for (int i = 0; i < count; i++) {
                assertThat(versions.get(i)).isEqualTo(1000L + i);
            }
        }
    }

    @Test
    void without_a_limit_a_page_is_one_request_identical_to_the_envelope() {
        ChangeBatch batch = randomPage(new Random(5), 120);
        List<RequestPart> parts = EnvelopeParts.plan(batch, 0);
        assertThat(parts).hasSize(1);
        assertThat(EnvelopeParts.body(parts.get(0))).isEqualTo(Envelope.toBytes(batch));
        ChangeBatch empty = randomPage(new Random(5), 0);
        assertThat(EnvelopeParts.body(EnvelopeParts.plan(empty, 1024).get(0))).isEqualTo(Envelope.toBytes(empty));
    }
}
