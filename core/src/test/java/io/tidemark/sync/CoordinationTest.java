package io.tidemark.sync;

import io.tidemark.sync.testkit.RecordingDestination;
import io.tidemark.sync.testkit.ScriptedProvider;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Coordination's configuration, and what the engine accepts with it. */
class CoordinationTest {

    @Test
    void defaults_give_a_takeover_within_twenty_seconds_and_a_unique_instance_id() {
        Coordination c = Coordination.create();
        assertThat(c.leaseDuration()).isEqualTo(Duration.ofSeconds(15));
        assertThat(c.renewInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.safetyMargin()).isEqualTo(Duration.ofSeconds(3));
        assertThat(c.leaseDuration().plus(c.renewInterval())).isLessThan(Duration.ofSeconds(30));
        assertThat(c.instanceId()).contains("-" + ProcessHandle.current().pid() + "-");
        assertThat(Coordination.create().instanceId()).isNotEqualTo(c.instanceId());
    }

    @Test
    void every_violation_is_reported_at_once() {
        assertThatThrownBy(() -> Coordination.builder().leaseDuration(Duration.ofMillis(500)).instanceId(" ")
                .build())
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageContaining("leaseDuration must be at least 1 s, got PT0.5S")
                .hasMessageContaining("instanceId");
        assertThatThrownBy(() -> Coordination.builder().leaseDuration(null).instanceId("x".repeat(201)).build())
                .hasMessageContaining("leaseDuration")
                .hasMessageContaining("instanceId must be at most 200 characters, got 201");
    }

    @Test
    void coordination_needs_the_jdbc_stores_because_the_fence_runs_in_their_transactions() {
        assertThatThrownBy(() -> SyncEngine.builder()
                .provider(new ScriptedProvider())
                .watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("Items", "public.items"))
                .destination("d", new RecordingDestination())
                .coordination(Coordination.create())
                .build())
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageContaining("coordination needs a JdbcWatermarkStore")
                .hasMessageContaining("InMemoryWatermarkStore cannot do");
    }

    @Test
    void without_coordination_nothing_changes_and_no_object_reports_a_lease_holder() {
        try (SyncEngine engine = SyncEngine.builder()
                .provider(new ScriptedProvider())
                .watermarks(InMemoryWatermarkStore.create())
                .track(TrackedObject.of("Items", "public.items"))
                .destination("d", new RecordingDestination())
                .build()) {
            assertThat(engine.status("Items").leaseHolder()).isEmpty();
        }
    }
}
