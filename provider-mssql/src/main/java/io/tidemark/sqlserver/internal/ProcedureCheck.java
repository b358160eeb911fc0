package io.tidemark.sqlserver.internal;

import io.tidemark.sync.CheckReport;
import io.tidemark.sync.ErrorCode;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The SQL Server provider's start-up check: the database can be reached, and each object's procedure exists, is
 * a stored procedure and takes {@code @Json NVARCHAR(MAX)}. Reads the catalog only; {@code preflight} checks
 * much more (Change Tracking, snapshot isolation, permissions) for a deliberate review.
 */
public final class ProcedureCheck {

    /** One row when the object exists: its type and, if it has one, its {@code @Json} parameter. */
    public static final String PROCEDURE = """
            SELECT o.type_desc AS object_type,
                   p.name AS parameter_name,
                   TYPE_NAME(p.system_type_id) AS parameter_type,
                   p.max_length AS parameter_length
              FROM sys.objects AS o
              LEFT JOIN sys.parameters AS p ON p.object_id = o.object_id AND p.name = N'@Json'
             WHERE o.object_id = OBJECT_ID(?)""";

    /** What one object's check needs: its name for the report and its procedure, bracket-quoted. */
    public record Target(String objectName, String quotedProcedure) {
    }

    private final DataSource dataSource;
    private final int timeoutSeconds;

    public ProcedureCheck(DataSource dataSource, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.timeoutSeconds = timeoutSeconds;
    }

    public List<CheckReport.Problem> run(String component, List<Target> targets) {
        List<CheckReport.Problem> problems = new ArrayList<>();
        try (Connection c = dataSource.getConnection()) {
            for (Target target : targets) {
                try {
                    check(c, target).ifPresent(problems::add);
                } catch (SQLException e) {
                    problems.add(new CheckReport.Problem(target.objectName(), ErrorCode.PROCEDURE_FAILED,
                            "the procedure " + target.quotedProcedure() + " could not be looked up: "
                                    + e.getMessage()));
                }
            }
        } catch (SQLException e) {
            problems.add(new CheckReport.Problem(component, ErrorCode.CONNECTION_FAILED,
                    "could not connect to the SQL Server database of the change procedures: " + e.getMessage()
                            + (e.getMessage() != null && e.getMessage().endsWith(".") ? "" : ".")
                            + " Check the data source's URL, the credentials and the network."));
        }
        return problems;
    }

    private Optional<CheckReport.Problem> check(Connection c, Target t) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(PROCEDURE)) {
            ps.setQueryTimeout(timeoutSeconds);
            ps.setNString(1, t.quotedProcedure());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return problem(t, ErrorCode.PROCEDURE_NOT_FOUND, "procedure " + t.quotedProcedure()
                            + " does not exist, or the login cannot see it (a login sees only objects it has a"
                            + " permission on). Create it, or track the right name.");
                }
                String type = rs.getString("object_type");
                if (!type.endsWith("STORED_PROCEDURE")) {
                    return problem(t, ErrorCode.PROCEDURE_SIGNATURE, t.quotedProcedure() + " is a "
                            + type.toLowerCase(Locale.ROOT).replace('_', ' ') + "; it must be a stored procedure");
                }
                if (rs.getString("parameter_name") == null) {
                    return problem(t, ErrorCode.PROCEDURE_SIGNATURE, t.quotedProcedure() + " has no @Json"
                            + " parameter; Tidemark calls EXEC " + t.quotedProcedure() + " @Json = ? with the"
                            + " request as NVARCHAR(MAX)");
                }
                String parameterType = rs.getString("parameter_type");
                if (!"nvarchar".equalsIgnoreCase(parameterType) || rs.getInt("parameter_length") != -1) {
                    return problem(t, ErrorCode.PROCEDURE_SIGNATURE, "@Json of " + t.quotedProcedure() + " is "
                            + parameterType + "(" + length(parameterType, rs.getInt("parameter_length")) + "); it must be"
                            + " NVARCHAR(MAX), or requests may be cut or refused");
                }
                return Optional.empty();
            }
        }
    }

    /** {@code max_length} counts bytes: two per character for the N types. */
    private static String length(String type, int maxLength) {
        if (maxLength == -1) {
            return "MAX";
        }
        boolean national = type != null && type.toLowerCase(Locale.ROOT).startsWith("n");
        return Integer.toString(national ? maxLength / 2 : maxLength);
    }

    private static Optional<CheckReport.Problem> problem(Target t, ErrorCode code, String message) {
        return Optional.of(new CheckReport.Problem(t.objectName(), code, message));
    }
}
