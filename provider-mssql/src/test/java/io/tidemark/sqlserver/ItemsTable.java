package io.tidemark.sqlserver;

import io.tidemark.sqlserver.ChangeProcedureGenerator.Level;
import io.tidemark.sync.TrackedObject;
import io.tidemark.testing.SqlServerDatabase;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tracked table for the container tests, set up the way a user would: the table, then the scripts of
 * {@link ChangeTrackingSetup} and {@link ChangeProcedureGenerator}, installed through their {@code install}
 * methods. Each instance has its own table and procedure, so tests sharing a database do not see each other.
 *
 * <pre>
 * dbo.items_N (ItemCode NVARCHAR(20) PRIMARY KEY, Description NVARCHAR(MAX), Assortment NVARCHAR(50),
 *              Price DECIMAL(10, 2))
 * </pre>
 */
final class ItemsTable {

    private static final AtomicInteger COUNTER = new AtomicInteger();

    private final SqlServerDatabase database;
    private final String table;
    private final ChangeProcedureGenerator procedure;

    private ItemsTable(SqlServerDatabase database, String table, ChangeProcedureGenerator procedure) {
        this.database = database;
        this.table = table;
        this.procedure = procedure;
    }

    /**
     * Creates the table with {@code rows} initial rows (I1..In), then enables Change Tracking and the procedure, and
     * commits one tracked change elsewhere in the database, so that its Change Tracking version is above 0 whatever
     * ran before (version 0 has a meaning of its own: see {@link #createUntouched}).
     */
    static ItemsTable create(SqlServerDatabase database, Level level, int rows) {
        ItemsTable items = createUntouched(database, level, rows);
        database.execute("IF OBJECT_ID(N'dbo.heartbeat', N'U') IS NULL BEGIN"
                + " CREATE TABLE dbo.heartbeat (id INT IDENTITY PRIMARY KEY, at DATETIME2 NOT NULL DEFAULT SYSDATETIME());"
                + " ALTER TABLE dbo.heartbeat ENABLE CHANGE_TRACKING; END");
        database.execute("INSERT INTO dbo.heartbeat DEFAULT VALUES");
        return items;
    }

    /** Like {@link #create}, without the extra change: in a new database the Change Tracking version stays 0. */
    static ItemsTable createUntouched(SqlServerDatabase database, Level level, int rows) {
        String name = "items_" + level.name().toLowerCase() + "_" + COUNTER.incrementAndGet();
        database.execute("CREATE TABLE dbo." + name + " ("
                + " ItemCode NVARCHAR(20) NOT NULL PRIMARY KEY,"
                + " Description NVARCHAR(MAX) NULL,"
                + " Assortment NVARCHAR(50) NULL,"
                + " Price DECIMAL(10, 2) NULL)");
        ItemsTable items = new ItemsTable(database, "dbo." + name, ChangeProcedureGenerator.forTable("dbo." + name)
                .keyColumns("ItemCode")
                .columns("Description", "Assortment", "Price")
                .level(level)
                .build());
        for (int i = 1; i <= rows; i++) {
            items.insert("I" + i, "Item " + i, "A", new BigDecimal(i + ".50"));
        }
        ChangeTrackingSetup.builder().retention(Duration.ofDays(2)).table(items.table).build()
                .install(database.dataSource());
        items.procedure.install(database.dataSource());
        return items;
    }

    ChangeProcedureGenerator procedure() {
        return procedure;
    }

    String table() {
        return table;
    }

    TrackedObject tracked(String objectName) {
        return procedure.trackedObject(objectName);
    }

    void insert(String code, String description, String assortment, BigDecimal price) {
        update("INSERT INTO " + table + " (ItemCode, Description, Assortment, Price) VALUES (?, ?, ?, ?)",
                code, description, assortment, price);
    }

    /** Sets one column of one row (its own transaction, so its own Change Tracking version). */
    void set(String code, String column, Object value) {
        update("UPDATE " + table + " SET " + column + " = ? WHERE ItemCode = ?", value, code);
    }

    void delete(String code) {
        update("DELETE FROM " + table + " WHERE ItemCode = ?", code);
    }

    /** Runs one statement with parameters as {@code sa}; auto-commit, so one Change Tracking version. */
    void update(String sql, Object... parameters) {
        try (Connection c = database.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                if (parameters[i] == null) {
                    ps.setNull(i + 1, Types.NVARCHAR); // NULL converts to any column type
                } else {
                    ps.setObject(i + 1, parameters[i]);
                }
            }
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Runs several statements in one transaction: one Change Tracking version for all of them. */
    void inOneTransaction(String... statements) {
        try (Connection c = database.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            for (String statement : statements) {
                s.execute(statement.replace("{table}", table));
            }
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(String.join("; ", statements), e);
        }
    }

    long currentVersion() {
        return scalar(database.dataSource(), "SELECT CHANGE_TRACKING_CURRENT_VERSION()");
    }

    long minValidVersion() {
        return scalar(database.dataSource(), "SELECT CHANGE_TRACKING_MIN_VALID_VERSION(OBJECT_ID(N'" + table + "'))");
    }

    static long scalar(DataSource dataSource, String sql) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
