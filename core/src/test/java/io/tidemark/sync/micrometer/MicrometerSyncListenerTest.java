package io.tidemark.sync.micrometer;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.sync.ChangeBatch;
import io.tidemark.sync.Diagnostic;
import io.tidemark.sync.ObjectReport;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncType;
import io.tidemark.sync.spi.DeadLetter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

class MicrometerSyncListenerTest {

    @Test
    void counts_cycles_changes_dead_letters_and_tracks_the_watermark() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerSyncListener listener = MicrometerSyncListener.create(registry);

        listener.onReport(report(Outcome.DELIVERED, 120, 40, 1));
        listener.onReport(report(Outcome.DELIVERED, 150, 10, 0));
        listener.onReport(report(Outcome.BLOCKED, 150, 7, 0));
        listener.onDiagnostic("Items", Diagnostic.warning("HORIZON_HELD_BACK", "old transaction"));

        assertThat(registry.get("tidemark.cycles").tag("object", "Items").tag("outcome", "DELIVERED").counter().count()).isEqualTo(2);
        assertThat(registry.get("tidemark.cycles").tag("outcome", "BLOCKED").counter().count()).isEqualTo(1);
        assertThat(registry.get("tidemark.changes").tag("object", "Items").counter().count()).isEqualTo(50);
        assertThat(registry.find("tidemark.dead.letters").counter()).as("counted from the letters, not the reports")
                .isNull();
        assertThat(registry.get("tidemark.watermark").tag("object", "Items").gauge().value()).isEqualTo(150);
        assertThat(registry.get("tidemark.cycle.duration").timer().count()).isEqualTo(3);
        assertThat(registry.get("tidemark.diagnostics").tag("code", "HORIZON_HELD_BACK").counter().count()).isEqualTo(1);
    }

    @Test
    void counts_new_dead_letters_and_every_recorded_failure_per_object_and_destination() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MicrometerSyncListener listener = MicrometerSyncListener.create(registry);
        Instant at = Instant.parse("2026-01-01T00:00:00Z");
        ChangeBatch page = new ChangeBatch("Items", 1, 2, SyncType.DIFF, 0, List.of(), 1, 1, 0);
        DeadLetter first = DeadLetter.of(page, "audit", new IllegalStateException("down"), at).withId(7);

        listener.onDeadLetter(first);
        listener.onDeadLetter(first.withFailure(new DeadLetter.Failure(at.plusSeconds(5), "still down")));
        listener.onDeadLetter(DeadLetter.of(page, "search", new IllegalStateException("down"), at).withId(8));

        assertThat(registry.get("tidemark.dead.letters").tag("object", "Items").tag("destination", "audit")
                .counter().count()).isEqualTo(1);
        assertThat(registry.get("tidemark.dead.letter.failures").tag("destination", "audit").counter().count())
                .isEqualTo(2);
        assertThat(registry.get("tidemark.dead.letters").tag("destination", "search").counter().count()).isEqualTo(1);
    }

    private static ObjectReport report(Outcome outcome, long to, long changes, int deadLettered) {
        return ObjectReport.builder("Items", Instant.EPOCH).outcome(outcome).fromVersion(OptionalLong.of(100))
                .toVersion(OptionalLong.of(to)).changeCount(changes).deadLetteredPages(deadLettered)
                .duration(Duration.ofMillis(12)).build();
    }
}
