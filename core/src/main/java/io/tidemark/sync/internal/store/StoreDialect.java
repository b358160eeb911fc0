package io.tidemark.sync.internal.store;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.config.Checks;
import io.tidemark.sync.internal.sql.PgName;
import io.tidemark.sync.internal.sql.SqlServerName;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

/** The SQL a JDBC store needs, per database product. Statements use JDBI named parameters. */
public interface StoreDialect {

    /** DDL that creates the store's tables if missing, as a script a DBA can review. */
    String createScript();

    /** Runs {@link #createScript()}'s effect safely on a live connection (idempotent, concurrency-safe). */
    void createIfMissing(Connection connection) throws SQLException;

    /**
     * Creates the lease tables if missing (idempotent, concurrency-safe): only for an engine with coordination, so a
     * store that never coordinates has none.
     */
    void createLeaseTablesIfMissing(Connection connection) throws SQLException;

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

    /** The dead-letter table's SQL. */
    DeadLetterDialect deadLetters();

    /** The lease tables' SQL (engines on several instances). */
    LeaseDialect leases();

    /**
     * A query of one text column that names the database a connection reaches, the same from every connection to
     * it and different for another database (of the same server or not), whatever host name the connection used:
     * coordination needs every fenced store in the one database of its lease table.
     */
    String databaseIdentity();

    /** The object's destination positions ({@code :name}). */
    String selectPositions();

    /**
     * The object's row and its destinations' positions ({@code :name}) in one statement, or empty when the dialect
     * has none and the store reads {@link #selectState()} and {@link #selectPositions()} in one transaction. The
     * engine reads them at the start of every cycle (a pause or reset made from outside it takes effect at its next
     * cycle), so this is a cost paid per cycle: one statement is one round trip and one snapshot, where the pair
     * in a transaction takes three (the first statement carries the BEGIN; then the second, and the COMMIT). Its
     * rows: the state's columns as {@link #selectState()} names them (all null when the object has only positions), and {@code destination}, {@code position_version} and {@code position_paused} (null when it has
     * no position); one row per destination, ordered by destination, and no row when neither exists.
     */
    default Optional<String> selectStateWithPositions() {
        return Optional.empty();
    }

    String selectAllPositions();

    /**
     * The write of {@link #advanceFrom()} and of {@link #advancePosition()} for each of the object's moving
     * destinations in one statement, or empty when the dialect has none and the store runs them in one
     * transaction. The engine writes this after every delivered page, so it is a cost paid per page: one statement
     * is one round trip, where the transaction takes one per statement and one more for the COMMIT (the first
     * statement carries the BEGIN): three for one destination. All of it or nothing: it writes only when the
     * object's row and every position are still what the writer expects (the parameters of {@link #advanceFrom()},
     * and arrays {@code :destinations}, {@code :expectedPositions} and {@code :positionVersions} of the same length
     * {@code :positionCount}, no destination twice). Returns one row with the number of positions moved
     * ({@code moved}) when it wrote, no row when it wrote nothing; the store then runs the transaction, which refuses
     * the write and explains why.
     */
    default Optional<String> advanceInOneStatement() {
        return Optional.empty();
    }

    /**
     * Stores a first position for {@code :destination} ({@code :version}) where none is stored, or the stored row
     * has no version yet; updates nothing (0 rows) where a version is stored.
     */
    String insertPosition();

    /** Update that moves a position only where it still equals {@code :expected} and does not go down. */
    String advancePosition();

    /** Insert-or-update of one destination's pause flag ({@code :paused}), keeping its position. */
    String setDestinationPaused();

    /** Forgets the object's positions, keeping the destinations' pause flags. */
    String resetPositions();

    /** The table of destination positions next to the state table: its name followed by this. */
    String POSITIONS_SUFFIX = "_positions";

    /** Picks the dialect for the database behind {@code dataSource}. */
    static StoreDialect detect(String builder, DataSource dataSource, String schema, String stateTable,
                               String deadLetterTable) {
        String product;
        try (Connection c = dataSource.getConnection()) {
            product = c.getMetaData().getDatabaseProductName();
        } catch (SQLException e) {
            throw new TidemarkException(ErrorCode.CONNECTION_FAILED,
                    "Could not connect to the database of the Tidemark store (schema '" + schema + "'): "
                            + JdbcStoreSupport.withoutFullStop(e.getMessage()) + ". Check the data source's URL, the credentials and the network.", e);
        }
        return forProduct(builder, product, schema, stateTable, deadLetterTable);
    }

    /** Picks the dialect for a database product name as JDBC reports it. */
    static StoreDialect forProduct(String product, String schema, String stateTable, String deadLetterTable) {
        return forProduct("JdbcWatermarkStore", product, schema, stateTable, deadLetterTable);
    }

    /**
     * Picks the dialect for a database product name as JDBC reports it, after checking the three names by that
     * database's rules (all problems at once, named after {@code builder}).
     */
    static StoreDialect forProduct(String builder, String product, String schema, String stateTable,
                                   String deadLetterTable) {
        Checks checks = Checks.of(builder);
        if ("PostgreSQL".equalsIgnoreCase(product)) {
            checks.valid(() -> PgName.checkPart(schema, "schema"));
            checks.valid(() -> PgName.checkPart(stateTable, "table"));
            checks.valid(() -> PgName.checkPart(deadLetterTable, "table"));
            checks.throwIfAny();
            return new PostgresStoreDialect(schema, stateTable, deadLetterTable);
        }
        // mssql-jdbc reports "Microsoft SQL Server" for SQL Server, Azure SQL Database and Managed Instance.
        if ("Microsoft SQL Server".equalsIgnoreCase(product)) {
            checks.valid(() -> SqlServerName.checkPart(schema, "schema"));
            checks.valid(() -> SqlServerName.checkPart(stateTable, "table"));
            checks.valid(() -> SqlServerName.checkPart(deadLetterTable, "table"));
            checks.throwIfAny();
            return new SqlServerStoreDialect(schema, stateTable, deadLetterTable);
        }
        throw new TidemarkException(ErrorCode.INVALID_CONFIGURATION,
                "The JDBC watermark and dead-letter stores support PostgreSQL and SQL Server; this database is '"
                        + product + "'");
    }
}
