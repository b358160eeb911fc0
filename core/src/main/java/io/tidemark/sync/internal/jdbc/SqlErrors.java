package io.tidemark.sync.internal.jdbc;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rules every module shares for turning a {@link SQLException} into a {@link TidemarkException}: a connection
 * or login failure is {@link ErrorCode#CONNECTION_FAILED} naming the target, whatever statement was being run; a
 * missing privilege is {@link ErrorCode#PERMISSION_DENIED}. What only one database or one caller knows (a missing
 * function, SQL Server's error numbers) is mapped by that caller after {@link #connectionFailure} said no.
 */
public final class SqlErrors {

    /** SQLState class 08: connection exception (SQL standard; PostgreSQL and mssql-jdbc use it). */
    private static final String CONNECTION_CLASS = "08";
    /** SQLState 28000 invalid authorization specification; PostgreSQL's 28P01 invalid password. */
    private static final String AUTHORIZATION_CLASS = "28";
    private static final String INSUFFICIENT_PRIVILEGE = "42501";
    /** SQL Server: Login failed for user '%.*ls'. */
    private static final int SQL_SERVER_LOGIN_FAILED = 18456;
    /** pgjdbc's wording when it cannot open a connection (it wraps the socket error). */
    private static final String PG_CONNECTION_ATTEMPT_FAILED = "connection attempt failed";
    /** Where pgjdbc and mssql-jdbc name the server they tried: "to localhost:5432", "host localhost, port 1433". */
    private static final Pattern PG_HOST_PORT = Pattern.compile("(?i)connection to (\\S+:\\d+) refused");
    private static final Pattern MSSQL_HOST_PORT = Pattern.compile("(?i)to the host (\\S+?), port (\\d+)");

    private SqlErrors() {
    }

    /** The SQLState, or an empty string when the driver gave none. */
    public static String state(SQLException e) {
        return e.getSQLState() == null ? "" : e.getSQLState();
    }

    /** The driver's message with its SQLState, for the end of an error message. */
    public static String detail(SQLException e) {
        String state = state(e);
        return e.getMessage() + (state.isEmpty() ? "" : " (SQLState " + state + ")");
    }

    /**
     * Whether the database could not be reached: SQLState class 08 anywhere in the chain, a socket that could not
     * connect (refused, timed out, unknown host, no route) among the causes, pgjdbc's "connection attempt
     * failed", or a {@link SQLTransientConnectionException} without a state: that is how a pool (HikariCP) says it
     * had no connection to give within its timeout, when it has no driver failure to pass on (its connections all
     * went stale at once, or it is still waiting out its own reconnect backoff).
     */
    public static boolean isConnectionFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = next(t)) {
            if (t instanceof ConnectException || t instanceof SocketTimeoutException
                    || t instanceof UnknownHostException || t instanceof NoRouteToHostException) {
                return true;
            }
            if (t instanceof SQLTransientConnectionException) {
                return true;
            }
            if (t instanceof SQLException) {
                SQLException e = (SQLException) t;
                if (state(e).startsWith(CONNECTION_CLASS)) {
                    return true;
                }
                String message = e.getMessage();
                if (message != null && message.toLowerCase(Locale.ROOT).contains(PG_CONNECTION_ATTEMPT_FAILED)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Whether the server refused the login: SQLState class 28 (PostgreSQL 28P01 and 28000) in the chain, or SQL
     * Server's "Login failed for user" (error 18456, which mssql-jdbc reports with SQLState S0001, not class 28).
     */
    public static boolean isAuthenticationFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = next(t)) {
            if (t instanceof SQLException) {
                SQLException e = (SQLException) t;
                if (state(e).startsWith(AUTHORIZATION_CLASS)
                        || e.getErrorCode() == SQL_SERVER_LOGIN_FAILED && state(e).startsWith("S")) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * {@link ErrorCode#CONNECTION_FAILED} when {@code e} is a connection or login failure, else null so the caller
     * maps it by its own rules.
     */
    public static TidemarkException connectionFailure(SQLException e, SqlContext context) {
        if (isAuthenticationFailure(e)) {
            return authenticationFailed(e, context);
        }
        if (isConnectionFailure(e)) {
            return connectionFailed(e, context);
        }
        return null;
    }

    /** The database could not be reached. */
    public static TidemarkException connectionFailed(SQLException e, SqlContext context) {
        return context.error(ErrorCode.CONNECTION_FAILED, "could not connect to " + target(e, context) + " while "
                + context.doing() + ": " + detail(e) + ". Check the JDBC URL, the credentials and the network (is the"
                + " server running, and reachable from this host on that port?).", e);
    }

    /** The server was reached and refused the login. */
    public static TidemarkException authenticationFailed(SQLException e, SqlContext context) {
        return context.error(ErrorCode.CONNECTION_FAILED, "could not log in to " + target(e, context) + " while "
                + context.doing() + ": " + detail(e) + ". Check the credentials (user name and password) of the"
                + " data source, and that the login may connect to that database.", e);
    }

    /**
     * The shared mapping: connection and login failures, then a missing privilege (with {@code permissionRemedy},
     * the sentence that says what to grant), then {@code otherwise} with the database's message.
     */
    public static TidemarkException map(SQLException e, SqlContext context, String permissionRemedy,
                                        ErrorCode otherwise) {
        TidemarkException connection = connectionFailure(e, context);
        if (connection != null) {
            return connection;
        }
        if (INSUFFICIENT_PRIVILEGE.equals(state(e))) {
            return context.error(ErrorCode.PERMISSION_DENIED, context.doing() + " failed: " + detail(e) + ". "
                    + permissionRemedy, e);
        }
        return context.error(otherwise, context.doing() + " failed: " + detail(e), e);
    }

    /** The target the context names, with the host and port the driver reported when the context has no URL. */
    private static String target(SQLException e, SqlContext context) {
        String hostPort = hostPort(e);
        if (hostPort == null || context.target().contains(hostPort)) {
            return context.target();
        }
        return context.target() + " (" + hostPort + ")";
    }

    private static String hostPort(Throwable failure) {
        for (Throwable t = failure; t != null; t = next(t)) {
            String message = t.getMessage();
            if (message == null) {
                continue;
            }
            Matcher pg = PG_HOST_PORT.matcher(message);
            if (pg.find()) {
                return pg.group(1);
            }
            Matcher mssql = MSSQL_HOST_PORT.matcher(message);
            if (mssql.find()) {
                return mssql.group(1) + ":" + mssql.group(2);
            }
        }
        return null;
    }

    /** The next link: the chained SQLException first (SQL Server reports several), then the cause. */
    private static Throwable next(Throwable t) {
        if (t instanceof SQLException && ((SQLException) t).getNextException() != null) {
            return ((SQLException) t).getNextException();
        }
        return t.getCause() == t ? null : t.getCause();
    }
}
