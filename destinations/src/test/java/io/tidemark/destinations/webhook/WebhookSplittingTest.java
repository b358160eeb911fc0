package io.tidemark.destinations.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Envelope;
import io.tidemark.sync.spi.DeliveryException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.tidemark.destinations.webhook.WebhookReceiver.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** A page larger than maxRequestBytes goes as several requests, in order, each under its own stable id. */
class WebhookSplittingTest {

    private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(
            "a signing key of 32 bytes length".getBytes(StandardCharsets.US_ASCII));

    private final WebhookReceiver receiver = new WebhookReceiver();

    @AfterEach
    void stop() {
        receiver.close();
    }

    private WebhookDestination webhook(long maxBytes, boolean gzip) {
        return WebhookDestination.builder().url(receiver.url()).maxRequestBytes(maxBytes).gzip(gzip)
                .signingSecret(SECRET).build();
    }

    @Test
    void a_page_that_fits_is_one_request_under_the_pages_own_key() throws Exception {
        ChangeBatch batch = WebhookPages.page(20);
        int size = Envelope.toBytes(batch).length;
        webhook(size, false).deliver(batch);

        assertThat(receiver.received()).hasSize(1);
        assertThat(receiver.received().get(0).header("webhook-id")).isEqualTo(batch.idempotencyKey());
        assertThat(receiver.received().get(0).body()).isEqualTo(Envelope.toBytes(batch));
    }

    @Test
    void no_request_passes_the_limit_and_every_change_arrives_once_in_order() throws Exception {
        for (long limit : new long[] {1024, 1500, 4096, 10_000}) {
            for (boolean gzip : new boolean[] {false, true}) {
                WebhookReceiver fresh = new WebhookReceiver();
                try {
                    ChangeBatch batch = WebhookPages.page("Items", 1000, 400, 2, 5, limit);
                    WebhookDestination.builder().url(fresh.url()).maxRequestBytes(limit).gzip(gzip)
                            .signingSecret(SECRET).build().deliver(batch);
                    checkParts(batch, fresh.received(), limit);
                } finally {
                    fresh.close();
                }
            }
        }
    }

    private static void checkParts(ChangeBatch batch, List<WebhookReceiver.Received> requests, long limit) {
        assertThat(requests.size()).isGreaterThan(1);
        List<Long> versions = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            WebhookReceiver.Received r = requests.get(i);
            assertThat(r.body().length).as("request %d of %d", i + 1, requests.size()).isLessThanOrEqualTo((int) limit);
            assertThat(r.header("webhook-id")).isEqualTo(batch.idempotencyKey() + "-p" + (i + 1));
            assertThat(WebhookSignatureVerifier.verify(SECRET, r.header("webhook-id"), r.header("webhook-timestamp"),
                    r.body(), r.header("webhook-signature"))).isTrue();
            JsonNode json = WebhookPages.parse(r.body());
            assertThat(json.get("part").asInt()).isEqualTo(i + 1);
            assertThat(json.get("partCount").asInt()).isEqualTo(requests.size());
            assertThat(json.get("idempotencyKey").asText()).isEqualTo(batch.idempotencyKey());
            assertThat(json.get("page").asInt()).isEqualTo(2);
            assertThat(json.get("object").asText()).isEqualTo("Items");
            versions.addAll(WebhookPages.versions(r.body()));
        }
        assertThat(versions).isEqualTo(WebhookPages.versions(batch));
    }

    @Test
    void each_part_is_filled_as_far_as_the_limit_allows() throws Exception {
        ChangeBatch batch = WebhookPages.page("Items", 1000, 400, 1, 1, 7);
        long limit = 3000;
        webhook(limit, false).deliver(batch);
        List<WebhookReceiver.Received> requests = receiver.received();
        // The next change would not have fitted into any part but the last: the cut came at the limit, not early.
        int next = 0;
        for (int i = 0; i < requests.size() - 1; i++) {
            byte[] body = requests.get(i).body();
            next += WebhookPages.versions(body).size();
            int following = batch.changes().get(next).rawUtf8().length;
            // 12 bytes: the longest part and partCount numbers ("400") are at most two digits longer each, and a comma.
            assertThat(body.length + 1 + following).isGreaterThan((int) limit - 12);
        }
    }

    @Test
    void a_single_change_larger_than_the_limit_fails_the_page_before_anything_is_sent() {
        ChangeBatch batch = WebhookPages.page("Items", 500, 3, 1, 1, 1);
        String big = "{\"$operation\":\"I\",\"$version\":501,\"Blob\":\"" + "z".repeat(5000) + "\"}";
        List<io.tidemark.sync.Change> changes = new ArrayList<>(batch.changes());
        changes.set(1, io.tidemark.sync.Change.fromRaw(io.tidemark.sync.Operation.INSERT, 501L, null,
                big.getBytes(StandardCharsets.UTF_8)));
        ChangeBatch withBig = new ChangeBatch("Items", 499, 502, batch.syncType(), 0, changes, 1, 1, 3);

        DeliveryException e = catchThrowableOfType(DeliveryException.class,
                () -> webhook(4096, false).deliver(withBig));
        assertThat(e.isRetryable()).isFalse();
        assertThat(e.getMessage()).contains("object 'Items'").contains("version 501").contains("change 2 of page 1/1")
                .contains("maxRequestBytes 4,096");
        assertThat(receiver.received()).isEmpty();
    }

    @Test
    void accepted_parts_are_not_sent_again_when_a_later_part_fails_and_a_redelivery_repeats_the_same_ids()
            throws Exception {
        ChangeBatch batch = WebhookPages.page("Items", 1000, 200, 1, 1, 3);
        WebhookDestination hook = webhook(2048, false);
        receiver.then(status(200), status(200), status(503));

        DeliveryException e = catchThrowableOfType(DeliveryException.class, () -> hook.deliver(batch));
        assertThat(e.isRetryable()).isTrue();
        assertThat(e.getMessage()).contains("part 3/");
        List<WebhookReceiver.Received> first = receiver.received();
        assertThat(first).hasSize(3);
        assertThat(first).extracting(r -> r.header("webhook-id")).containsExactly(batch.idempotencyKey() + "-p1",
                batch.idempotencyKey() + "-p2", batch.idempotencyKey() + "-p3");

        hook.deliver(batch); // the engine offers the whole page again
        List<WebhookReceiver.Received> all = receiver.received();
        int parts = all.size() - 3;
        assertThat(parts).isGreaterThan(3);
        assertThat(all.subList(3, all.size())).extracting(r -> r.header("webhook-id"))
                .startsWith(batch.idempotencyKey() + "-p1", batch.idempotencyKey() + "-p2",
                        batch.idempotencyKey() + "-p3");
        // A receiver that keeps the first accepted request per webhook-id has every change exactly once, in order.
        Map<String, byte[]> deduped = new LinkedHashMap<>();
        for (WebhookReceiver.Received r : receiver.accepted()) {
            deduped.putIfAbsent(r.header("webhook-id"), r.body());
        }
        List<Long> versions = new ArrayList<>();
        deduped.values().forEach(body -> versions.addAll(WebhookPages.versions(body)));
        assertThat(versions).isEqualTo(WebhookPages.versions(batch));
        // The same page split the same way: the parts of the redelivery carry the same bodies.
        assertThat(all.get(3).body()).isEqualTo(all.get(0).body());
    }
}
