package io.tidemark.testing;

import com.microsoft.sqlserver.jdbc.SQLServerDataSource;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.net.ServerSocket;

/**
 * Data sources that point at a database nobody can reach: a loopback port that was free a moment ago (bound, then
 * closed), so the driver's connection attempt is refused at once. For tests of what users see when the database is
 * down or the URL is wrong. Each carries the password {@value #PASSWORD}, so a test can check that no message
 * repeats it.
 */
public final class UnreachableDatabase {

    /** The password the data sources are configured with. */
    public static final String PASSWORD = "s3cret-not-shown";

    private UnreachableDatabase() {
    }

    /** A PostgreSQL data source for {@code 127.0.0.1:<closed port>/shop} as user {@code app}. */
    public static DataSource postgres() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setServerNames(new String[] {"127.0.0.1"});
        ds.setPortNumbers(new int[] {closedPort()});
        ds.setDatabaseName("shop");
        ds.setUser("app");
        ds.setPassword(PASSWORD);
        ds.setConnectTimeout(5);
        return ds;
    }

    /** A SQL Server data source for {@code 127.0.0.1:<closed port>}, database {@code shop}, as login {@code app}. */
    public static DataSource sqlServer() {
        return SqlServer.dataSource(closedPort());
    }

    /** Apart, so that the PostgreSQL side works without mssql-jdbc (an optional dependency) on the class path. */
    private static final class SqlServer {
        static DataSource dataSource(int port) {
            SQLServerDataSource ds = new SQLServerDataSource();
            ds.setURL("jdbc:sqlserver://127.0.0.1:" + port + ";databaseName=shop;encrypt=false");
            ds.setUser("app");
            ds.setPassword(PASSWORD);
            ds.setLoginTimeout(3);
            return ds;
        }
    }

    /** A loopback port nothing listens on: the system picked it free, and it is closed again. */
    private static int closedPort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new TidemarkException(ErrorCode.IO_FAILED, "Could not find a free loopback port: " + e, e);
        }
    }
}
