package io.tidemark.history.internal.ddl;

import io.tidemark.history.Db;
import io.tidemark.history.InstallReport;
import io.tidemark.history.InvariantsAfterEach;
import io.tidemark.history.TemporalTable;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The batched seed writes exactly the history the single-statement seed writes, whatever the key: each batch
 * continues after the previous batch's last key, read back as text and cast to the key's type.
 */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class SeedBatchesTest {

    /** A composite key of a collated text and a timestamp, with values whose text forms sort differently. */
    private static final String TABLE = """
            CREATE TABLE %s (
                code   text COLLATE "C",
                at     timestamptz,
                n      numeric,
                id     uuid DEFAULT gen_random_uuid(),
                note   text,
                PRIMARY KEY (code, at)
            );
            INSERT INTO %s (code, at, n, note)
            SELECT c, TIMESTAMPTZ '2026-01-01 00:00:00.123456+00' + g * INTERVAL '1 day 1 second', g / 7.0, 'note ' || g
              FROM unnest(ARRAY['a', 'A', 'b b', 'b''quote', 'é', 'z', '10', '9', '']) AS c,
                   generate_series(1, 11) AS g""";

    @Test
    void batches_write_the_same_history_as_one_statement(DataSource ds) {
        Db.exec(ds, TABLE.formatted("batched", "batched") + ";" + TABLE.formatted("whole", "whole"));
        List<String> calls = new ArrayList<>();

        InstallReport batched = new Installer(TemporalTable.forTable("batched").build())
                .install(ds, (done, total) -> calls.add(done + "/" + total), 7);
        InstallReport whole = TemporalTable.forTable("whole").build().install(ds);

        assertThat(batched.seededRows()).isEqualTo(whole.seededRows()).isEqualTo(99);
        assertThat(calls).as("0, then 7 more rows per batch, then the last 1").hasSize(1 + 15)
                .startsWith("0/99", "7/99", "14/99").endsWith("98/99", "99/99");
        String columns = "code, at, n, id, note, valid_to, operation, chain_no";
        assertThat(Db.rows(ds, "SELECT " + columns + " FROM batched_history ORDER BY code, at"))
                .as("every row once, with its values")
                .isEqualTo(Db.rows(ds, "SELECT " + columns.replace("id,", "(SELECT b.id FROM batched b WHERE b.code"
                        + " = w.code AND b.at = w.at) AS id,") + " FROM whole_history w ORDER BY code, at"));
        assertThat(Db.count(ds, "SELECT count(DISTINCT valid_from) FROM batched_history"))
                .as("one install instant for every batch").isEqualTo(1);
    }

    @Test
    void the_seed_column_dates_versions_in_every_batch(DataSource ds) {
        Db.exec(ds, "CREATE TABLE dated (id int PRIMARY KEY, created date);"
                + " INSERT INTO dated SELECT g, DATE '2020-01-01' + g FROM generate_series(1, 30) g");

        new Installer(TemporalTable.forTable("dated").seedValidFrom("created").build())
                .install(ds, (done, total) -> { }, 4);

        assertThat(Db.count(ds, "SELECT count(*) FROM dated_history h JOIN dated d USING (id)"
                + " WHERE h.valid_from = d.created::timestamptz")).isEqualTo(30);
    }

    /** Between batches the install still holds its lock: a writer waits, so nothing slips past the seed. */
    @Test
    void writers_are_kept_out_between_batches(DataSource ds) {
        Db.exec(ds, "CREATE TABLE locked (id int PRIMARY KEY); INSERT INTO locked SELECT generate_series(1, 10)");
        List<String> attempts = new ArrayList<>();

        new Installer(TemporalTable.forTable("locked").build()).install(ds, (done, total) -> {
            if (done > 0 && done < total) {
                assertThatThrownBy(() -> insertWithin100ms(ds, 1000 + done))
                        .isInstanceOf(SQLException.class)
                        .hasMessageContaining("lock timeout");
                attempts.add("refused at " + done);
            }
        }, 3);

        assertThat(attempts).containsExactly("refused at 3", "refused at 6", "refused at 9");
        assertThat(Db.rows(ds, "SELECT count(*) AS rows FROM locked_history")).containsExactly(Map.of("rows", 10L));
    }

    private static void insertWithin100ms(DataSource ds, long id) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET lock_timeout = '100ms'");
            s.execute("INSERT INTO locked VALUES (" + id + ")");
        }
    }
}
