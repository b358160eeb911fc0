package io.tidemark.benchmarks.capture;

import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The database a capture benchmark writes to, on one of two embedded PostgreSQL 18 servers:
 * <ul>
 *   <li>{@link #fast()}: a fresh database on the test fixtures' server ({@link EmbeddedPostgresServer}), which runs
 *       with {@code fsync} and {@code full_page_writes} off: a commit waits for no disk;</li>
 *   <li>{@link #durable()}: a server of its own with the same settings except those two, left on as on a
 *       production server (the fixture passes them on the command line, where {@code ALTER SYSTEM} cannot
 *       override them).</li>
 * </ul>
 */
final class BenchServer implements AutoCloseable {

    private final String jdbcUrl;
    private final DataSource admin;
    private final AutoCloseable owner;

    private BenchServer(String jdbcUrl, DataSource admin, AutoCloseable owner) {
        this.jdbcUrl = jdbcUrl;
        this.admin = admin;
        this.owner = owner;
    }

    static BenchServer fast() {
        TestDatabase database = EmbeddedPostgresServer.shared().createDatabase();
        return new BenchServer(database.jdbcUrl(), database.dataSource(), database);
    }

    static BenchServer durable() throws Exception {
        EmbeddedPostgres postgres = EmbeddedPostgres.builder()
                .setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("fsync", "on")
                .setServerConfig("full_page_writes", "on")
                .setServerConfig("max_connections", "300")
                .setServerConfig("max_locks_per_transaction", "256")
                .setServerConfig("shared_buffers", "256MB")
                .setServerConfig("log_min_messages", "warning")
                .start();
        return new BenchServer(postgres.getJdbcUrl("postgres", "postgres"), postgres.getPostgresDatabase(),
                postgres);
    }

    /**
     * As {@link #fast()}, on a server of its own that loads {@code pg_stat_statements} (it needs a restart to
     * load, which the shared test server cannot have): for a breakdown of what each statement costs.
     */
    static BenchServer withStatementStats() throws Exception {
        EmbeddedPostgres postgres = EmbeddedPostgres.builder()
                .setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("fsync", "off")
                .setServerConfig("full_page_writes", "off")
                .setServerConfig("max_connections", "300")
                .setServerConfig("shared_buffers", "256MB")
                .setServerConfig("log_min_messages", "warning")
                .setServerConfig("shared_preload_libraries", "pg_stat_statements")
                .setServerConfig("pg_stat_statements.track", "top")
                .setServerConfig("pg_stat_statements.track_utility", "on")
                .start();
        return new BenchServer(postgres.getJdbcUrl("postgres", "postgres"), postgres.getPostgresDatabase(),
                postgres);
    }

    /** Connections as the superuser; each call opens a new one. */
    DataSource admin() {
        return admin;
    }

    /** Connections as the superuser under {@code applicationName}, to tell the benchmark's backends apart. */
    DataSource dataSource(String applicationName) {
        return CaptureBench.dataSource(jdbcUrl, applicationName);
    }

    /** The server's version and the two settings that decide what a commit waits for. */
    String describe() throws SQLException {
        try (Connection c = admin.getConnection()) {
            return "PostgreSQL " + CaptureBench.text(c, "SHOW server_version") + " (embedded, fsync "
                    + CaptureBench.text(c, "SHOW fsync") + ", full_page_writes "
                    + CaptureBench.text(c, "SHOW full_page_writes") + ")";
        }
    }

    @Override
    public void close() throws Exception {
        owner.close();
    }
}
