package io.tidemark.sync;

import io.tidemark.sync.spi.WatermarkStore;
import io.tidemark.sync.testkit.MutableClock;
import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import io.tidemark.sync.testkit.VersionedRows;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The status snapshot (per object and per destination: state, positions, last success, last error, paused, blocked)
 * and the health rules with their thresholds, through a real engine.
 */
class EngineStatusTest {

    private static final Instant START = Instant.parse("2026-03-01T10:00:00Z");

    private final MutableClock clock = new MutableClock(START);
    private final ScriptedProvider provider = new ScriptedProvider();
    private final WatermarkStore store = InMemoryWatermarkStore.create();
    private final VersionedRows items = VersionedRows.ignoringMaxRows();
    private final VersionedRows orders = VersionedRows.ignoringMaxRows();
    private final RecordingDestination audit = new RecordingDestination();
    private final RecordingDestination search = new RecordingDestination();
    private SyncEngine engine;

    private SyncEngine engine(HealthPolicy policy) {
        engine = SyncEngine.builder().provider(provider).watermarks(store).clock(clock).healthPolicy(policy)
                .deadLetters(InMemoryDeadLetterStore.create())
                .track(TrackedObject.of("Items", "public.items_changes"))
                .track(TrackedObject.of("Orders", "public.orders_changes"))
                .destination("audit", audit)
                .destination("search", search, DeliveryPolicy.deadLetterAfter(1, Duration.ofMillis(1)))
                .build();
        provider.object("Items").respondWith(items);
        provider.object("Orders").respondWith(orders);
        return engine;
    }

