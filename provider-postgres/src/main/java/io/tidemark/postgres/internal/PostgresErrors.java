package io.tidemark.postgres.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.internal.jdbc.ConnectionLoss;
import io.tidemark.sync.spi.CallContext;

import io.tidemark.sync.internal.jdbc.JdbcTarget;
import io.tidemark.sync.internal.jdbc.SqlContext;
import io.tidemark.sync.internal.jdbc.SqlErrors;

import javax.sql.DataSource;
import java.sql.SQLException;

/** Turns what PostgreSQL says into errors that tell the user what to fix. */
public final class PostgresErrors {

    private PostgresErrors() {
    }

    /**
     * Maps a failure of calling {@code object}'s change function on {@code dataSource}: a connection or login
     * failure by the shared rules ({@link SqlErrors}), then what PostgreSQL says about the function.
     */
    public static TidemarkException map(SQLException e, DataSource dataSource, TrackedObject object,
                                        CallContext context, int timeoutSeconds) {
        String function = object.procedure();
        TidemarkException connection = SqlErrors.connectionFailure(e,
                SqlContext.of(dataSource, object.name(), "calling " + function));
        if (connection != null) {
            return connection;
        }
        String detail = SqlErrors.detail(e);
        switch (SqlErrors.state(e)) {
            case "42883": // undefined_function
                return error(ErrorCode.PROCEDURE_NOT_FOUND, object, "function " + function + "(json) does not exist: "
                        + detail + ". Create a FUNCTION taking one json argument and returning json, jsonb or"
                        + " text, and check the schema and the role's search_path.", e);
            case "42809": // wrong_object_type: SELECT on a procedure
                return error(ErrorCode.PROCEDURE_SIGNATURE, object, function + " cannot be called as a function: "
                        + detail + ". A PostgreSQL PROCEDURE cannot return a value; write it as a FUNCTION"
                        + " ... RETURNS json.", e);
            case "42501": // insufficient_privilege
                return error(ErrorCode.PERMISSION_DENIED, object, "permission denied calling " + function + ": "
                        + detail + ". Grant EXECUTE on the function, and SELECT on what it reads, to the role"
                        + " Tidemark connects as (or make the function SECURITY DEFINER).", e);
            case "57014": // query_canceled
                if (context.isCancelled()) {
                    return error(ErrorCode.ENGINE_STATE, object, "the call to " + function + " was cancelled"
                            + " because the engine is closing; the watermark stays.", e);
                }
                return error(ErrorCode.PROCEDURE_TIMEOUT, object, "the call to " + function
                        + " ran longer than the command timeout of " + timeoutSeconds + " s and was cancelled."
                        + " Make it faster (index the outbox on its version), ask for fewer rows with maxRows,"
                        + " or raise the timeout.", e);
            default:
                if (ConnectionLoss.isConnectionLoss(e)) {
                    // What the shared rules leave to the caller: a server shutting down, crashed or still starting
                    // (57P01-57P03), a connection reset under the call. The engine retries as soon as it answers.
                    return error(ErrorCode.CONNECTION_FAILED, object, "could not reach " + JdbcTarget.describe(dataSource)
                            + " to call " + function + ": " + ConnectionLoss.describe(e) + ". Check the data"
                            + " source's URL, the credentials and the network; the engine retries as soon as the"
                            + " database answers.", e);
                }
                return error(ErrorCode.PROCEDURE_FAILED, object, "calling " + function + " failed: " + detail, e);
        }
    }

    private static TidemarkException error(ErrorCode code, TrackedObject object, String message, SQLException e) {
        return TidemarkException.forObject(code, object.name(), message, e);
    }
}
