package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The documented limitation of key changes: with a DEFERRABLE primary key one UPDATE statement can swap two keys.
 * The row trigger sees the first row move onto a key whose own move it has not seen yet and refuses the statement
 * rather than record it wrong; statement triggers pair old and new rows by key and record two updates.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class KeySwapTest {

    private static final String TABLE = "(id int PRIMARY KEY DEFERRABLE INITIALLY DEFERRED, v text)";

    @Test
    void the_row_trigger_refuses_a_key_swap_in_one_statement(DataSource ds) {
        Db.exec(ds, "CREATE TABLE swap_row " + TABLE + "; INSERT INTO swap_row VALUES (1, 'a'), (2, 'b')");
        TemporalTable.forTable("swap_row").build().install(ds);
        assertThatThrownBy(() -> Db.exec(ds, "UPDATE swap_row SET id = 3 - id"))
                .hasMessageContaining("already has an open version for key");
        assertThat(Db.rows(ds, "SELECT id, v FROM swap_row ORDER BY id")).extracting(r -> r.get("v"))
                .containsExactly("a", "b");
    }

    @Test
    void statement_triggers_record_a_key_swap_as_two_updates(DataSource ds) {
        Db.exec(ds, "CREATE TABLE swap_stmt " + TABLE + "; INSERT INTO swap_stmt VALUES (1, 'a'), (2, 'b')");
        TemporalTable.forTable("swap_stmt").triggerMode(TriggerMode.STATEMENT).build().install(ds);
        Db.exec(ds, "UPDATE swap_stmt SET id = 3 - id");
        assertThat(Versions.of(ds, "swap_stmt_history", "id = 1").ops()).containsExactly(1, 2);
        assertThat(Versions.of(ds, "swap_stmt_history", "id = 1").last().get("v")).isEqualTo("b");
        assertThat(Versions.of(ds, "swap_stmt_history", "id = 2").last().get("v")).isEqualTo("a");
    }
}
