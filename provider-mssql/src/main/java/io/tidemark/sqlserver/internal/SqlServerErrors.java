package io.tidemark.sqlserver.internal;

import com.microsoft.sqlserver.jdbc.SQLServerError;
import com.microsoft.sqlserver.jdbc.SQLServerException;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.internal.jdbc.SqlErrors;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.HashMap;
import java.util.Map;

/**
 * Turns what SQL Server says into errors that tell the user what to fix. SQL Server identifies an error by its
 * number, which mssql-jdbc reports as {@link SQLException#getErrorCode()}; where the driver has the server's full
 * error, the procedure and line it came from are added to the message.
 */
public final class SqlServerErrors {

    // The procedure and its call.
    static final int PROCEDURE_MISSING = 2812;           // Could not find stored procedure '%.*ls'.
    static final int NOT_A_PARAMETER = 8145;             // %.*ls is not a parameter for procedure %.*ls.
    static final int PARAMETER_NOT_SUPPLIED = 201;       // Procedure or function '%.*ls' expects parameter ...
    static final int TOO_MANY_ARGUMENTS = 8144;          // Procedure or function %.*ls has too many arguments ...
    static final int OPERAND_TYPE_CLASH = 206;           // Operand type clash: %ls is incompatible with %ls
    static final int INVALID_OBJECT = 208;               // Invalid object name '%.*ls'.
    static final int INVALID_COLUMN = 207;               // Invalid column name '%.*ls'.
    // Isolation and concurrency.
    static final int SNAPSHOT_NOT_ALLOWED = 3952;        // ... snapshot isolation is not allowed in this database.
    static final int SNAPSHOT_STARTED_LATE = 3951;       // ... the transaction did not start in snapshot isolation.
    static final int SNAPSHOT_DDL_CONFLICT = 3961;       // ... object ... modified by a DDL statement ...
    static final int DEADLOCK_VICTIM = 1205;
    // Change Tracking.
    static final int CHANGE_TRACKING_NOT_ON_TABLE = 22105; // Change tracking is not enabled on table '%.*ls'.
    // Permissions.
    static final int PERMISSION_DENIED_OBJECT = 229;     // The %ls permission was denied on the object ...
    static final int PERMISSION_DENIED_COLUMN = 230;     // The %ls permission was denied on the column ...
    static final int PERMISSION_DENIED_DATABASE = 262;   // %ls permission denied in database '%.*ls'.
    static final int NO_PERMISSION = 297;                // The user does not have permission to perform this action.
    static final int PERMISSION_DENIED_SECURABLE = 300;  // %ls permission was denied on object '%.*ls' ...
    static final int CANNOT_ACCESS_DATABASE = 916;       // The server principal ... is not able to access the database
    static final int CANNOT_OPEN_DATABASE = 4060;        // Cannot open database "%.*ls" requested by the login.
    // Login failed for user (18456) is a connection failure, recognised by the shared SqlErrors.

    /**
     * The errors the generated change procedures raise with {@code THROW}, so that they are told apart from
     * SQL Server's own. Procedures written by hand may use them too.
     */
    public static final int GENERATED_BAD_REQUEST = 51000;
    public static final int GENERATED_DATABASE_NOT_TRACKED = 51001;
    public static final int GENERATED_TABLE_NOT_TRACKED = 51002;
    public static final int GENERATED_COLUMN_MISSING = 51003;
    public static final int GENERATED_NO_VIEW_CHANGE_TRACKING = 51004;

    /** SQLState of a cancelled statement: the driver's query timeout, or a cancel. */
    private static final String STATEMENT_CANCELED = "HY008";

