package io.tidemark.sqlserver.internal;

import com.microsoft.sqlserver.jdbc.ISQLServerStatement;
import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.jdbc.ConnectionWatchdog;
import io.tidemark.sync.internal.jdbc.Transactions;
import io.tidemark.sync.internal.sql.SqlTemplate;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sync.spi.ResponsePayload;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;

/**
 * One call of a change procedure: {@code SET NOCOUNT ON; EXEC [schema].[procedure] @Json = ?}, the request bound
 * as {@code NVARCHAR(MAX)}, its document spooled, the connection given back before anything is delivered.
 *
 * <p>Why each detail:
 * <ul>
 *   <li>The request is bound with {@link Types#LONGNVARCHAR}, which mssql-jdbc declares as {@code nvarchar(max)}
 *       whatever the string's length and whatever {@code sendStringParametersAsUnicode} says: the parameter
 *       matches the procedure's {@code @Json NVARCHAR(MAX)} exactly, and the plan is the same for every call.</li>
 *   <li>{@code SET NOCOUNT ON} keeps "rows affected" counts out of the results. The batch is sent with a
 *       parameter, so the driver runs it through {@code sp_prepexec}/{@code sp_executesql}, whose SET options
 *       end with the call: the pooled connection keeps its own settings. Nothing else is set.</li>
 *   <li>Auto-commit is on for the call: the procedure runs its own snapshot transaction, and one opened around it
 *       (auto-commit off) would make SQL Server refuse the snapshot read (error 3951). The connection's previous
 *       mode is restored.</li>
 *   <li>The connection is watched ({@link ConnectionWatchdog}): a server that stops answering altogether (a
 *       partition, a failover, a half-open socket) does not answer the timeout's attention signal either, so once
 *       the command timeout plus a grace period has passed the connection is abandoned and the call fails as
 *       {@link ErrorCode#CONNECTION_FAILED}, which the engine retries as soon as the database answers.</li>
 *   <li>Adaptive response buffering makes the driver stream rows (and large values) from the connection instead
 *       of buffering the whole response; with {@link ResultSetChunkSource} memory stays bounded.</li>
 * </ul>
 */
public final class ProcedureCall {

    private final DataSource dataSource;
    private final int timeoutSeconds;

    public ProcedureCall(DataSource dataSource, int timeoutSeconds) {
        this.dataSource = dataSource;
        this.timeoutSeconds = timeoutSeconds;
    }

    /** The batch sent for a procedure whose bracket-quoted name is {@code quotedProcedure}. */
    public static String sql(String quotedProcedure) {
        return SqlTemplate.of("SET NOCOUNT ON; EXEC {{procedure}} @Json = ?")
                .with("procedure", quotedProcedure).render();
    }

    public ResponsePayload invoke(String sql, TrackedObject object, ChangeRequest request, CallContext context) {
        try (Connection connection = dataSource.getConnection()) {
            return Transactions.autoCommitted(connection, c -> {
                try {
                    return call(c, sql, object, request, context);
                } catch (IOException e) {
                    throw new UncheckedIOException(e); // unwrapped below, with the driver's failures
                }
            });
        } catch (SQLException e) {
            throw SqlServerErrors.map(e, dataSource, object, context.isCancelled(), timeoutSeconds);
        } catch (UncheckedIOException wrapped) {
            IOException e = wrapped.getCause();
            SQLException driverFailure = findSqlException(e);
            if (driverFailure != null) {
                throw SqlServerErrors.map(driverFailure, dataSource, object, context.isCancelled(), timeoutSeconds);
            }
            throw TidemarkException.forObject(ErrorCode.IO_FAILED, object.name(), "could not spool the response of "
                    + object.procedure() + " (memory, then a temporary file in java.io.tmpdir): " + e + ". Check the"
                    + " free space and the permissions of " + System.getProperty("java.io.tmpdir") + ".", e);
        }
    }

    @SuppressWarnings("try") // the registration is held for the call's duration, never read
    private ResponsePayload call(Connection connection, String sql, TrackedObject object, ChangeRequest request,
                                 CallContext context) throws SQLException, IOException {
        try (PreparedStatement statement = connection.prepareStatement(sql);
             CallContext.Registration ignored = context.onCancel(() -> cancelQuietly(statement));
             ConnectionWatchdog.Guard watch = ConnectionWatchdog.watch(connection, Duration.ofSeconds(timeoutSeconds))) {
            statement.setQueryTimeout(timeoutSeconds);
            streamResponses(statement);
            statement.setObject(1, request.toJson(), Types.LONGNVARCHAR);
            try {
                boolean isResultSet = statement.execute();
                return new ResponseReader(object.name(), object.procedure())
                        .read(new JdbcCallResults(statement, isResultSet));
            } catch (SQLException | IOException | RuntimeException e) {
                if (watch.fired()) {
                    throw abandoned(object, e);
                }
                throw e;
            }
        }
    }

    /** The call failed because the watchdog abandoned a connection that no longer answered. */
    private TidemarkException abandoned(TrackedObject object, Exception cause) {
        return TidemarkException.forObject(ErrorCode.CONNECTION_FAILED, object.name(), "the database stopped"
                + " answering: the call to " + object.procedure() + " got no reply within the command timeout of "
                + timeoutSeconds + " s plus " + ConnectionWatchdog.GRACE.toSeconds() + " s (not even to its"
                + " cancel), so the connection was abandoned. A network partition, a failover or a half-open"
                + " connection does this; the engine retries as soon as the database answers. Setting the driver's"
                + " socketTimeout bounds such waits too.", cause);
    }

    /** Asks for adaptive buffering even when the connection URL says {@code responseBuffering=full}. */
    static void streamResponses(Statement statement) throws SQLException {
        if (statement.isWrapperFor(ISQLServerStatement.class)) {
            statement.unwrap(ISQLServerStatement.class).setResponseBuffering("adaptive");
        }
    }

    static SQLException findSqlException(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException) {
                return (SQLException) t;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    static void cancelQuietly(Statement statement) {
        try {
            statement.cancel();
        } catch (SQLException ignored) {
            // The statement has finished or the connection is gone: nothing is left to cancel.
        }
    }
}
