package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;

import static io.tidemark.history.InvariantViolation.Kind.CHAIN_NOT_TERMINATED;
import static io.tidemark.history.InvariantViolation.Kind.GAP;
import static io.tidemark.history.InvariantViolation.Kind.MULTIPLE_OPEN;
import static io.tidemark.history.InvariantViolation.Kind.NEGATIVE_PERIOD;
import static io.tidemark.history.InvariantViolation.Kind.OPEN_VERSION_WITHOUT_ROW;
import static io.tidemark.history.InvariantViolation.Kind.OVERLAP;
import static io.tidemark.history.InvariantViolation.Kind.ROW_WITHOUT_OPEN_VERSION;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checker finds each kind of damage. The history is damaged on purpose here (constraints dropped, trigger
 * disabled), so this class does not run the after-each check.
 */
@EmbeddedPostgresTest
class InvariantCheckerTest {

    private final DataSource ds;
    private final TemporalTable table = TemporalTable.forTable("checked").build();

    InvariantCheckerTest(DataSource ds) {
        this.ds = ds;
    }

    @BeforeEach
    void healthyHistory() {
        Db.exec(ds, "DROP TABLE IF EXISTS checked CASCADE; DROP TABLE IF EXISTS checked_history;"
                + " DROP FUNCTION IF EXISTS checked_history_write, checked_history_truncate, checked_as_of;"
                + " DO $$ BEGIN IF to_regclass('tidemark.temporal_tables') IS NOT NULL THEN"
                + " DELETE FROM tidemark.temporal_tables WHERE source_table = 'checked'; END IF; END $$");
        Db.exec(ds, "CREATE TABLE checked (id int PRIMARY KEY, v int)");
        table.install(ds);
        Db.exec(ds, "INSERT INTO checked SELECT g, 0 FROM generate_series(1, 5) g");
        Db.exec(ds, "UPDATE checked SET v = 1 WHERE id IN (1, 2); DELETE FROM checked WHERE id = 3");
        Db.exec(ds, "ALTER TABLE checked_history DROP CONSTRAINT checked_history_check;"
                + " DROP INDEX IF EXISTS checked_history_period_idx; DROP INDEX checked_history_open_uq;"
                + " DROP INDEX checked_history_chain_uq");
    }

    private java.util.List<InvariantViolation.Kind> kinds() {
        return table.checkInvariants(ds).stream().map(InvariantViolation::kind).toList();
    }

    @Test
    void a_healthy_history_has_no_violation() {
        assertThat(table.checkInvariants(ds)).isEmpty();
    }

    @Test
    void finds_a_negative_period() {
        Db.exec(ds, "UPDATE checked_history SET valid_to = valid_from - interval '1 second'"
                + " WHERE id = 1 AND operation = 1");
        assertThat(kinds()).contains(NEGATIVE_PERIOD);
    }

    @Test
    void finds_overlapping_periods() {
        Db.exec(ds, "UPDATE checked_history SET valid_from = valid_from - interval '1 hour'"
                + " WHERE id = 1 AND operation = 2");
        assertThat(table.checkInvariants(ds)).anySatisfy(v -> {
            assertThat(v.kind()).isEqualTo(OVERLAP);
            assertThat(v.key()).containsExactly("1");
            assertThat(v.historyIds()).hasSize(2);
        });
    }

    @Test
    void finds_a_gap_inside_a_chain() {
        Db.exec(ds, "UPDATE checked_history SET valid_to = valid_to - interval '1 microsecond'"
                + " WHERE id = 2 AND operation = 1");
        assertThat(kinds()).containsExactly(GAP);
    }

    @Test
    void finds_more_than_one_open_version() {
        Db.exec(ds, "INSERT INTO checked_history (id, v, valid_from, operation, chain_no)"
                + " VALUES (4, 9, now() + interval '1 hour', 2, 1)");
        assertThat(kinds()).contains(MULTIPLE_OPEN);
    }

    @Test
    void finds_open_versions_without_rows_and_rows_without_open_versions() {
        Db.exec(ds, "ALTER TABLE checked DISABLE TRIGGER checked_history_trg;"
                + " DELETE FROM checked WHERE id = 4; INSERT INTO checked VALUES (6, 0)");
        assertThat(kinds()).containsExactlyInAnyOrder(OPEN_VERSION_WITHOUT_ROW, ROW_WITHOUT_OPEN_VERSION);
    }

    @Test
    void finds_a_closed_version_that_nothing_follows() {
        Db.exec(ds, "DELETE FROM checked_history WHERE id = 3 AND operation = 3");
        assertThat(kinds()).containsExactly(CHAIN_NOT_TERMINATED);
    }
}