    private static final Map<Integer, ErrorCode> CODES = Map.ofEntries(
            Map.entry(PROCEDURE_MISSING, ErrorCode.PROCEDURE_NOT_FOUND),
            Map.entry(NOT_A_PARAMETER, ErrorCode.PROCEDURE_SIGNATURE),
            Map.entry(PARAMETER_NOT_SUPPLIED, ErrorCode.PROCEDURE_SIGNATURE),
            Map.entry(TOO_MANY_ARGUMENTS, ErrorCode.PROCEDURE_SIGNATURE),
            Map.entry(OPERAND_TYPE_CLASH, ErrorCode.PROCEDURE_SIGNATURE),
            Map.entry(INVALID_OBJECT, ErrorCode.PROCEDURE_FAILED),
            Map.entry(INVALID_COLUMN, ErrorCode.SCHEMA_DRIFT),
            Map.entry(SNAPSHOT_NOT_ALLOWED, ErrorCode.SNAPSHOT_ISOLATION_DISABLED),
            Map.entry(SNAPSHOT_STARTED_LATE, ErrorCode.PROCEDURE_FAILED),
            Map.entry(SNAPSHOT_DDL_CONFLICT, ErrorCode.PROCEDURE_FAILED),
            Map.entry(DEADLOCK_VICTIM, ErrorCode.PROCEDURE_FAILED),
            Map.entry(CHANGE_TRACKING_NOT_ON_TABLE, ErrorCode.CHANGE_TRACKING_DISABLED),
            Map.entry(GENERATED_BAD_REQUEST, ErrorCode.PROCEDURE_FAILED),
            Map.entry(GENERATED_DATABASE_NOT_TRACKED, ErrorCode.CHANGE_TRACKING_DISABLED),
            Map.entry(GENERATED_TABLE_NOT_TRACKED, ErrorCode.CHANGE_TRACKING_DISABLED),
            Map.entry(GENERATED_COLUMN_MISSING, ErrorCode.SCHEMA_DRIFT),
            Map.entry(GENERATED_NO_VIEW_CHANGE_TRACKING, ErrorCode.PERMISSION_DENIED),
            Map.entry(PERMISSION_DENIED_OBJECT, ErrorCode.PERMISSION_DENIED),
            Map.entry(PERMISSION_DENIED_COLUMN, ErrorCode.PERMISSION_DENIED),
            Map.entry(PERMISSION_DENIED_DATABASE, ErrorCode.PERMISSION_DENIED),
            Map.entry(NO_PERMISSION, ErrorCode.PERMISSION_DENIED),
            Map.entry(PERMISSION_DENIED_SECURABLE, ErrorCode.PERMISSION_DENIED),
            Map.entry(CANNOT_ACCESS_DATABASE, ErrorCode.PERMISSION_DENIED),
            Map.entry(CANNOT_OPEN_DATABASE, ErrorCode.PERMISSION_DENIED));

    private SqlServerErrors() {
    }

    /**
     * Maps a failure of calling the object's change procedure.
     *
     * @param cancelledByEngine whether the engine had asked the call to stop (it is closing)
     */
    public static TidemarkException map(SQLException e, DataSource dataSource, TrackedObject object,
                                        boolean cancelledByEngine, int timeoutSeconds) {
        String procedure = object.procedure();
        TidemarkException connection = connectionFailure(e, SqlContext.of(dataSource, object.name(),
                "calling " + procedure));
        if (connection != null) {
            return connection;
        }
        if (isCancel(e)) {
            if (cancelledByEngine) {
                return error(ErrorCode.ENGINE_STATE, object, "the call to " + procedure + " was cancelled because"
                        + " the engine is closing; the watermark stays and the changes are offered again.", e);
            }
            return error(ErrorCode.PROCEDURE_TIMEOUT, object, "the call to " + procedure + " ran longer than the"
                    + " command timeout of " + timeoutSeconds + " s and was cancelled (" + e.getMessage() + ")."
                    + " Make the procedure faster (an index for its joins, a shorter Change Tracking window), ask"
                    + " for fewer rows with TrackedObject.maxRows, or raise the timeout with"
                    + " SqlServerProvider.builder(...).commandTimeout(...).", e);
        }
        SQLException primary = primary(e);
        int number = primary.getErrorCode();
        String detail = detail(primary);
        ErrorCode code = CODES.get(number);
        if (code == null) {
            return unknown(primary, object, detail);
        }
        return error(code, object, explain(number, procedure, detail), e);
    }

