package io.tidemark.sync.micrometer;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The coordination meters: whether this instance holds each object's lease, and its hand-overs by kind. */
class MicrometerLeaseMetricsTest {

    @Test
    void lease_ownership_and_handovers_are_published_per_object() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerSyncListener listener = MicrometerSyncListener.create(registry);

        listener.onLeaseAcquired("Items", "a", 1);
        listener.onLeaseAcquired("Orders", "a", 4);
        assertThat(registry.get("tidemark.lease.held").tag("object", "Items").gauge().value()).isEqualTo(1.0);
        listener.onLeaseReleased("Items", "a", 1, true);
        listener.onLeaseReleased("Orders", "a", 4, false);
        listener.onLeaseAcquired("Items", "a", 3);

        assertThat(registry.get("tidemark.lease.held").tag("object", "Items").gauge().value()).isEqualTo(1.0);
        assertThat(registry.get("tidemark.lease.held").tag("object", "Orders").gauge().value()).isEqualTo(0.0);
        assertThat(registry.get("tidemark.lease.handovers").tags("object", "Items", "event", "acquired").counter()
                .count()).isEqualTo(2.0);
        assertThat(registry.get("tidemark.lease.handovers").tags("object", "Items", "event", "lost").counter()
                .count()).isEqualTo(1.0);
        assertThat(registry.get("tidemark.lease.handovers").tags("object", "Orders", "event", "released").counter()
                .count()).isEqualTo(1.0);
    }
}
