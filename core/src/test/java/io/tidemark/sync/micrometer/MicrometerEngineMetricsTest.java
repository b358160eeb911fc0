package io.tidemark.sync.micrometer;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.TrackedObject;
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
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The listener's meters, fed by a real engine: names, tags and values. */
class MicrometerEngineMetricsTest {

    private static final Instant START = Instant.parse("2026-03-01T10:00:00Z");

    private final MutableClock clock = new MutableClock(START);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ScriptedProvider provider = new ScriptedProvider();
    private final VersionedRows rows = VersionedRows.ignoringMaxRows();
    private final RecordingDestination audit = new RecordingDestination();
    private final RecordingDestination search = new RecordingDestination();
    private final SyncEngine engine = SyncEngine.builder().provider(provider)
            .watermarks(InMemoryWatermarkStore.create()).clock(clock).pageSize(2)
            .listener(MicrometerSyncListener.create(registry, clock))
            .track(TrackedObject.of("Items", "public.items_changes"))
            .destination("audit", audit).destination("search", search).build();

    MicrometerEngineMetricsTest() {
        provider.object("Items").respondWith(rows).currentVersion(10);
    }

    @AfterEach
    void close() {
        engine.close();
    }

    @Test
    void per_object_lag_changes_pages_and_per_destination_position_and_latency() {
        rows.insert(1, 3);
        engine.runOnce();
        clock.advance(Duration.ofSeconds(30));

        assertThat(gauge("tidemark.lag.versions")).as("current version 10, watermark 3").isEqualTo(7);
        assertThat(gauge("tidemark.lag.seconds")).isEqualTo(30);
        assertThat(gauge("tidemark.watermark")).isEqualTo(3);
        assertThat(registry.get("tidemark.changes").tag("object", "Items").counter().count()).isEqualTo(3);
        assertThat(registry.get("tidemark.pages").tag("object", "Items").counter().count()).isEqualTo(2);
        assertThat(registry.get("tidemark.delivery.duration").tag("object", "Items").tag("destination", "search")
                .tag("result", "accepted").timer().count()).isEqualTo(2);
        assertThat(registry.get("tidemark.destination.position").tag("object", "Items").tag("destination", "audit")
                .gauge().value()).isEqualTo(3);
        assertThat(gauge("tidemark.blocked")).isZero();

        rows.insert(4, 4);
        clock.advance(Duration.ofSeconds(5));
        engine.runOnce();
        assertThat(gauge("tidemark.lag.seconds")).as("it moved just now").isZero();
    }

    @Test
    void refusals_blocked_state_and_failures_by_code() {
        rows.insert(1, 2);
        engine.runOnce();
        search.refuseAll();
        rows.insert(3, 4);
        engine.runOnce();

        assertThat(registry.get("tidemark.delivery.failures").tag("object", "Items").tag("destination", "search")
                .counter().count()).isEqualTo(1);
        assertThat(registry.get("tidemark.delivery.duration").tag("destination", "search").tag("result", "refused")
                .timer().count()).isEqualTo(1);
        assertThat(registry.get("tidemark.destination.blocked").tag("destination", "search").gauge().value())
                .isEqualTo(1);
        assertThat(registry.get("tidemark.destination.blocked").tag("destination", "audit").gauge().value())
                .isZero();
        assertThat(registry.get("tidemark.destination.position").tag("destination", "search").gauge().value())
                .isEqualTo(2);
        assertThat(gauge("tidemark.blocked")).isEqualTo(1);

        provider.object("Items").thenFail(new SQLException("boom", "XX000"));
        engine.runOnce();
        assertThat(registry.get("tidemark.cycle.failures").tag("object", "Items").tag("code", "PROCEDURE_FAILED")
                .counter().count()).isEqualTo(1);

        search.acceptAll();
        engine.runOnce();
        assertThat(gauge("tidemark.blocked")).isZero();
        assertThat(registry.get("tidemark.destination.blocked").tag("destination", "search").gauge().value())
                .isZero();
    }

    @Test
    void the_horizon_age_comes_from_the_providers_diagnostic_and_drops_to_zero_when_it_clears() {
        MicrometerSyncListener listener = MicrometerSyncListener.create(registry, clock);
        Diagnostic held = new Diagnostic(Diagnostic.Severity.WARNING, "HORIZON_HELD_BACK", "old transaction",
                Map.of("held_since", START.minusSeconds(90).toString(), "pid", "42"));
        listener.onReport(ObjectReport.builder("Orders", START).outcome(Outcome.NO_CHANGES)
                .toVersion(OptionalLong.of(5)).diagnostics(List.of(held)).duration(Duration.ZERO).build());
        assertThat(registry.get("tidemark.horizon.age").tag("object", "Orders").gauge().value()).isEqualTo(90);
        clock.advance(Duration.ofSeconds(10));
        assertThat(registry.get("tidemark.horizon.age").tag("object", "Orders").gauge().value()).isEqualTo(100);

        listener.onReport(ObjectReport.builder("Orders", START).outcome(Outcome.NO_CHANGES)
                .toVersion(OptionalLong.of(5)).duration(Duration.ZERO).build());
        assertThat(registry.get("tidemark.horizon.age").tag("object", "Orders").gauge().value()).isZero();
    }

    @Test
    void no_version_lag_where_the_provider_cannot_tell() {
        ScriptedProvider silent = new ScriptedProvider();
        silent.object("Items").respondWith(VersionedRows.ignoringMaxRows().insert(1, 1));
        SimpleMeterRegistry own = new SimpleMeterRegistry();
        try (SyncEngine other = SyncEngine.builder().provider(silent).watermarks(InMemoryWatermarkStore.create())
                .listener(MicrometerSyncListener.create(own, clock))
                .track(TrackedObject.of("Items", "public.items_changes")).destination("audit", audit).build()) {
            other.runOnce();
        }
        assertThat(own.find("tidemark.lag.versions").gauge()).isNull();
        assertThat(own.get("tidemark.lag.seconds").tag("object", "Items").gauge().value()).isZero();
    }

    private double gauge(String name) {
        return registry.get(name).tag("object", "Items").gauge().value();
    }
}
