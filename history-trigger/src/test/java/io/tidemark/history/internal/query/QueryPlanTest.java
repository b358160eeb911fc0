package io.tidemark.history.internal.query;

import io.tidemark.history.Db;
import io.tidemark.history.InvariantsAfterEach;
import io.tidemark.history.TemporalTable;
import io.tidemark.testing.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The statements the queries send can use the indexes they were written for (checked with EXPLAIN). */
@EmbeddedPostgresTest
@ExtendWith(InvariantsAfterEach.class)
class QueryPlanTest {

    @Test
    void snapshots_and_windows_use_the_period_index_and_key_queries_the_key_index(DataSource ds) throws SQLException {
        Db.exec(ds, "CREATE TABLE planned (id int PRIMARY KEY, v int);"
                + " INSERT INTO planned SELECT g, g FROM generate_series(1, 2000) g");
        TemporalTable table = TemporalTable.forTable("planned").periodIndex(true).build();
        table.install(ds);
        Db.exec(ds, "UPDATE planned SET v = v + 1 WHERE id % 3 = 0; ANALYZE planned_history");
        List<String> sql = new ArrayList<>();
        List<Object[]> params = new ArrayList<>();
        JdbcHistoryQueries queries = new JdbcHistoryQueries(table, ds, (s, p) -> {
            sql.add(s);
            params.add(p);
        });
        // A selective instant and window (a year back, before every version): the planner then has every reason to
        // use the period index, provided the predicate is written so that it can.
        Instant now = Instant.now();
        Instant yearAgo = now.minus(java.time.Duration.ofDays(365));
        queries.asOf(yearAgo);
        queries.overlapping(yearAgo.minusSeconds(60), yearAgo);
        queries.containedIn(yearAgo.minusSeconds(60), yearAgo);
        queries.asOf(now, 7);
        queries.history(7);
        assertThat(plan(ds, sql.get(0), params.get(0))).contains("planned_history_period_idx");
        assertThat(plan(ds, sql.get(1), params.get(1))).contains("planned_history_period_idx");
        assertThat(plan(ds, sql.get(2), params.get(2))).contains("planned_history_period_idx");
        assertThat(plan(ds, sql.get(3), params.get(3))).contains("planned_history_key_idx");
        assertThat(plan(ds, sql.get(4), params.get(4))).contains("planned_history_key_idx");
    }

    /** The plan with sequential scans priced out, so only an index the predicate can use shows up. */
    private static String plan(DataSource ds, String sql, Object[] params) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("SET enable_seqscan = off");
            try (PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
                for (int i = 0; i < params.length; i++) {
                    ps.setObject(i + 1, params[i]);
                }
                StringBuilder out = new StringBuilder();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.append(rs.getString(1)).append('\n');
                    }
                }
                return out.toString();
            }
        }
    }

}
