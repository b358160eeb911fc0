package io.tidemark.sqlserver.internal;

import io.tidemark.sqlserver.PreflightCheck;
import io.tidemark.sqlserver.PreflightReport;
import io.tidemark.sqlserver.WatermarkQuery;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.InitialSync;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Checks a database before the first cycle, on one connection, as the login Tidemark uses: Change Tracking on the
 * database and each table, its retention, snapshot isolation, each procedure's existence and {@code @Json}
 * parameter, and the login's permissions. Every check runs even when an earlier one failed, so one report lists
 * everything to fix. Nothing is changed.
 */
public final class PreflightRunner {

    /** What the runner needs to know about one tracked object, resolved by the provider. */
    public record Target(TrackedObject object, String quotedProcedure, String quotedTable, WatermarkQuery watermark) {
    }

    /** Change Tracking retention below this is reported: a poller stopped longer than it needs a full re-sync. */
    private static final long SHORT_RETENTION_MINUTES = 24 * 60;

    private final DataSource dataSource;
    private final int timeoutSeconds;
    private final List<PreflightCheck> checks = new ArrayList<>();

    public PreflightRunner(DataSource dataSource, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.timeoutSeconds = timeoutSeconds;
    }

    public PreflightReport run(List<Target> targets) {
        try (Connection c = dataSource.getConnection()) {
            login(c);
            serverVersion(c);
            boolean tracked = databaseChangeTracking(c);
            snapshotIsolation(c);
            for (Target target : targets) {
                procedure(c, target);
                if (target.quotedTable() != null) {
                    table(c, target, tracked);
                }
                if (target.object().initialSync() == InitialSync.INCREMENTAL) {
                    watermark(target);
                }
            }
        } catch (SQLException e) {
            TidemarkException connection = SqlServerErrors.connectionFailure(e,
                    SqlContext.of(dataSource, null, "running the preflight checks"));
            checks.add(connection != null
                    ? PreflightCheck.failed(null, "connection", ErrorCode.CONNECTION_FAILED, connection.getMessage())
                    : PreflightCheck.failed(null, "connection", ErrorCode.PROCEDURE_FAILED,
                            "could not query the database: " + SqlServerErrors.detail(e)));
        }
        return new PreflightReport(checks);
    }

    private void login(Connection c) throws SQLException {
        query(c, "SELECT ORIGINAL_LOGIN(), USER_NAME(), DB_NAME()", null, rs -> {
            checks.add(PreflightCheck.ok(null, "login", "connected as login " + rs.getString(1) + ", database user "
                    + rs.getString(2) + ", database " + rs.getString(3)));
            return null;
        });
    }

    private void serverVersion(Connection c) throws SQLException {
        query(c, """
                SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(128)),
                CAST(SERVERPROPERTY('ProductMajorVersion') AS INT), CAST(SERVERPROPERTY('EngineEdition') AS INT)""",
                null, rs -> {
                    String version = rs.getString(1);
                    int major = rs.getInt(2);
                    int edition = rs.getInt(3);
                    // Azure SQL Database (5) and Managed Instance (8) report an old major version but have every feature.
                    boolean cloud = edition == 5 || edition == 8;
                    if (cloud || major >= 14) {
                        checks.add(PreflightCheck.ok(null, "server version", "SQL Server " + version
                                + (cloud ? " (Azure)" : "")));
                    } else {
                        checks.add(PreflightCheck.warning(null, "server version", "SQL Server " + version
                                + ": the generated change procedures need SQL Server 2017 or later (STRING_AGG);"
                                + " procedures written by hand work on 2016 (FOR JSON)"));
                    }
                    return null;
                });
    }

