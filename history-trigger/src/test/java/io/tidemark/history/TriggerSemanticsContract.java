package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Every rule of the reference trigger, on Tidemark's generated trigger. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class TriggerSemanticsContract {

    /** The trigger mode under test; every scenario runs for both. */
    abstract TriggerMode mode();

    /** Where versions are kept; every scenario runs for each storage shape too. */
    HistoryStorage storage() {
        return HistoryStorage.HISTORY_TABLE;
    }


    private static final Duration MICRO = Duration.ofNanos(1000);

    private final DataSource ds;

    TriggerSemanticsContract(DataSource ds) {
        this.ds = ds;
    }

    @BeforeAll
    void install(DataSource ds) {
        Db.exec(ds, "CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12,2),"
                + " note text, blob bytea)");
        TemporalTable.forTable("accounts").exclude("blob").triggerMode(mode()).storage(storage()).build().install(ds);
    }

    @BeforeEach
    void clean() {
        Db.exec(ds, "DELETE FROM accounts; TRUNCATE accounts_history"
                + (storage() == HistoryStorage.CURRENT_IN_TABLE ? "_closed" : ""));
    }

    private Versions versions(int id) {
        return Versions.of(ds, "accounts_history", "id = ?", id);
    }

    @Test
    void insert_opens_a_version_at_the_transactions_now_with_operation_1() {
        Instant now = inTransaction("INSERT INTO accounts VALUES (1, 'ann', 10, NULL, NULL)");
        Versions v = versions(1);
        assertThat(v.ops()).containsExactly(1);
        assertThat(v.get(0).from()).isEqualTo(now);
        assertThat(v.get(0).to()).as("open: valid_to = infinity").isNull();
        assertThat(v.get(0).get("owner")).isEqualTo("ann");
        assertThat(v.get(0).row()).doesNotContainKey("blob");
    }

    @Test
    void update_closes_the_open_version_and_opens_the_next_exactly_where_it_ended() {
        Instant t1 = inTransaction("INSERT INTO accounts VALUES (1, 'ann', 10, NULL, NULL)");
        Instant t2 = inTransaction("UPDATE accounts SET balance = 20 WHERE id = 1");
        Versions v = versions(1);
        assertThat(v.ops()).containsExactly(1, 2);
        assertThat(v.get(0).from()).isEqualTo(t1);
        assertThat(v.get(0).to()).isEqualTo(t2);
        assertThat(v.get(1).from()).as("contiguous").isEqualTo(t2);
        assertThat(v.get(1).to()).isNull();
        assertThat(v.get(1).get("balance")).isEqualTo(new java.math.BigDecimal("20.00"));
    }

    @Test
    void an_update_that_changes_no_versioned_column_writes_nothing() {
        Db.exec(ds, "INSERT INTO accounts VALUES (1, 'ann', 10, 'x', NULL)");
        Db.exec(ds, "UPDATE accounts SET balance = 10, note = 'x' WHERE id = 1");
        Db.exec(ds, "UPDATE accounts SET blob = '\\x01' WHERE id = 1");
        assertThat(versions(1).ops()).as("same values, and a change of an excluded column only").containsExactly(1);
        Db.exec(ds, "UPDATE accounts SET note = NULL WHERE id = 1");
        assertThat(versions(1).ops()).as("a value set to NULL is a change").containsExactly(1, 2);
    }

    @Test
    void delete_closes_the_open_version_and_writes_a_tombstone_with_the_last_values_and_an_empty_period() {
        inTransaction("INSERT INTO accounts VALUES (1, 'ann', 10, NULL, NULL)");
        Instant t2 = inTransaction("DELETE FROM accounts WHERE id = 1");
        Versions v = versions(1);
        assertThat(v.ops()).containsExactly(1, 3);
        assertThat(v.get(0).to()).isEqualTo(t2);
        assertThat(v.get(1).from()).isEqualTo(t2);
        assertThat(v.get(1).to()).isEqualTo(t2);
        assertThat(v.get(1).get("owner")).isEqualTo("ann");
        assertThat(v.get(1).get("balance")).isEqualTo(new java.math.BigDecimal("10.00"));
    }

    @Test
    void changes_inside_one_transaction_are_clamped_one_microsecond_apart_keeping_every_period_positive() {
        Instant t = inTransaction("INSERT INTO accounts VALUES (1, 'ann', 10, NULL, NULL);"
                + " UPDATE accounts SET balance = 11 WHERE id = 1; UPDATE accounts SET balance = 12 WHERE id = 1;"
                + " DELETE FROM accounts WHERE id = 1");
        Versions v = versions(1);
        assertThat(v.ops()).containsExactly(1, 2, 2, 3);
        assertThat(v.get(0).from()).isEqualTo(t);
        assertThat(v.get(0).to()).isEqualTo(t.plus(MICRO));
        assertThat(v.get(1).from()).isEqualTo(t.plus(MICRO));
        assertThat(v.get(1).to()).isEqualTo(t.plus(MICRO).plus(MICRO));
        assertThat(v.get(2).to()).isEqualTo(t.plus(MICRO.multipliedBy(3)));
        assertThat(v.get(3).from()).isEqualTo(v.get(3).to()).isEqualTo(t.plus(MICRO.multipliedBy(3)));
    }

    @Test
    void change_context_is_written_to_the_context_columns_and_empty_values_become_null() throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SELECT set_config('tidemark.changed_by', 'u-42', true), set_config('tidemark.changed_by_name',"
                    + " 'Ann Smith', true), set_config('tidemark.correlation_id', 'req-7', true),"
                    + " set_config('tidemark.reason', '', true), set_config('tidemark.extra', '{\"ticket\": \"OPS-1\"}', true)");
            s.execute("INSERT INTO accounts VALUES (1, 'ann', 10, NULL, NULL)");
            c.commit();
        }
        Db.exec(ds, "UPDATE accounts SET balance = 5 WHERE id = 1");
        Versions v = versions(1);
        assertThat(v.get(0).row()).containsEntry("changed_by", "u-42").containsEntry("changed_by_name", "Ann Smith")
                .containsEntry("correlation_id", "req-7").containsEntry("reason", null);
        assertThat(v.get(0).get("extra").toString()).isEqualTo("{\"ticket\": \"OPS-1\"}");
        assertThat(v.get(1).row()).as("no context pushed: every context column NULL")
                .containsEntry("changed_by", null).containsEntry("changed_by_name", null)
                .containsEntry("correlation_id", null).containsEntry("reason", null).containsEntry("extra", null);
    }

    @Test
    void every_history_row_of_a_transaction_carries_its_instant_and_other_keys_are_independent() {
        Instant t = inTransaction("INSERT INTO accounts VALUES (1, 'ann', 10, NULL, NULL), (2, 'bob', 20, NULL, NULL)");
        assertThat(versions(1).get(0).from()).isEqualTo(t);
        assertThat(versions(2).get(0).from()).isEqualTo(t);
        Db.exec(ds, "UPDATE accounts SET balance = balance + 1");
        assertThat(versions(1).ops()).containsExactly(1, 2);
        assertThat(versions(2).ops()).containsExactly(1, 2);
    }

    @Test
    void statements_of_hundreds_of_rows_follow_the_same_rules() {
        // More rows than StatementTriggerSql.SMALL: statement triggers take their planned-afresh path here.
        Tx.run(ds, "INSERT INTO accounts SELECT g, 'o' || g, g, NULL, NULL FROM generate_series(1, 300) g");
        Db.exec(ds, "UPDATE accounts SET balance = balance + 1 WHERE id <= 200");
        Db.exec(ds, "UPDATE accounts SET note = NULL, blob = '\\x01'");            // changes no versioned column
        Db.exec(ds, "UPDATE accounts SET id = id + 1000 WHERE id > 200");          // 100 key changes
        Db.exec(ds, "DELETE FROM accounts WHERE id <= 150");
        Db.exec(ds, "INSERT INTO accounts SELECT g, 'again', 0, NULL, NULL FROM generate_series(1, 100) g");
        Map<Object, Long> ops = new java.util.TreeMap<>();
        for (Map<String, Object> r : Db.rows(ds, "SELECT operation, count(*) AS n FROM accounts_history GROUP BY 1")) {
            ops.put(((Number) r.get("operation")).intValue(), ((Number) r.get("n")).longValue());
        }
        assertThat(ops).containsExactly(Map.entry(1, 300L + 100 + 100), Map.entry(2, 200L), Map.entry(3, 100L + 150));
        assertThat(versions(1).ops()).containsExactly(1, 2, 3, 1);
        assertThat(versions(1).get(3).from()).isAfterOrEqualTo(versions(1).get(2).to());
        assertThat(versions(250).ops()).containsExactly(1, 3);
        assertThat(versions(1250).ops()).containsExactly(1);
        assertThat(versions(1250).get(0).from()).isEqualTo(versions(250).get(1).to());
    }

    private Instant inTransaction(String sql) {
        return Tx.run(ds, sql);
    }
}
