package io.tidemark.history;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Pruning closed versions in batches, never open ones, and refusing as-of answers before the horizon. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class RetentionTest {

    private final DataSource ds;
    private Instant now;

    RetentionTest(DataSource ds) {
        this.ds = ds;
    }

    /**
     * 20 keys: each inserted, updated twice; keys 1-5 deleted. Then the whole history is moved 100 days back, so
     * everything but the open versions ended long ago, and one more update per key 6-10 happens today.
     */
    @BeforeEach
    void history() {
        Db.exec(ds, "DROP TABLE IF EXISTS kept CASCADE; DROP TABLE IF EXISTS kept_history;"
                + " DROP FUNCTION IF EXISTS kept_history_write, kept_history_truncate, kept_as_of;"
                + " DO $$ BEGIN IF to_regclass('tidemark.temporal_tables') IS NOT NULL THEN"
                + " DELETE FROM tidemark.temporal_tables WHERE source_table = 'kept'; END IF; END $$");
        Db.exec(ds, "CREATE TABLE kept (id int PRIMARY KEY, v int)");
        table(Duration.ofDays(30)).install(ds);
        Db.exec(ds, "INSERT INTO kept SELECT g, 0 FROM generate_series(1, 20) g");
        Db.exec(ds, "UPDATE kept SET v = 1; UPDATE kept SET v = 2; DELETE FROM kept WHERE id <= 5");
        Db.exec(ds, "UPDATE kept_history SET valid_from = valid_from - interval '100 days',"
                + " valid_to = valid_to - interval '100 days'");
        now = Tx.run(ds, "UPDATE kept SET v = 3 WHERE id BETWEEN 6 AND 10");
    }

    private TemporalTable table(Duration retention) {
        return TemporalTable.forTable("kept").retention(retention).pruneBatchSize(7)
                .clock(Clock.fixed(Instant.now(), ZoneOffset.UTC)).build();
    }

    @Test
    void prune_deletes_closed_versions_before_the_cutoff_in_batches_and_never_an_open_version() {
        long open = Db.count(ds, "SELECT count(*) FROM kept_history WHERE valid_to = 'infinity'");
        long closed = Db.count(ds, "SELECT count(*) FROM kept_history WHERE valid_to < now() - interval '30 days'");
        PruneReport report = table(Duration.ofDays(30)).prune(ds);
        assertThat(report.deletedRows()).isEqualTo(closed).isEqualTo(20 * 2 + 5 + 5); // two closed per key, deleted keys' last and tombstone
        assertThat(report.batches()).isEqualTo((int) (closed / 7) + 1);
        assertThat(Db.count(ds, "SELECT count(*) FROM kept_history WHERE valid_to = 'infinity'")).isEqualTo(open);
        assertThat(Db.count(ds, "SELECT count(*) FROM kept_history WHERE valid_to < now() - interval '30 days'"))
                .isZero();
        assertThat(Db.count(ds, "SELECT count(*) FROM kept_history WHERE id BETWEEN 6 AND 10"))
                .as("today's closed versions are kept").isEqualTo(10);
    }

    @Test
    void an_as_of_query_before_the_horizon_fails_instead_of_answering_wrong() {
        TemporalTable kept = table(Duration.ofDays(30));
        HistoryQueries before = kept.queries(ds);
        assertThat(before.asOf(now.minus(Duration.ofDays(60)))).as("complete before pruning: rows 6-20").hasSize(15);
        Instant horizon = kept.prune(ds).horizon();
        assertThatThrownBy(() -> before.asOf(now.minus(Duration.ofDays(60))))
                .as("the horizon is read with every query, not cached").hasMessageContaining("was pruned");
        assertThat(horizon).isEqualTo(kept.clock().instant().minus(Duration.ofDays(30))
                .truncatedTo(java.time.temporal.ChronoUnit.MICROS));
        assertThatThrownBy(() -> kept.queries(ds).asOf(horizon.minusSeconds(1)))
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.HISTORY_PRUNED))
                .hasMessageContaining("ask for an instant at or after");
        assertThatThrownBy(() -> kept.queries(ds).asOf(horizon.minusSeconds(1), 6))
                .hasMessageContaining("was pruned");
        assertThatThrownBy(() -> kept.queries(ds).overlapping(horizon.minusSeconds(1), now))
                .hasMessageContaining("was pruned");
        assertThatThrownBy(() -> Db.count(ds, "SELECT count(*) FROM kept_as_of(?)",
                Timestamp.from(horizon.minusSeconds(1)))).hasMessageContaining("before").hasMessageContaining("was pruned");
        assertThat(kept.queries(ds).asOf(horizon)).as("complete at the horizon: rows 6-20").hasSize(15);
        assertThat(Db.count(ds, "SELECT count(*) FROM kept_as_of(?)", Timestamp.from(horizon))).isEqualTo(15);
    }

    @Test
    void the_horizon_never_moves_back() {
        Instant first = table(Duration.ofDays(30)).prune(ds).horizon();
        Instant second = table(Duration.ofDays(60)).prune(ds).horizon();
        assertThat(second).isEqualTo(first);
    }

    @Test
    void prune_needs_a_retention_or_a_cutoff() {
        TemporalTable noRetention = TemporalTable.forTable("kept").build();
        assertThatThrownBy(() -> noRetention.prune(ds))
                .isInstanceOfSatisfying(TidemarkException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
                .hasMessageContaining("no retention is configured");
        assertThat(noRetention.prune(ds, now.minus(Duration.ofDays(1))).deletedRows()).isEqualTo(50);
    }
}
