package io.tidemark.history;

import io.tidemark.sync.Operation;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link HistoryQueriesTest} with the current version kept in the table: the same answers. */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class CurrentHistoryQueriesTest {

    static final TemporalTable PRICES = TemporalTable.forTable("prices").storage(HistoryStorage.CURRENT_IN_TABLE).build();
    static Instant t1;
    static Instant t2;
    static Instant t3;
    static Instant t4;

    private final DataSource ds;
    private final HistoryQueries queries;

    CurrentHistoryQueriesTest(DataSource ds) {
        this.ds = ds;
        this.queries = PRICES.queries(ds);
    }

    @BeforeAll
    static void story(DataSource ds) {
        Db.exec(ds, "CREATE TABLE prices (sku text, region text, amount numeric(10,2), tags text[], meta json,"
                + " PRIMARY KEY (sku, region))");
        PRICES.install(ds);
        t1 = Tx.run(ds, "INSERT INTO prices VALUES ('A', 'eu', 10, '{x}', '{\"a\": 1}'), ('B', 'eu', 20, NULL, NULL)");
        t2 = Tx.run(ds, "UPDATE prices SET amount = 11, meta = '{\"a\":1}' WHERE sku = 'A'");
        t3 = Tx.run(ds, "SELECT set_config('tidemark.reason', 'discontinued', true);"
                + " DELETE FROM prices WHERE sku = 'B'");
        t4 = Tx.run(ds, "INSERT INTO prices VALUES ('B', 'eu', 25, NULL, NULL)");
    }

    private static Map<String, Object> amounts(List<HistoryRow> rows) {
        return rows.stream().collect(java.util.stream.Collectors.toMap(r -> (String) r.value("sku"),
                r -> r.value("amount")));
    }

    @Test
    void the_whole_table_as_of_each_instant() {
        assertThat(queries.asOf(t1.minus(Duration.ofSeconds(1)))).isEmpty();
        assertThat(amounts(queries.asOf(t1))).containsOnly(Map.entry("A", new BigDecimal("10.00")),
                Map.entry("B", new BigDecimal("20.00")));
        assertThat(amounts(queries.asOf(t2))).containsOnly(Map.entry("A", new BigDecimal("11.00")),
                Map.entry("B", new BigDecimal("20.00")));
        assertThat(amounts(queries.asOf(t3))).containsOnly(Map.entry("A", new BigDecimal("11.00")));
        assertThat(amounts(queries.asOf(t4))).containsOnly(Map.entry("A", new BigDecimal("11.00")),
                Map.entry("B", new BigDecimal("25.00")));
    }

    @Test
    void one_key_as_of_an_instant() {
        assertThat(queries.asOf(t1, "A", "eu")).get().extracting(r -> r.value("amount"))
                .isEqualTo(new BigDecimal("10.00"));
        assertThat(queries.asOf(t2.minusNanos(1000), "A", "eu").orElseThrow().value("amount"))
                .isEqualTo(new BigDecimal("10.00"));
        assertThat(queries.asOf(t3, "B", "eu")).as("deleted then").isEmpty();
        assertThat(queries.asOf(t1, "C", "eu")).isEmpty();
        HistoryRow a = queries.asOf(t1, "A", "eu").orElseThrow();
        assertThat(a.key()).containsExactly("A", "eu");
        assertThat((Object[]) a.value("tags")).containsExactly("x");
        assertThat(a.value("meta")).isEqualTo("{\"a\": 1}");
        assertThatThrownBy(() -> queries.asOf(t1, "A")).hasMessageContaining("has 2 value(s) [sku, region]");
    }

    @Test
    void versions_and_the_full_history_with_tombstones_and_their_context() {
        assertThat(queries.versions("B", "eu")).extracting(r -> r.value("amount"))
                .containsExactly(new BigDecimal("20.00"), new BigDecimal("25.00"));
        List<HistoryRow> history = queries.history("B", "eu");
        assertThat(history).extracting(HistoryRow::operation)
                .containsExactly(Operation.INSERT, Operation.DELETE, Operation.INSERT);
        HistoryRow tombstone = history.get(1);
        assertThat(tombstone.isTombstone()).isTrue();
        assertThat(tombstone.validFrom()).isEqualTo(t3);
        assertThat(tombstone.validTo()).contains(t3);
        assertThat(tombstone.value("amount")).as("last values").isEqualTo(new BigDecimal("20.00"));
        assertThat(tombstone.context().reason()).contains("discontinued");
        assertThat(history.get(0).validTo()).contains(t3);
        assertThat(history.get(2).isOpen()).isTrue();
        assertThat(history.get(2).validFrom()).isEqualTo(t4);
    }

    @Test
    void windows_overlapping_and_contained() {
        assertThat(queries.overlapping(t2, t3)).extracting(r -> r.value("sku") + ":" + r.value("amount"))
                .containsExactly("A:11.00", "B:20.00");
        assertThat(queries.containedIn(t1, t3)).extracting(r -> r.value("sku") + ":" + r.value("amount"))
                .containsExactly("A:10.00", "B:20.00");
        assertThat(queries.containedIn(t1, t2.minusNanos(1000))).isEmpty();
        assertThatThrownBy(() -> queries.overlapping(t3, t2)).hasMessageContaining("ends before it starts");
    }

    @Test
    void diff_of_two_versions_compares_values_not_spelling() {
        // The open version is the table's row and has no history_id until it is superseded: diff closed ones.
        Db.exec(ds, "INSERT INTO prices VALUES ('D', 'us', 10, NULL, NULL); UPDATE prices SET amount = 11,"
                + " meta = '{\"a\":1}' WHERE sku = 'D'; UPDATE prices SET tags = '{y}' WHERE sku = 'D'");
        List<HistoryRow> a = queries.versions("D", "us");
        assertThat(a.get(2).historyId()).as("open").isZero();
        VersionDiff diff = queries.diff(a.get(0).historyId(), a.get(1).historyId());
        assertThat(diff.changes()).containsOnlyKeys("amount", "meta");
        assertThat(diff.changes().get("amount")).isEqualTo(new VersionDiff.Change(new BigDecimal("10.00"),
                new BigDecimal("11.00")));
        assertThat(queries.diff(a.get(1).historyId(), a.get(1).historyId()).changes()).isEmpty();
        assertThatThrownBy(() -> queries.diff(a.get(0).historyId(), 999_999)).hasMessageContaining("999999");
        Db.exec(ds, "DELETE FROM prices WHERE sku = 'D'");
    }

    @Test
    void the_generated_as_of_function_makes_point_in_time_joins_plain_sql() {
        Db.exec(ds, "CREATE TABLE IF NOT EXISTS regions (code text PRIMARY KEY, name text);"
                + " INSERT INTO regions VALUES ('eu', 'Europe') ON CONFLICT DO NOTHING");
        List<Map<String, Object>> rows = Db.rows(ds, "SELECT p.sku, p.amount, r.name FROM prices_as_of(?) AS p"
                + " JOIN regions r ON r.code = p.region ORDER BY p.sku", java.sql.Timestamp.from(t2));
        assertThat(rows).extracting(r -> r.get("sku") + ":" + r.get("amount") + ":" + r.get("name"))
                .containsExactly("A:11.00:Europe", "B:20.00:Europe");
        assertThat(Db.count(ds, "SELECT count(*) FROM prices_as_of(?)", java.sql.Timestamp.from(t3))).isEqualTo(1);
    }
}
