package io.tidemark.sqlserver.internal;

import com.microsoft.sqlserver.jdbc.SQLServerConnection;
import com.microsoft.sqlserver.jdbc.SQLServerError;
import com.microsoft.sqlserver.jdbc.SQLServerException;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * Builds {@link SQLServerException}s the way mssql-jdbc builds them, for error-mapping tests that run without a
 * server. The constructors the driver uses are package-private (and its jar is signed, so nothing can be added to
 * its package), hence reflection:
 * <ul>
 *   <li>{@link #server}: an error SQL Server sent. The driver fills a {@link SQLServerError} from the TDS ERROR
 *       token (number, state, severity, message, server, procedure, line) and creates the exception with
 *       {@code SQLServerException(Object, String, String, SQLServerError, boolean)}, its SQLState coming from
 *       {@code generateStateCode}. The same happens here, with the error's fields set directly.</li>
 *   <li>{@link #driver}: an error the driver raised itself (a timeout, a cancel, a broken connection), created with
 *       {@code SQLServerException(String, String, int, Throwable)} as the driver does.</li>
 * </ul>
 */
public final class ServerErrors {

    private ServerErrors() {
    }

    /** An error raised by the server, outside any procedure. */
    public static SQLServerException server(int number, int state, int severity, String message) {
        return server(number, state, severity, message, "", 1);
    }

    /** An error raised by the server inside {@code procedure} at {@code line}. */
    public static SQLServerException server(int number, int state, int severity, String message, String procedure,
                                            long line) {
        try {
            Constructor<SQLServerError> newError = SQLServerError.class.getDeclaredConstructor();
            newError.setAccessible(true);
            SQLServerError error = newError.newInstance();
            set(error, "errorNumber", number);
            set(error, "errorState", state);
            set(error, "errorSeverity", severity);
            set(error, "errorMessage", message);
            set(error, "serverName", "sqlserver-test");
            set(error, "procName", procedure);
            set(error, "lineNumber", line);
            Method stateCode = SQLServerException.class.getDeclaredMethod("generateStateCode",
                    SQLServerConnection.class, int.class, Integer.class);
            stateCode.setAccessible(true);
            String sqlState = (String) stateCode.invoke(null, null, number, state);
            Constructor<SQLServerException> newException = SQLServerException.class.getDeclaredConstructor(
                    Object.class, String.class, String.class, SQLServerError.class, boolean.class);
            newException.setAccessible(true);
            return newException.newInstance(null, message, sqlState, error, false);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("mssql-jdbc changed how it builds server errors", e);
        }
    }

    /** An error raised by the driver itself. */
    public static SQLServerException driver(String message, String sqlState, int vendorCode) {
        try {
            Constructor<SQLServerException> c = SQLServerException.class.getDeclaredConstructor(
                    String.class, String.class, int.class, Throwable.class);
            c.setAccessible(true);
            return c.newInstance(message, sqlState, vendorCode, null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("mssql-jdbc changed how it builds driver errors", e);
        }
    }

    private static void set(SQLServerError error, String field, Object value) throws ReflectiveOperationException {
        Field f = SQLServerError.class.getDeclaredField(field);
        f.setAccessible(true);
        f.set(error, value);
    }
}
