package io.tidemark.sqlserver;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * Waits for a state of the server that a query can see (a session waiting, a lock held), asking the server again
 * until it answers or the time is up. The pause between questions is a {@code WAITFOR} on the server, so the test
 * never guesses how long something takes.
 */
final class ServerWait {

    private ServerWait() {
    }

    /** Waits until {@code countQuery} returns more than zero; fails after {@code timeout}. */
    static void until(DataSource dataSource, String countQuery, Duration timeout) throws SQLException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            while (true) {
                try (ResultSet rs = s.executeQuery(countQuery)) {
                    rs.next();
                    if (rs.getLong(1) > 0) {
                        return;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("Still not seen after " + timeout + ": " + countQuery);
                }
                s.execute("WAITFOR DELAY '00:00:00.020'");
            }
        }
    }
}