    /** Returns whether Change Tracking is on for the database. */
    private boolean databaseChangeTracking(Connection c) throws SQLException {
        Long current = query(c, "SELECT CHANGE_TRACKING_CURRENT_VERSION()", null, rs -> nullableLong(rs, 1));
        if (current == null) {
            checks.add(PreflightCheck.failed(null, "change tracking (database)", ErrorCode.CHANGE_TRACKING_DISABLED,
                    "Change Tracking is not enabled on the database (CHANGE_TRACKING_CURRENT_VERSION() is NULL)."
                            + " Run ALTER DATABASE CURRENT SET CHANGE_TRACKING = ON (CHANGE_RETENTION = 7 DAYS,"
                            + " AUTO_CLEANUP = ON), or the script from ChangeTrackingSetup"));
            return false;
        }
        String retention = query(c, """
                SELECT retention_period, retention_period_units_desc, is_auto_cleanup_on
                FROM sys.change_tracking_databases WHERE database_id = DB_ID()""", null, rs -> {
                    long period = rs.getLong(1);
                    String unit = rs.getString(2);
                    boolean cleanup = rs.getBoolean(3);
                    String text = "retention " + period + " " + unit + ", auto cleanup " + (cleanup ? "on" : "off");
                    if (!cleanup) {
                        checks.add(PreflightCheck.warning(null, "change tracking retention", text + ": change tracking"
                                + " data is never cleaned up and grows without bound. Turn AUTO_CLEANUP back on once"
                                + " the reason it was turned off has passed"));
                    } else if (minutes(period, unit) < SHORT_RETENTION_MINUTES) {
                        checks.add(PreflightCheck.warning(null, "change tracking retention", text + ": if Tidemark"
                                + " stops for longer than that, its watermark ages out and the next cycle is a full"
                                + " re-sync (ReasonCode 1). Keep the retention above the longest pause you expect"));
                    } else {
                        checks.add(PreflightCheck.ok(null, "change tracking retention", text));
                    }
                    return text;
                });
        if (retention == null) {
            checks.add(PreflightCheck.warning(null, "change tracking retention", "the login cannot read"
                    + " sys.change_tracking_databases, so the retention period is unknown; ask a DBA for it"));
        }
        checks.add(PreflightCheck.ok(null, "change tracking (database)", "on, current version " + current));
        return true;
    }

    private void snapshotIsolation(Connection c) throws SQLException {
        String state = query(c, "SELECT snapshot_isolation_state_desc FROM sys.databases WHERE database_id = DB_ID()",
                null, rs -> rs.getString(1));
        if ("ON".equals(state)) {
            checks.add(PreflightCheck.ok(null, "snapshot isolation", "ALLOW_SNAPSHOT_ISOLATION is ON"));
            return;
        }
        checks.add(PreflightCheck.failed(null, "snapshot isolation", ErrorCode.SNAPSHOT_ISOLATION_DISABLED,
                "ALLOW_SNAPSHOT_ISOLATION is " + state + ". A change procedure reads the version and the rows in one"
                        + " snapshot (SET TRANSACTION ISOLATION LEVEL SNAPSHOT); without this option every call fails"
                        + " with \"snapshot isolation is not allowed in this database\" (error 3952). Run ALTER"
                        + " DATABASE CURRENT SET ALLOW_SNAPSHOT_ISOLATION ON"));
    }

    private void procedure(Connection c, Target t) throws SQLException {
        String name = t.object().name();
        String type = query(c, "SELECT type_desc FROM sys.objects WHERE object_id = OBJECT_ID(?)",
                t.quotedProcedure(), rs -> rs.getString(1));
        if (type == null) {
            checks.add(PreflightCheck.failed(name, "procedure", ErrorCode.PROCEDURE_NOT_FOUND, "procedure "
                    + t.quotedProcedure() + " does not exist, or the login cannot see it (a login sees only objects"
                    + " it holds a permission on: grant EXECUTE)"));
            return;
        }
        if (!type.endsWith("STORED_PROCEDURE")) {
            checks.add(PreflightCheck.failed(name, "procedure", ErrorCode.PROCEDURE_SIGNATURE, t.quotedProcedure()
                    + " is a " + type.toLowerCase(Locale.ROOT).replace('_', ' ') + "; it must be a stored procedure"));
            return;
        }
        parameters(c, t);
        Integer canExecute = query(c, "SELECT HAS_PERMS_BY_NAME(?, 'OBJECT', 'EXECUTE')", t.quotedProcedure(),
                rs -> nullableInt(rs, 1));
        if (canExecute != null && canExecute == 1) {
            checks.add(PreflightCheck.ok(name, "execute permission", "the login may execute " + t.quotedProcedure()));
        } else {
            checks.add(PreflightCheck.failed(name, "execute permission", ErrorCode.PERMISSION_DENIED, "the login may"
                    + " not execute " + t.quotedProcedure() + ": GRANT EXECUTE ON OBJECT::" + t.quotedProcedure()
                    + " TO <the login's user or role>"));
        }
    }

