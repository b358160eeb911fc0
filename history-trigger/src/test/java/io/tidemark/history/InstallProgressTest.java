package io.tidemark.history;

import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** install(dataSource, progress): the seed is reported from 0 to the table's row count, and writes what install does. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class InstallProgressTest {

    @Test
    void the_seed_is_reported_from_zero_to_the_row_count(DataSource ds) {
        Db.exec(ds, "CREATE TABLE reported (id int PRIMARY KEY, name text);"
                + " INSERT INTO reported SELECT g, 'n' || g FROM generate_series(1, 45000) g");
        List<long[]> calls = new ArrayList<>();

        InstallReport report = TemporalTable.forTable("reported").build()
                .install(ds, (done, total) -> calls.add(new long[] {done, total}));

        assertThat(report.created()).isTrue();
        assertThat(report.seededRows()).isEqualTo(45000);
        assertThat(calls).as("a call before the first batch, then one per batch of 20,000")
                .extracting(c -> c[0] + "/" + c[1])
                .containsExactly("0/45000", "20000/45000", "40000/45000", "45000/45000");
        assertThat(Db.count(ds, "SELECT count(*) FROM reported_history WHERE valid_to = 'infinity'")).isEqualTo(45000);
    }

    @Test
    void an_empty_table_reports_zero_of_zero_once(DataSource ds) {
        Db.exec(ds, "CREATE TABLE nothing_yet (id int PRIMARY KEY)");
        List<String> calls = new ArrayList<>();

        InstallReport report = TemporalTable.forTable("nothing_yet").build()
                .install(ds, (done, total) -> calls.add(done + "/" + total));

        assertThat(report.seededRows()).isZero();
        assertThat(calls).containsExactly("0/0");
    }

    @Test
    void an_installed_table_is_not_seeded_again_and_nothing_is_reported(DataSource ds) {
        Db.exec(ds, "CREATE TABLE installed_once (id int PRIMARY KEY); INSERT INTO installed_once VALUES (1), (2)");
        TemporalTable table = TemporalTable.forTable("installed_once").build();
        table.install(ds);
        List<String> calls = new ArrayList<>();

        InstallReport again = table.install(ds, (done, total) -> calls.add(done + "/" + total));

        assertThat(again.created()).isFalse();
        assertThat(calls).isEmpty();
        assertThat(Db.count(ds, "SELECT count(*) FROM installed_once_history")).isEqualTo(2);
    }
}
