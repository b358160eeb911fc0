package io.tidemark.postgres.outbox;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tidemark.postgres.PostgresProvider;
import io.tidemark.sync.InMemoryWatermarkStore;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.Outcome;
import io.tidemark.sync.SyncEngine;
import io.tidemark.sync.micrometer.MicrometerSyncListener;
import io.tidemark.testing.EmbeddedPostgresTest;
import io.tidemark.testing.RecordingDestination;
import io.tidemark.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code tidemark.horizon.age}: how long an old transaction has held an object's committed changes back, from the
 * PostgreSQL provider's {@code HORIZON_HELD_BACK} diagnostic, aged at each read and back to 0 once it ends.
 */
@EmbeddedPostgresTest
class HorizonAgeMetricTest {

    private final TestDatabase database;

    HorizonAgeMetricTest(TestDatabase database) {
        this.database = database;
    }

    private static final class TestClock extends Clock {
        private volatile Instant now = Instant.parse("2026-03-01T10:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    @Test
    void the_gauge_shows_the_age_of_the_transaction_holding_changes_back() {
        OutboxTables t = OutboxTables.create(database, "agemetric", "id int PRIMARY KEY, name text");
        TestClock clock = new TestClock();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (SyncEngine engine = SyncEngine.builder().name("agemetric").clock(clock)
                .provider(PostgresProvider.builder(database.dataSource()).listen(false).clock(clock)
                        .horizonWarningAfter(Duration.ofMinutes(1)).horizonCheckInterval(Duration.ofSeconds(30))
                        .build())
                .watermarks(InMemoryWatermarkStore.create())
                .track(t.outbox.track("Items").initialSync(InitialSync.INCREMENTAL))
                .destination("out", new RecordingDestination())
                .listener(MicrometerSyncListener.create(registry, clock)).build()) {
            assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.SEEDED);

            try (OpenTransaction holder = OpenTransaction.begin(t.dataSource())) {
                holder.takeXid();
                t.execute("INSERT INTO $T VALUES (1, 'waits')");
                engine.runOnce(); // the watch sees the horizon holding changes back from now on
                assertThat(age(registry)).as("below the threshold: no diagnostic yet").isZero();

                clock.advance(Duration.ofSeconds(61));
                engine.runOnce();
                assertThat(age(registry)).isEqualTo(61);
                clock.advance(Duration.ofSeconds(9));
                assertThat(age(registry)).as("aged at each read").isEqualTo(70);

                holder.commit();
                assertThat(engine.runOnce().get("Items").outcome()).isEqualTo(Outcome.DELIVERED);
                assertThat(age(registry)).isZero();
            }
        }
    }

    private static double age(SimpleMeterRegistry registry) {
        return registry.get("tidemark.horizon.age").tag("object", "Items").gauge().value();
    }
}
