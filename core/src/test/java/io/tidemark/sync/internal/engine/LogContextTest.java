package io.tidemark.sync.internal.engine;

import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.SyncListener;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import io.tidemark.sync.testkit.WorkingMdc;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The MDC during a cycle and a delivery: object, engine, destination and batch id; cleared after. */
class LogContextTest {

    @BeforeAll
    static void mdc() {
        WorkingMdc.install();
    }

    @Test
    void a_cycle_and_each_delivery_carry_their_keys_in_the_mdc_and_leave_nothing_behind() {
        ScriptedProvider provider = new ScriptedProvider();
        VersionedRows rows = VersionedRows.ignoringMaxRows().insert(1, 3);
        provider.object("Items").respondWith(rows);
        List<Map<String, String>> seenByDestination = new ArrayList<>();
        List<String> batchIds = new ArrayList<>();
        List<Map<String, String>> seenByListener = new ArrayList<>();
        MDC.put("request", "host-owned");
        try (SyncEngine engine = SyncEngine.builder().name("orders-sync").provider(provider)
                .watermarks(InMemoryWatermarkStore.create()).pageSize(2)
                .track(TrackedObject.of("Items", "public.items_changes"))
                .destination("audit", (ChangeBatch batch) -> {
                    seenByDestination.add(copy());
                    batchIds.add(batch.idempotencyKey());
                })
                .listener(new SyncListener() {
                    @Override
                    public void onReport(ObjectReport report) {
                        seenByListener.add(copy());
                    }
                }).build()) {
            engine.runOnce();
        }

        assertThat(seenByDestination).hasSize(2);
        for (int i = 0; i < 2; i++) {
            assertThat(seenByDestination.get(i)).containsEntry(LogContext.ENGINE, "orders-sync")
                    .containsEntry(LogContext.OBJECT, "Items").containsEntry(LogContext.DESTINATION, "audit")
                    .containsEntry(LogContext.BATCH, batchIds.get(i)).containsEntry("request", "host-owned");
        }
        assertThat(batchIds.get(0)).isNotEqualTo(batchIds.get(1));
        assertThat(seenByListener).singleElement().satisfies(mdc -> {
            assertThat(mdc).containsEntry(LogContext.OBJECT, "Items");
            assertThat(mdc).doesNotContainKeys(LogContext.DESTINATION, LogContext.BATCH);
        });
        assertThat(copy()).as("cleared after, the host's own keys kept").containsExactly(
                Map.entry("request", "host-owned"));
        MDC.clear();
    }

    @Test
    void nested_contexts_restore_the_outer_values() {
        try (LogContext outer = LogContext.delivery("audit", "k1")) {
            try (LogContext inner = LogContext.delivery("search", "k2")) {
                assertThat(MDC.get(LogContext.DESTINATION)).isEqualTo("search");
            }
            assertThat(MDC.get(LogContext.DESTINATION)).isEqualTo("audit");
            assertThat(MDC.get(LogContext.BATCH)).isEqualTo("k1");
        }
        assertThat(MDC.get(LogContext.DESTINATION)).isNull();
    }

    private static Map<String, String> copy() {
        Map<String, String> map = MDC.getCopyOfContextMap();
        return map == null ? Map.of() : new HashMap<>(map);
    }
}
