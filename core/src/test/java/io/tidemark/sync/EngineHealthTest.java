package io.tidemark.sync;

import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

/** The health rules: up, degraded with a reason naming the object or destination, down. */
class EngineHealthTest {

    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore store = InMemoryWatermarkStore.create();
    private final VersionedRows items = VersionedRows.ignoringMaxRows();
    private final VersionedRows orders = VersionedRows.ignoringMaxRows();
    private final RecordingDestination healthy = new RecordingDestination();
    private final RecordingDestination refusing = new RecordingDestination();
    private final SyncEngine engine = SyncEngine.builder().provider(provider).watermarks(store)
            .track(TrackedObject.of("Items", "public.items_changes"))
            .track(TrackedObject.of("Orders", "public.orders_changes"))
            .destination("healthy", healthy).destination("refusing", refusing).build();

    @AfterEach
    void close() {
        engine.close();
    }

    @Test
    void an_engine_that_has_not_run_yet_is_up() {
        assertThat(engine.health()).isEqualTo(EngineHealth.up());
    }

    @Test
    void a_refusing_destination_degrades_and_is_named() {
        provider.object("Items").respondWith(items.insert(1, 2));
        provider.object("Orders").respondWith(orders.insert(1, 2));
        engine.runOnce();
        assertThat(engine.health().status()).isEqualTo(EngineHealth.Status.UP);

        refusing.refuseAll();
        items.insert(3, 3);
        engine.runOnce();

        EngineHealth health = engine.health();
        assertThat(health.status()).isEqualTo(EngineHealth.Status.DEGRADED);
        assertThat(health.reasons()).anySatisfy(r -> assertThat(r).contains("'refusing'").contains("'Items'"));
    }

    @Test
    void a_paused_object_degrades() {
        engine.pause("Orders");
        assertThat(engine.health().status()).isEqualTo(EngineHealth.Status.DEGRADED);
        assertThat(engine.health().reasons()).containsExactly("object 'Orders' is paused");
    }

    @Test
    void every_object_failing_is_down_and_a_closed_engine_is_down() {
        // Three failed cycles in a row (HealthPolicy.defaults().failingCycles()) make an object failing.
        for (int i = 0; i < 3; i++) {
            provider.object("Items").thenFail(new SQLException("connection refused", "08001"));
            provider.object("Orders").thenFail(new SQLException("connection refused", "08001"));
            engine.runOnce();
        }
        EngineHealth health = engine.health();
        assertThat(health.status()).isEqualTo(EngineHealth.Status.DOWN);
        assertThat(health.reasons()).hasSize(2);

        engine.close();
        assertThat(engine.health().status()).isEqualTo(EngineHealth.Status.DOWN);
        assertThat(engine.health().reasons()).singleElement().asString().contains("closed");
    }
}
