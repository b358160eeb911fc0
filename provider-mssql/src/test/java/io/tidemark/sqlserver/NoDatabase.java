package io.tidemark.sqlserver;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A data source for tests that must not reach a database: every connection attempt is counted and fails with
 * the SQLState of an unreachable server, so a test can prove that something was refused before any SQL ran, or
 * see how a connection failure is reported.
 */
public final class NoDatabase extends TestDataSource {

    private final AtomicInteger attempts = new AtomicInteger();

    public int attempts() {
        return attempts.get();
    }

    @Override
    public Connection getConnection() throws SQLException {
        attempts.incrementAndGet();
        throw new SQLException("no database in this test", "08001");
    }
}
