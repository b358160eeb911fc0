package io.tidemark.destinations.webhook;

import io.tidemark.sync.DeliveryPolicy;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.tidemark.destinations.webhook.WebhookReceiver.reset;
import static io.tidemark.destinations.webhook.WebhookReceiver.status;
import static org.assertj.core.api.Assertions.assertThat;

/** The webhook behind a real engine: retried pages go again under the same ids, and the watermark moves after. */
class WebhookEngineTest {

    private static final String ITEMS = "Items";

    private final WebhookReceiver receiver = new WebhookReceiver();
    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore watermarks = InMemoryWatermarkStore.create();

    @AfterEach
    void stop() {
        receiver.close();
    }

    @Test
    void faults_are_retried_by_the_engine_and_every_change_arrives_once_per_webhook_id_in_order() {
        provider.object(ITEMS).respondWith(VersionedRows.honouringMaxRows().insert(1, 2500));
        // Page 1 accepted, page 2 refused three ways before it passes, page 3 accepted.
        receiver.then(status(200), status(500), status(429, "Retry-After", "0"), reset(), status(200), status(200));
        WebhookDestination hook = WebhookDestination.builder().url(receiver.url())
                .requestTimeout(Duration.ofSeconds(5)).build();
        try (SyncEngine engine = SyncEngine.builder()
                .provider(provider)
                .watermarks(watermarks)
                .track(TrackedObject.of(ITEMS, "public.items_changes").pageSize(1000))
                .destination("hook", hook, DeliveryPolicy.retryThenBlock(5, Duration.ofMillis(10)))
                .build()) {

            ObjectReport report = engine.runOnce().get(ITEMS);

            assertThat(report.outcome()).isEqualTo(Outcome.DELIVERED);
            assertThat(watermarks.load(ITEMS).orElseThrow().version()).hasValue(2500);
        }
        List<WebhookReceiver.Received> all = receiver.received();
        assertThat(all).hasSize(6);
        // The three refusals and the success of page 2 carry one id.
        assertThat(all.subList(1, 5)).extracting(r -> r.header("webhook-id")).containsOnly(all.get(1)
                .header("webhook-id"));
        Map<String, byte[]> byId = new LinkedHashMap<>();
        receiver.accepted().forEach(r -> byId.putIfAbsent(r.header("webhook-id"), r.body()));
        assertThat(byId).hasSize(3);
        List<Long> versions = new ArrayList<>();
        byId.values().forEach(body -> versions.addAll(WebhookPages.versions(body)));
        assertThat(versions).hasSize(2500);
        for (int i = 0; i < versions.size(); i++) {
            assertThat(versions.get(i)).isEqualTo(i + 1L);
        }
        assertThat(byId.values()).extracting(body -> WebhookPages.parse(body).get("page").asInt())
                .containsExactly(1, 2, 3);
    }
}
