package io.tidemark.history;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;

/** Runs SQL in one transaction and returns that transaction's now(): the instant its history rows carry. */
public final class Tx {

    private Tx() {
    }

    public static Instant run(DataSource ds, String sql) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            Instant now;
            try (ResultSet rs = s.executeQuery("SELECT now()")) {
                rs.next();
                now = rs.getTimestamp(1).toInstant();
            }
            s.execute(sql);
            c.commit();
            return now;
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage() + "\n" + sql, e);
        }
    }
}
