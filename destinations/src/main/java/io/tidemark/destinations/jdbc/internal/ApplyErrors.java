package io.tidemark.destinations.jdbc.internal;

import io.tidemark.sync.internal.jdbc.SqlErrors;

import java.sql.SQLException;
import java.util.Set;

/**
 * Whether a failed page may pass when offered again. Retryable: the database could not be reached or the
 * connection broke, the transaction was chosen as a deadlock victim or failed to serialise, a lock or statement
 * timed out, the server is short of resources or shutting down. Fatal: what only a person can cure, which the same
 * page offered again would hit again: a missing table or column, a missing privilege, a failed login, a value the
 * column cannot hold, a constraint the row breaks. Anything unknown is retryable (the policy's attempts bound it).
 */
public final class ApplyErrors {

    /** SQLState classes that are about the data or the schema: 22 data exception, 23 integrity, 42 syntax/access. */
    private static final Set<String> FATAL_CLASSES = Set.of("22", "23", "42", "28", "0A");
    /**
     * Transient states: 40001 serialization failure, 40P01 deadlock, 55P03 lock not available, 57014 statement
     * cancelled (a timeout), 57P01-57P03 server shutting down or starting, 53xxx out of resources, HY008 cancelled.
     */
    private static final Set<String> RETRYABLE_STATES = Set.of("40001", "40P01", "55P03", "57014", "57P01", "57P02",
            "57P03", "53000", "53100", "53200", "53300", "HY008");
    /**
     * SQL Server error numbers (mssql-jdbc reports most errors with SQLState S0001, so the number decides):
     * 1205 deadlock victim, 1222 lock request timeout, -2 / HY008 query timeout, 701 out of memory, 4060 / 40613
     * database unavailable.
     */
    private static final Set<Integer> SQL_SERVER_RETRYABLE = Set.of(1205, 1222, -2, 701, 4060, 40613, 40197, 40501);
    /**
     * 207 invalid column, 208 invalid object, 229 / 230 permission denied, 515 NULL into NOT NULL, 547 constraint,
     * 2601 / 2627 duplicate key, 245 / 8114 / 8115 conversion and overflow, 241 / 242 date conversion, 8152 / 2628
     * string truncation.
     */
    private static final Set<Integer> SQL_SERVER_FATAL = Set.of(207, 208, 229, 230, 515, 547, 2601, 2627, 245, 8114,
            8115, 241, 242, 8152, 2628);

    private ApplyErrors() {
    }

    public static boolean isRetryable(SQLException e) {
        if (SqlErrors.isAuthenticationFailure(e)) {
            return false;
        }
        if (SqlErrors.isConnectionFailure(e)) {
            return true;
        }
        for (SQLException s = e; s != null; s = s.getNextException()) {
            String state = SqlErrors.state(s);
            if (RETRYABLE_STATES.contains(state) || SQL_SERVER_RETRYABLE.contains(s.getErrorCode())) {
                return true;
            }
            if (SQL_SERVER_FATAL.contains(s.getErrorCode())
                    || state.length() >= 2 && FATAL_CLASSES.contains(state.substring(0, 2))) {
                return false;
            }
        }
        return true;
    }
}
