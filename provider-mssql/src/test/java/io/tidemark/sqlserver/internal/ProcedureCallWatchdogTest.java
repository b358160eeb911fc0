package io.tidemark.sqlserver.internal;

import io.tidemark.sync.ErrorCode;
import io.tidemark.sync.TidemarkException;
import io.tidemark.sync.TrackedObject;
import io.tidemark.sync.spi.CallContext;
import io.tidemark.sync.spi.ChangeRequest;
import io.tidemark.sqlserver.TestDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A SQL Server connection that stops answering in the middle of a call (a partition: not even the query timeout's
 * attention signal gets an answer) is abandoned once the command timeout plus the watchdog's grace has passed, and
 * the call fails as {@link ErrorCode#CONNECTION_FAILED}, which the engine retries as soon as the database answers.
 *
 * <p>No server is needed to prove the wiring: the connection here is a stand-in whose {@code execute} blocks until
 * the connection is aborted, which is what mssql-jdbc does on a socket that gets no reply. The same situation
 * against a real server behind a blackholing proxy is covered for PostgreSQL by {@code BlackholeTest}.
 */
class ProcedureCallWatchdogTest {

    private static final TrackedObject ITEMS = TrackedObject.of("Items", "dbo.get_item_changes");

    @Test
    @Timeout(30) // without the watchdog the call waits for ever
    void a_call_on_a_connection_that_stopped_answering_is_abandoned_and_reported_as_a_connection_failure() {
        SilentConnection silent = new SilentConnection();
        ProcedureCall call = new ProcedureCall(silent.dataSource(), 1);

        long started = System.nanoTime();
        TidemarkException e = catchThrowableOfType(TidemarkException.class, () -> call.invoke(
                ProcedureCall.sql("[dbo].[get_item_changes]"), ITEMS, ChangeRequest.sync(1), CallContext.none()));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        assertThat(silent.aborted.getCount()).as("the connection was aborted").isZero();
        assertThat(e.code()).isEqualTo(ErrorCode.CONNECTION_FAILED);
        assertThat(e.getMessage()).startsWith("[Items] the database stopped answering: the call to"
                + " dbo.get_item_changes got no reply within the command timeout of 1 s plus 2 s");
        // 1 s timeout + 2 s grace, with room for a loaded machine; without the watchdog it would block for ever.
        assertThat(tookMillis).isBetween(2_900L, 15_000L);
    }

    /** A connection whose statement never answers until the connection is aborted. */
    private static final class SilentConnection {
        final CountDownLatch aborted = new CountDownLatch(1);

        DataSource dataSource() {
            Connection connection = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[]{Connection.class}, (proxy, method, args) -> switch (method.getName()) {
                        case "prepareStatement" -> statement();
                        case "getAutoCommit", "isWrapperFor" -> method.getName().equals("getAutoCommit");
                        case "abort" -> {
                            aborted.countDown();
                            yield null;
                        }
                        case "close", "setAutoCommit" -> null;
                        default -> throw new SQLFeatureNotSupportedException(method.getName());
                    });
            return new TestDataSource() {
                @Override
                public Connection getConnection() {
                    return connection;
                }
            };
        }

        private PreparedStatement statement() {
            return (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[]{PreparedStatement.class}, (proxy, method, args) -> switch (method.getName()) {
                        case "execute" -> {
                            // What a socket read with no reply does: wait; the abort closes the socket.
                            aborted.await();
                            throw new SQLException("The connection is closed.", "08S01");
                        }
                        case "isWrapperFor" -> false;
                        case "setQueryTimeout", "setObject", "close", "cancel" -> null;
                        default -> throw new SQLFeatureNotSupportedException(method.getName());
                    });
        }
    }
}
