package io.tidemark.testing;

import com.microsoft.sqlserver.jdbc.SQLServerDataSource;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.sql.SqlServerName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.mssqlserver.MSSQLServerContainer;
import org.testcontainers.utility.DockerImageName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A SQL Server started in a container by Testcontainers, once per JVM ({@link #shared()}); each test class takes a
 * fresh database from it ({@link #createDatabase()}). Testcontainers removes the container when the JVM ends.
 *
 * <p>The image is {@value #DEFAULT_IMAGE} unless the system property {@value #IMAGE_PROPERTY} names another. Its
 * EULA must be accepted by the project that runs it, the Testcontainers way: a file
 * {@code container-license-acceptance.txt} on the test classpath holding the image name. Tidemark does not accept
 * it on anyone's behalf.
 */
public final class SqlServerContainerServer {

    public static final String DEFAULT_IMAGE = "mcr.microsoft.com/mssql/server:2022-latest";
    public static final String IMAGE_PROPERTY = "tidemark.sqlserver.image";

    private static final Logger LOG = LoggerFactory.getLogger(SqlServerContainerServer.class);
    private static final Object LOCK = new Object();
    private static volatile SqlServerContainerServer shared;
    /** A start that failed is not tried again by every test class of the JVM. */
    private static volatile RuntimeException startFailure;

    private final MSSQLServerContainer container;
    private final AtomicInteger databases = new AtomicInteger();

    private SqlServerContainerServer(MSSQLServerContainer container) {
        this.container = container;
    }

    /** Whether Testcontainers finds a Docker environment. */
    public static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            LOG.info("Docker is not available: {}", e.toString());
            return false;
        }
    }

    /** The server of this JVM, started on first call (the first start pulls the image, which can take minutes). */
    public static SqlServerContainerServer shared() {
        SqlServerContainerServer server = shared;
        if (server == null) {
            synchronized (LOCK) {
                server = shared;
                if (server == null) {
                    if (startFailure != null) {
                        throw startFailure;
                    }
                    try {
                        server = start(System.getProperty(IMAGE_PROPERTY, DEFAULT_IMAGE));
                    } catch (RuntimeException e) {
                        startFailure = e;
                        throw e;
                    }
                    shared = server;
                }
            }
        }
        return server;
    }

    private static SqlServerContainerServer start(String image) {
        long started = System.nanoTime();
        MSSQLServerContainer container = new MSSQLServerContainer(DockerImageName.parse(image));
        try {
            container.start();
        } catch (RuntimeException e) {
            container.close();
            throw new TidemarkException(ErrorCode.IO_FAILED, "Could not start SQL Server from " + image + ": " + e
                    + ". If the message is about the license, add container-license-acceptance.txt with the line "
                    + image + " to the test classpath.", e);
        }
        LOG.info("SQL Server ({}) started in a container on {}:{} in {} ms", image, container.getHost(),
                container.getMappedPort(MSSQLServerContainer.MS_SQL_SERVER_PORT), (System.nanoTime() - started) / 1_000_000);
        return new SqlServerContainerServer(container);
    }

    /** The {@code master} database as {@code sa}. For administration only. */
    public DataSource adminDataSource() {
        return dataSource(container.getUsername(), container.getPassword(), "master");
    }

    /** Creates a fresh, empty database with a generated name. */
    public SqlServerDatabase createDatabase() {
        return createDatabase("tidemark_test_" + ProcessHandle.current().pid() + "_" + databases.incrementAndGet());
    }

    /** Creates a fresh, empty database; fails if one of that name exists. */
    public SqlServerDatabase createDatabase(String name) {
        SqlServerName.checkPart(name, "database");
        execute(adminDataSource(), "CREATE DATABASE " + SqlServerName.quote(name));
        return new SqlServerDatabase(this, name);
    }

    /** A data source for {@code database} as {@code user}; encryption is off, as in a test container. */
    DataSource dataSource(String user, String password, String database) {
        SQLServerDataSource ds = new SQLServerDataSource();
        ds.setServerName(container.getHost());
        ds.setPortNumber(container.getMappedPort(MSSQLServerContainer.MS_SQL_SERVER_PORT));
        ds.setDatabaseName(database);
        ds.setUser(user);
        ds.setPassword(password);
        ds.setEncrypt("false");
        ds.setApplicationName("tidemark-test");
        return ds;
    }

    DataSource adminDataSourceFor(String database) {
        return dataSource(container.getUsername(), container.getPassword(), database);
    }

    String jdbcUrl(String database) {
        return "jdbc:sqlserver://" + container.getHost() + ":"
                + container.getMappedPort(MSSQLServerContainer.MS_SQL_SERVER_PORT) + ";databaseName=" + database
                + ";encrypt=false";
    }

    static void execute(DataSource dataSource, String sql) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.DATABASE_ERROR, "Test SQL failed: " + e.getMessage() + "\n" + sql, e);
        }
    }
}