    private void parameters(Connection c, Target t) throws SQLException {
        String name = t.object().name();
        List<String[]> parameters = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT name, TYPE_NAME(system_type_id), max_length
                FROM sys.parameters WHERE object_id = OBJECT_ID(?) AND parameter_id > 0 ORDER BY parameter_id""")) {
            ps.setQueryTimeout(timeoutSeconds);
            ps.setNString(1, t.quotedProcedure());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    parameters.add(new String[] {rs.getString(1), rs.getString(2), Integer.toString(rs.getInt(3))});
                }
            }
        }
        String[] json = parameters.stream().filter(p -> p[0].equalsIgnoreCase("@Json")).findFirst().orElse(null);
        if (json == null) {
            checks.add(PreflightCheck.failed(name, "@Json parameter", ErrorCode.PROCEDURE_SIGNATURE, t.quotedProcedure()
                    + " has no @Json parameter (it has " + describe(parameters) + "); Tidemark calls EXEC "
                    + t.quotedProcedure() + " @Json = ? with the request as NVARCHAR(MAX)"));
            return;
        }
        boolean nvarcharMax = "nvarchar".equalsIgnoreCase(json[1]) && "-1".equals(json[2]);
        if (!nvarcharMax) {
            checks.add(PreflightCheck.failed(name, "@Json parameter", ErrorCode.PROCEDURE_SIGNATURE, json[0] + " is "
                    + typeName(json) + "; it must be NVARCHAR(MAX), or requests may be cut or refused"));
        } else if (!json[0].equals("@Json")) {
            checks.add(PreflightCheck.warning(name, "@Json parameter", "the parameter is named " + json[0]
                    + "; Tidemark passes @Json, which matches only under a case-insensitive collation. Rename it to"
                    + " @Json"));
        } else {
            checks.add(PreflightCheck.ok(name, "@Json parameter", "@Json NVARCHAR(MAX)"));
        }
        if (parameters.size() > 1) {
            checks.add(PreflightCheck.warning(name, "other parameters", t.quotedProcedure() + " also takes "
                    + describe(parameters.stream().filter(p -> p != json).toList()) + "; each must have a default,"
                    + " which the catalog does not show for T-SQL procedures, so it is not checked here"));
        }
    }

    private void table(Connection c, Target t, boolean databaseTracked) throws SQLException {
        String name = t.object().name();
        String table = t.quotedTable();
        Integer exists = query(c, "SELECT CASE WHEN OBJECT_ID(?, N'U') IS NULL THEN 0 ELSE 1 END", table,
                rs -> rs.getInt(1));
        if (exists == null || exists == 0) {
            // A login sees only objects it holds a permission on, so "missing" and "not granted" look the same
            // here, as they do to the generated procedure, which then fails with PERMISSION_DENIED (51004).
            checks.add(PreflightCheck.failed(name, "table", ErrorCode.PERMISSION_DENIED, "table " + table
                    + " does not exist, or the login cannot see it: GRANT VIEW CHANGE TRACKING ON OBJECT::" + table
                    + " TO <the login's user or role>"));
            return;
        }
        Integer viewChanges = query(c, "SELECT HAS_PERMS_BY_NAME(?, 'OBJECT', 'VIEW CHANGE TRACKING')", table,
                rs -> nullableInt(rs, 1));
        if (viewChanges != null && viewChanges == 1) {
            checks.add(PreflightCheck.ok(name, "view change tracking permission", "the login may read the Change"
                    + " Tracking data of " + table));
        } else {
            checks.add(PreflightCheck.failed(name, "view change tracking permission", ErrorCode.PERMISSION_DENIED,
                    "the login lacks VIEW CHANGE TRACKING on " + table + "; CHANGETABLE checks it itself (ownership"
                            + " chaining through the procedure does not cover it): GRANT VIEW CHANGE TRACKING ON"
                            + " OBJECT::" + table + " TO <the login's user or role>"));
        }
        if (!databaseTracked) {
            return;
        }
        Long minValid = query(c, "SELECT CHANGE_TRACKING_MIN_VALID_VERSION(OBJECT_ID(?))", table,
                rs -> nullableLong(rs, 1));
        if (minValid == null) {
            checks.add(PreflightCheck.failed(name, "change tracking (table)", ErrorCode.CHANGE_TRACKING_DISABLED,
                    "Change Tracking is not enabled on " + table + ": ALTER TABLE " + table
                            + " ENABLE CHANGE_TRACKING WITH (TRACK_COLUMNS_UPDATED = ON)"));
            return;
        }
        Boolean columns = query(c, """
                SELECT is_track_columns_updated_on FROM sys.change_tracking_tables
                WHERE object_id = OBJECT_ID(?)""", table, rs -> rs.getBoolean(1));
        if (Boolean.FALSE.equals(columns)) {
            checks.add(PreflightCheck.warning(name, "change tracking (table)", "on for " + table + " (oldest valid"
                    + " version " + minValid + "), but TRACK_COLUMNS_UPDATED is OFF: updates report every column as"
                    + " changed, so a column-level procedure sends whole rows"));
        } else {
            checks.add(PreflightCheck.ok(name, "change tracking (table)", "on for " + table + ", oldest valid version "
                    + minValid + (columns == null ? "" : ", columns updated are tracked")));
        }
    }

    private void watermark(Target t) {
        try {
            long version = new WatermarkReader(dataSource, timeoutSeconds).read(t.object(), t.watermark());
            checks.add(PreflightCheck.ok(t.object().name(), "starting watermark", t.watermark() + " returns "
                    + version));
        } catch (TidemarkException e) {
            checks.add(PreflightCheck.failed(t.object().name(), "starting watermark", e.code(), e.getMessage()));
        }
    }

    private <T> T query(Connection c, String sql, String parameter, RowReader<T> reader) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setQueryTimeout(timeoutSeconds);
            if (parameter != null) {
                ps.setNString(1, parameter);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? reader.read(rs) : null;
            }
        }
    }

    private static Long nullableLong(ResultSet rs, int column) throws SQLException {
        long value = rs.getLong(column);
        return rs.wasNull() ? null : value;
    }

    private static Integer nullableInt(ResultSet rs, int column) throws SQLException {
        int value = rs.getInt(column);
        return rs.wasNull() ? null : value;
    }

    static long minutes(long period, String unit) {
        switch (unit == null ? "" : unit.toUpperCase(Locale.ROOT)) {
            case "DAYS":
                return period * 24 * 60;
            case "HOURS":
                return period * 60;
            default:
                return period;
        }
    }

    private static String describe(List<String[]> parameters) {
        if (parameters.isEmpty()) {
            return "no parameters";
        }
        return String.join(", ", parameters.stream().map(p -> p[0] + " " + typeName(p)).toList());
    }

    private static String typeName(String[] parameter) {
        String type = parameter[1].toUpperCase(Locale.ROOT);
        int bytes = Integer.parseInt(parameter[2]);
        Function<Integer, String> length = b -> b == -1 ? "MAX" : Integer.toString(b);
        switch (type) {
            case "NVARCHAR":
            case "NCHAR":
                return type + "(" + (bytes == -1 ? "MAX" : Integer.toString(bytes / 2)) + ")";
            case "VARCHAR":
            case "CHAR":
            case "VARBINARY":
                return type + "(" + length.apply(bytes) + ")";
            default:
                return type;
        }
    }

    /** Reads one row. */
    @FunctionalInterface
    private interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }
}
