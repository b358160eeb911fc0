package io.tidemark.sync.micrometer;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.sync.DestinationReport;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

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

    @Test
    void an_objects_gauges_leave_with_its_lease_and_come_back_with_it() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Instant now = Instant.parse("2026-01-01T00:10:00Z");
        MicrometerSyncListener listener = MicrometerSyncListener.create(registry, Clock.fixed(now, ZoneOffset.UTC));
        listener.onLeaseAcquired("Items", "a", 1);
        listener.onReport(delivered("Items", now));
        listener.onPosition("Items", OptionalLong.of(7), OptionalLong.of(3), Optional.of(now.minusSeconds(60)));
        assertThat(registry.get("tidemark.lag.seconds").tag("object", "Items").gauge().value()).isEqualTo(60.0);
        assertThat(registry.get("tidemark.destination.position").tags("object", "Items", "destination", "d1")
                .gauge().value()).isEqualTo(7.0);

        listener.onLeaseReleased("Items", "a", 1, true);
        // The former holder's last cycle ends after the lease went: it must not bring the gauges back.
        listener.onReport(delivered("Items", now));
        listener.onPosition("Items", OptionalLong.of(7), OptionalLong.of(3), Optional.of(now.minusSeconds(60)));

        for (String gauge : List.of("tidemark.watermark", "tidemark.lag.versions", "tidemark.lag.seconds",
                "tidemark.blocked", "tidemark.horizon.age", "tidemark.destination.position",
                "tidemark.destination.blocked")) {
            assertThat(registry.find(gauge).tag("object", "Items").meters()).as(gauge).isEmpty();
        }
        assertThat(registry.get("tidemark.lease.held").tag("object", "Items").gauge().value()).isEqualTo(0.0);
        assertThat(registry.get("tidemark.cycles").tag("object", "Items").counter().count())
                .as("counters stay: they count what this instance did").isEqualTo(2.0);

        listener.onLeaseAcquired("Items", "a", 3);
        listener.onReport(delivered("Items", now));
        listener.onPosition("Items", OptionalLong.of(9), OptionalLong.of(0), Optional.of(now.minusSeconds(5)));
        assertThat(registry.get("tidemark.lag.seconds").tag("object", "Items").gauge().value()).isEqualTo(5.0);
        assertThat(registry.get("tidemark.watermark").tag("object", "Items").gauge().value()).isEqualTo(7.0);
    }

    /**
     * A cycle's report on the cycle's thread while the lease thread reports the lease lost: the removal must not slip
     * in between the report's "still held" check and its gauge registrations, or the gauges come back and stay,
     * frozen, on an instance that no longer holds the object. The report is held while it registers its first
     * counter (a meter filter, outside the registry's lock); the lease is lost meanwhile.
     */
    @Test
    void a_lease_lost_while_a_report_is_being_published_leaves_no_gauges() throws Exception {
        CountDownLatch publishing = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        AtomicBoolean hold = new AtomicBoolean(true);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                if (id.getName().equals("tidemark.cycles") && hold.getAndSet(false)) {
                    publishing.countDown();
                    try {
                        resume.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return id;
            }
        });
        Instant now = Instant.parse("2026-01-01T00:10:00Z");
        MicrometerSyncListener listener = MicrometerSyncListener.create(registry, Clock.fixed(now, ZoneOffset.UTC));
        listener.onLeaseAcquired("Items", "a", 1);

        Thread cycle = new Thread(() -> listener.onReport(delivered("Items", now)), "cycle");
        cycle.start();
        assertThat(publishing.await(10, TimeUnit.SECONDS)).as("the report is being published").isTrue();
        Thread lease = new Thread(() -> listener.onLeaseReleased("Items", "a", 1, true), "lease");
        lease.start();
        lease.join(10_000);
        assertThat(lease.isAlive()).as("the lease thread is not held up by the report's counters").isFalse();
        resume.countDown();
        cycle.join(10_000);

        for (String gauge : List.of("tidemark.watermark", "tidemark.blocked", "tidemark.horizon.age",
                "tidemark.destination.position", "tidemark.destination.blocked")) {
            assertThat(registry.find(gauge).tag("object", "Items").meters()).as(gauge).isEmpty();
        }
        assertThat(registry.get("tidemark.cycles").tag("object", "Items").counter().count()).isEqualTo(1.0);
    }

    private static ObjectReport delivered(String object, Instant at) {
        return ObjectReport.builder(object, at).outcome(Outcome.DELIVERED).fromVersion(OptionalLong.of(4))
                .toVersion(OptionalLong.of(7)).changeCount(3).pageCount(1).duration(Duration.ofMillis(5))
                .destinations(List.of(new DestinationReport("d1", Outcome.DELIVERED, OptionalLong.of(4),
                        OptionalLong.of(7), 1, 0, Optional.empty())))
                .build();
    }
}