    @AfterEach
    void close() {
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void the_snapshot_holds_each_object_and_destination_and_the_verdict_at_one_time() {
        SyncEngine engine = engine(HealthPolicy.defaults());
        EngineStatus before = engine.snapshot();
        assertThat(before.objects()).extracting(ObjectStatus::state)
                .containsExactly(ObjectStatus.State.NOT_RUN, ObjectStatus.State.NOT_RUN);
        assertThat(before.health()).isEqualTo(EngineHealth.up());

        items.insert(1, 3);
        orders.insert(1, 1);
        engine.runOnce();
        clock.advance(Duration.ofSeconds(5));
        engine.pause("Orders", "search");
        EngineStatus status = engine.snapshot();

        assertThat(status.engineName()).isEqualTo("tidemark");
        assertThat(status.takenAt()).isEqualTo(START.plusSeconds(5));
        ObjectStatus itemsStatus = status.object("Items").orElseThrow();
        assertThat(itemsStatus.state()).isEqualTo(ObjectStatus.State.OK);
        assertThat(itemsStatus.lastSuccess()).hasValue(START);
        assertThat(itemsStatus.consecutiveFailures()).isZero();
        assertThat(itemsStatus.failingSince()).isEmpty();
        assertThat(itemsStatus.blocked()).isFalse();
        assertThat(itemsStatus.destinations()).extracting(DestinationStatus::destination)
                .containsExactly("audit", "search");
        DestinationStatus auditStatus = itemsStatus.destinations().get(0);
        assertThat(auditStatus.position()).hasValue(3);
        assertThat(auditStatus.lastDelivery()).hasValue(START);
        assertThat(auditStatus.paused()).isFalse();
        assertThat(status.object("Orders").orElseThrow().destinations().get(1).paused()).isTrue();
        assertThat(status.objects()).as("immutable").isInstanceOf(List.class);
        assertThatThrownBy(() -> status.objects().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void a_failing_object_shows_its_state_error_and_failures_and_degrades_only_past_the_threshold() {
        SyncEngine engine = engine(HealthPolicy.builder().failingCycles(2).failingFor(Duration.ofHours(1)).build());
        items.insert(1, 1);
        engine.runOnce();
        provider.object("Items").thenFail(new SQLException("boom", "XX000"));
        clock.advance(Duration.ofSeconds(10));
        engine.runOnce("Items");

        ObjectStatus failing = engine.status("Items");
        assertThat(failing.state()).isEqualTo(ObjectStatus.State.FAILING);
        assertThat(failing.consecutiveFailures()).isEqualTo(1);
        assertThat(failing.failingSince()).hasValue(START.plusSeconds(10));
        assertThat(failing.lastSuccess()).hasValue(START);
        assertThat(failing.lastError()).hasValueSatisfying(e -> assertThat(e).contains("PROCEDURE_FAILED"));
        assertThat(engine.health()).as("one failure is not a finding").isEqualTo(EngineHealth.up());

        provider.object("Items").thenFail(new SQLException("boom", "XX000"));
        engine.runOnce("Items");
        EngineHealth health = engine.health();
        assertThat(health.status()).isEqualTo(EngineHealth.Status.DEGRADED);
        assertThat(health.reasons()).singleElement().asString()
                .startsWith("object 'Items' is failing (2 cycles in a row").contains("boom");

        engine.runOnce("Items");
        assertThat(engine.health()).as("a success clears it").isEqualTo(EngineHealth.up());
        assertThat(engine.status("Items").failingSince()).isEmpty();
    }

    @Test
    void an_object_failing_for_longer_than_the_time_threshold_degrades_however_few_its_attempts() {
        SyncEngine engine = engine(HealthPolicy.builder().failingCycles(100).failingFor(Duration.ofMinutes(2))
                .build());
        provider.object("Items").thenFail(new SQLException("boom", "XX000"));
        engine.runOnce("Items");
        clock.advance(Duration.ofSeconds(119));
        assertThat(engine.health().status()).isEqualTo(EngineHealth.Status.UP);

        clock.advance(Duration.ofSeconds(1));
        assertThat(engine.health().status()).isEqualTo(EngineHealth.Status.DEGRADED);
        assertThat(engine.health().reasons()).singleElement().asString().contains("for 2 min 0 s");
    }

    @Test
    void every_active_object_failing_is_down_but_a_paused_one_does_not_keep_it_up() {
        SyncEngine engine = engine(HealthPolicy.builder().failingCycles(1).build());
        engine.pause("Orders");
        provider.object("Items").thenFail(new SQLException("boom", "XX000"));
        engine.runOnce();

        EngineHealth health = engine.health();
        assertThat(health.status()).isEqualTo(EngineHealth.Status.DOWN);
        assertThat(health.reasons()).hasSize(2);
        assertThat(health.reasons().get(0)).startsWith("object 'Items' is failing (1 cycle in a row for 0 ms)")
                .contains("boom");
        assertThat(health.reasons().get(1)).isEqualTo("object 'Orders' is paused");
    }

    @Test
    void a_blocked_destination_is_shown_and_degrades_while_the_others_deliver() {
        SyncEngine engine = engine(HealthPolicy.defaults());
        items.insert(1, 2);
        engine.runOnce("Items"); // a first cycle delivers to all or to none
        audit.refuseAll();
        items.insert(3, 4);
        engine.runOnce("Items");

        ObjectStatus status = engine.status("Items");
        assertThat(status.state()).isEqualTo(ObjectStatus.State.OK);
        assertThat(status.blocked()).isTrue();
        DestinationStatus blocked = status.destinations().get(0);
        assertThat(blocked.blocked()).isTrue();
        assertThat(blocked.lastError()).hasValueSatisfying(e -> assertThat(e).contains("'audit' refused"));
        assertThat(blocked.position()).hasValue(2);
        assertThat(status.destinations().get(1).position()).hasValue(4);
        assertThat(status.destinations().get(1).blocked()).isFalse();
        assertThat(engine.health().reasons()).singleElement().asString()
                .startsWith("destination 'audit' of object 'Items' is blocked");
    }

    @Test
    void dead_letters_piling_up_within_the_window_degrade() {
        SyncEngine engine = engine(HealthPolicy.builder().deadLetters(2, Duration.ofMinutes(10)).build());
        search.refuseAll();
        items.insert(1, 1);
        engine.runOnce("Items");
        assertThat(engine.health()).as("one letter is under the threshold").isEqualTo(EngineHealth.up());

        items.insert(2, 2);
        engine.runOnce("Items");
        assertThat(engine.health().reasons()).containsExactly(
                "destination 'search' of object 'Items' dead-lettered 2 pages within PT10M");

        clock.advance(Duration.ofMinutes(11));
        assertThat(engine.health()).as("out of the window").isEqualTo(EngineHealth.up());
    }

    @Test
    void an_engine_tracking_nothing_is_up_and_a_closed_one_is_down_in_its_snapshot() {
        SyncEngine engine = engine(HealthPolicy.builder().failingCycles(1).build());
        provider.object("Items").thenFail(new SQLException("boom", "XX000"));
        engine.runOnce("Items");
        engine.untrack("Items");
        engine.untrack("Orders");
        assertThat(engine.health()).isEqualTo(EngineHealth.up());

        engine.close();
        EngineStatus closed = engine.snapshot();
        assertThat(closed.health().status()).isEqualTo(EngineHealth.Status.DOWN);
        assertThat(closed.health().reasons()).containsExactly("engine 'tidemark' is closed");
    }

    @Test
    void the_health_policy_is_validated_in_one_error() {
        assertThatThrownBy(() -> HealthPolicy.builder().failingCycles(0).failingFor(Duration.ZERO)
                .deadLetters(0, Duration.ofDays(2)).build())
                .isInstanceOfSatisfying(TidemarkException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION);
                    assertThat(e.getMessage()).contains("4 configuration problems").contains("failingCycles")
                            .contains("failingFor").contains("deadLetters must be at least 1")
                            .contains("deadLetterWindow must be at most a day");
                });
    }
}