    /**
     * Maps a failure of the watermark query that seeds an {@link io.tidemark.sync.InitialSync#INCREMENTAL} object.
     */
    public static TidemarkException mapWatermark(SQLException e, DataSource dataSource, TrackedObject object,
                                                 String query, boolean cancelledByEngine, int timeoutSeconds) {
        TidemarkException connection = connectionFailure(e, SqlContext.of(dataSource, object.name(),
                "reading the starting watermark"));
        if (connection != null) {
            return connection;
        }
        if (isCancel(e)) {
            return cancelledByEngine
                    ? error(ErrorCode.ENGINE_STATE, object, "reading the starting watermark was cancelled because the"
                            + " engine is closing; nothing was stored.", e)
                    : error(ErrorCode.PROCEDURE_TIMEOUT, object, "the watermark query (" + query + ") ran longer than"
                            + " the command timeout of " + timeoutSeconds + " s and was cancelled.", e);
        }
        SQLException primary = primary(e);
        ErrorCode code = CODES.get(primary.getErrorCode());
        if (code == ErrorCode.PERMISSION_DENIED) {
            return error(code, object, "permission denied running the watermark query (" + query + "): "
                    + detail(primary) + ". Grant the login what the query reads.", e);
        }
        return error(ErrorCode.WATERMARK_UNAVAILABLE, object, "could not read the starting watermark with " + query
                + ": " + detail(primary) + ". Nothing was stored; the next cycle tries again.", e);
    }

    /**
     * {@link ErrorCode#CONNECTION_FAILED} when SQL Server could not be reached or refused the login, else null: the
     * shared rules ({@link SqlErrors}), which know mssql-jdbc's SQLState class 08 ("The TCP/IP connection to the host
     * ... has failed", a login timeout, a broken connection), the socket errors among the causes and error 18456.
     */
    public static TidemarkException connectionFailure(SQLException e, SqlContext context) {
        return SqlErrors.connectionFailure(e, context);
    }

    /**
     * What each known error means and what to do about it: a format of the procedure ({@code %1$s}) and the
     * server's detail ({@code %2$s}). A permission error without an entry of its own gets {@link #PERMISSION_HINT}.
     */
    private static final Map<Integer, String> EXPLANATIONS = explanations();

    private static final String PERMISSION_HINT =
            "permission denied calling %1$s: %2$s. Grant EXECUTE on the procedure and VIEW CHANGE TRACKING"
            + " on the tables it reads (the LeastPrivilegeRole script); SqlServerProvider.preflight(...)"
            + " lists what the login lacks.";

