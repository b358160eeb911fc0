package io.tidemark.sync.internal.jdbc;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.util.Locale;
import java.util.Set;

/**
 * Whether a failure means the database could not be reached, as opposed to a statement it refused. The engine
 * retries such a failure as soon as the database answers again instead of waiting out its backoff, so this is
 * deliberately about reachability only: a server that is shutting down, crashed or still starting counts, a
 * missing function or privilege does not.
 */
public final class ConnectionLoss {

    /** SQLState class 08: connection exception (SQL standard; PostgreSQL, pgjdbc and mssql-jdbc use it). */
    private static final String CONNECTION_CLASS = "08";
    /**
     * PostgreSQL: 57P01 admin_shutdown (a fast shutdown ends the session), 57P02 crash_shutdown (another backend
     * crashed), 57P03 cannot_connect_now (starting up, in recovery, shutting down).
     */
    private static final Set<String> SERVER_GOING_AWAY = Set.of("57P01", "57P02", "57P03");
    /** pgjdbc's wording when it cannot open a connection (it wraps the socket error). */
    private static final String PG_CONNECTION_ATTEMPT_FAILED = "connection attempt failed";

    private ConnectionLoss() {
    }

    /**
     * Whether {@code failure}, or anything in its chain, says the database could not be reached: the shared rules
     * ({@link SqlErrors#isConnectionFailure}) and, beyond them, a server going away or not yet there (57P01-57P03),
     * a broken socket and the JDBC connection exception types.
     */
    public static boolean isConnectionLoss(Throwable failure) {
        if (SqlErrors.isConnectionFailure(failure)) {
            return true;
        }
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 20; t = next(t), depth++) {
            if (t instanceof ConnectException || t instanceof SocketTimeoutException
                    || t instanceof UnknownHostException || t instanceof NoRouteToHostException
                    || t instanceof SocketException) {
                return true;
            }
            if (t instanceof SQLTransientConnectionException || t instanceof SQLNonTransientConnectionException) {
                return true;
            }
            if (t instanceof SQLException) {
                String state = ((SQLException) t).getSQLState();
                if (state != null && (state.startsWith(CONNECTION_CLASS) || SERVER_GOING_AWAY.contains(state))) {
                    return true;
                }
                String message = t.getMessage();
                if (message != null && message.toLowerCase(Locale.ROOT).contains(PG_CONNECTION_ATTEMPT_FAILED)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The most telling message of a connection failure: the first SQLException's (pgjdbc names the host and port
     * there: "Connection to localhost:5432 refused"), else the failure's own.
     */
    public static String describe(Throwable failure) {
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 20; t = next(t), depth++) {
            if (t instanceof SQLException && t.getMessage() != null) {
                String state = ((SQLException) t).getSQLState();
                return t.getMessage() + (state == null ? "" : " (SQLState " + state + ")");
            }
        }
        return String.valueOf(failure.getMessage());
    }

    private static Throwable next(Throwable t) {
        if (t instanceof SQLException && ((SQLException) t).getNextException() != null) {
            return ((SQLException) t).getNextException();
        }
        return t.getCause() == t ? null : t.getCause();
    }
}
