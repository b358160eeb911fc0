package io.tidemark.sync.internal.store;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;

/** The SQL a JDBC store needs, per database product. Statements use JDBI named parameters. */
public interface StoreDialect {

    /** DDL that creates the store's tables if missing, as a script a DBA can review. */
    String createScript();

    /** Runs {@link #createScript()}'s effect safely on a live connection (idempotent, concurrency-safe). */
    void createIfMissing(Connection connection) throws SQLException;

    String selectState();

    String selectAllStates();

    /** Insert-or-update that sets the version and {@code :source} only where no version is stored yet. */
    String advanceFromNothing();

    /**
     * Update that sets the version only where it still equals {@code :expected} and the stored source is
     * {@code :source} or none.
     */
    String advanceFrom();

    /** Update that records {@code :source} as the producer of the stored version, where one is stored. */
    String adoptSource();

    String recordPoll();

    String setPaused();

    String reset();

    String insertDeadLetter();

    String selectDeadLetters();

    String deleteDeadLetter();

    /** Picks the dialect for the database behind {@code dataSource}. */
    static StoreDialect detect(DataSource dataSource, String schema, String stateTable, String deadLetterTable) {
        String product;
        try (Connection c = dataSource.getConnection()) {
            product = c.getMetaData().getDatabaseProductName();
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.CONNECTION_FAILED,
                    "Could not connect to the database of the Tidemark store (schema '" + schema + "'): "
                            + JdbcStoreSupport.withoutFullStop(e.getMessage()) + ". Check the data source's URL, the credentials and the network.", e);
        }
        return forProduct(product, schema, stateTable, deadLetterTable);
    }

    /** Picks the dialect for a database product name as JDBC reports it. */
    static StoreDialect forProduct(String product, String schema, String stateTable, String deadLetterTable) {
        if ("PostgreSQL".equalsIgnoreCase(product)) {
            return new PostgresStoreDialect(schema, stateTable, deadLetterTable);
        }
        // mssql-jdbc reports "Microsoft SQL Server" for SQL Server, Azure SQL Database and Managed Instance.
        if ("Microsoft SQL Server".equalsIgnoreCase(product)) {
            return new SqlServerStoreDialect(schema, stateTable, deadLetterTable);
        }
        throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION,
                "The JDBC watermark and dead-letter stores support PostgreSQL and SQL Server; this database is '"
                        + product + "'");
    }
}