    private static Map<Integer, String> explanations() {
        Map<Integer, String> explanations = new HashMap<>();
        explanations.put(PROCEDURE_MISSING,
                "procedure %1$s does not exist: %2$s. Create it (the script from ChangeProcedureGenerator, or"
                + " your own taking @Json NVARCHAR(MAX)), check its schema, and check that the login connects to"
                + " the database that holds it.");
        for (int number : new int[] {NOT_A_PARAMETER, PARAMETER_NOT_SUPPLIED, TOO_MANY_ARGUMENTS, OPERAND_TYPE_CLASH}) {
            explanations.put(number,
                    "procedure %1$s cannot be called as EXEC %1$s @Json = ?: %2$s. A change procedure takes exactly"
                    + " one parameter, @Json NVARCHAR(MAX) (other parameters need defaults; the name is"
                    + " case-sensitive under a case-sensitive collation).");
        }
        explanations.put(INVALID_OBJECT,
                "procedure %1$s refers to an object that does not exist: %2$s. Check the tables it reads, and"
                + " that the login connects to the right database.");
        explanations.put(INVALID_COLUMN,
                "procedure %1$s refers to a column that does not exist: %2$s. The table changed since the"
                + " procedure was written: regenerate it (ChangeProcedureGenerator) or fix it by hand.");
        explanations.put(SNAPSHOT_NOT_ALLOWED,
                "procedure %1$s reads under snapshot isolation, and snapshot isolation is not allowed in this"
                + " database: %2$s. Snapshot isolation is what lets the procedure read the version and the rows"
                + " in one consistent snapshot. Have a DBA run ALTER DATABASE CURRENT SET"
                + " ALLOW_SNAPSHOT_ISOLATION ON (part of the ChangeTrackingSetup script).");
        explanations.put(SNAPSHOT_STARTED_LATE,
                "procedure %1$s ran inside a transaction that did not start under snapshot isolation: %2$s."
                + " Tidemark calls with auto-commit on; if a connection pool or a wrapper opens a transaction"
                + " first, turn that off for Tidemark's data source.");
        explanations.put(SNAPSHOT_DDL_CONFLICT,
                "procedure %1$s read a table that DDL changed during the call: %2$s. Nothing was delivered; the"
                + " next cycle tries again.");
        explanations.put(DEADLOCK_VICTIM,
                "the call to %1$s was chosen as a deadlock victim: %2$s. Nothing was delivered; the next cycle"
                + " tries again.");
        for (int number : new int[] {CHANGE_TRACKING_NOT_ON_TABLE, GENERATED_TABLE_NOT_TRACKED}) {
            explanations.put(number,
                    "Change Tracking is not enabled on a table procedure %1$s reads: %2$s. Enable it on the"
                    + " database and the table (the ChangeTrackingSetup script), and grant VIEW CHANGE TRACKING on"
                    + " the table to the login.");
        }
        explanations.put(GENERATED_DATABASE_NOT_TRACKED,
                "Change Tracking is not enabled on the database: %2$s. Run ALTER DATABASE CURRENT SET"
                + " CHANGE_TRACKING = ON (the ChangeTrackingSetup script does it).");
        explanations.put(GENERATED_COLUMN_MISSING,
                "procedure %1$s was generated for a column that no longer exists: %2$s. Regenerate the"
                + " procedure for the table as it is now.");
        explanations.put(GENERATED_BAD_REQUEST, "procedure %1$s refused its request: %2$s.");
        for (int number : new int[] {CANNOT_OPEN_DATABASE, CANNOT_ACCESS_DATABASE}) {
            explanations.put(number,
                    "the login cannot reach the database to call %1$s: %2$s. Check the user name, the password and"
                    + " the database of the data source, and that the login has a user in that database.");
        }
        return Map.copyOf(explanations);
    }

    private static String explain(int number, String procedure, String detail) {
        return String.format(EXPLANATIONS.getOrDefault(number, PERMISSION_HINT), procedure, detail);
    }

    private static TidemarkException unknown(SQLException e, TrackedObject object, String detail) {
        return error(ErrorCode.PROCEDURE_FAILED, object, "calling " + object.procedure() + " failed: " + detail, e);
    }

    /** A query timeout (the driver throws {@link SQLTimeoutException}, SQLState HY008) or a cancel. */
    static boolean isCancel(SQLException e) {
        return e instanceof SQLTimeoutException || STATEMENT_CANCELED.equals(e.getSQLState());
    }

    /**
     * The error to explain. SQL Server can report several errors for one failure (the cause, then for example
     * "uncommittable transaction"); the first one with a known number is the cause, else the first one.
     */
    static SQLException primary(SQLException e) {
        for (SQLException next = e; next != null; next = next.getNextException()) {
            if (CODES.containsKey(next.getErrorCode())) {
                return next;
            }
        }
        return e;
    }

    /** The server's message with its number, state and, where known, where it was raised. */
    static String detail(SQLException e) {
        StringBuilder sb = new StringBuilder(String.valueOf(e.getMessage()));
        sb.append(" (error ").append(e.getErrorCode());
        if (e.getSQLState() != null) {
            sb.append(", SQLState ").append(e.getSQLState());
        }
        if (e instanceof SQLServerException) {
            SQLServerError server = ((SQLServerException) e).getSQLServerError();
            if (server != null && server.getProcedureName() != null && !server.getProcedureName().isEmpty()) {
                sb.append(", in ").append(server.getProcedureName()).append(" at line ")
                        .append(server.getLineNumber());
            }
        }
        return sb.append(')').toString();
    }

    private static TidemarkException error(ErrorCode code, TrackedObject object, String message, SQLException e) {
        return TidemarkException.forObject(code, object.name(), message, e);
    }
}
