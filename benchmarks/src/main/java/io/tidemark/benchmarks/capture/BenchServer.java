package io.tidemark.benchmarks.capture;

import io.tidemark.testing.EmbeddedPostgresServer;
import io.tidemark.testing.TestDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

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
        return own(Map.of("fsync", "on", "full_page_writes", "on"));
    }

    /**
     * As {@link #fast()}, on a server of its own that loads {@code pg_stat_statements} (it needs a restart to
     * load, which the shared test server cannot have): for a breakdown of what each statement costs.
     */
    static BenchServer withStatementStats() throws Exception {
        return own(Map.of("shared_preload_libraries", "pg_stat_statements", "pg_stat_statements.track", "top",
                "pg_stat_statements.track_utility", "on", "pg_stat_statements.track_planning", "on"));
    }

    /**
     * As {@link #fast()}, on a server of its own at {@code walLevel}: {@code logical} for the log-based capture (the
     * test fixtures' server runs at it too), {@code replica} (PostgreSQL's default) for what a server without logical
     * decoding writes.
     */
    static BenchServer withWalLevel(String walLevel) throws Exception {
        return own(Map.of("wal_level", walLevel));
    }

    /** At {@code wal_level = logical} and with {@code pg_stat_statements} loaded: the log-based engine's statements. */
    static BenchServer logicalWithStatementStats() throws Exception {
        return own(Map.of("wal_level", "logical", "shared_preload_libraries", "pg_stat_statements",
                "pg_stat_statements.track", "top", "pg_stat_statements.track_utility", "on", "pg_stat_statements.track_planning", "on"));
    }

    /** A server of its own with the fixture's settings ({@code fsync} off and the rest), {@code settings} over them. */
    private static BenchServer own(Map<String, String> settings) throws Exception {
        Map<String, String> config = new LinkedHashMap<>(Map.of("fsync", "off", "full_page_writes", "off",
                "max_connections", "300", "max_locks_per_transaction", "256", "shared_buffers", "256MB",
                "log_min_messages", "warning"));
        config.putAll(settings);
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder().setPGStartupWait(Duration.ofSeconds(60));
        config.forEach(builder::setServerConfig);
        EmbeddedPostgres postgres = builder.start();
        return new BenchServer(postgres.getJdbcUrl("postgres", "postgres"), postgres.getPostgresDatabase(),
                postgres);
    }

    /** The JDBC URL of the benchmark database, as the superuser. */
    String jdbcUrl() {
        return jdbcUrl;
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
                    + CaptureBench.text(c, "SHOW full_page_writes") + ", synchronous_commit "
                    + CaptureBench.text(c, "SHOW synchronous_commit") + ", wal_level "
                    + CaptureBench.text(c, "SHOW wal_level") + ")";
        }
    }

    @Override
    public void close() throws Exception {
        owner.close();
    }
}
